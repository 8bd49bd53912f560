package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/undo"
)

// CheckpointBudget bounds a pre-tool-use's checkpoint, so the gate's own
// work keeps its time: past it the call goes on without one (logged). A
// work tree's first checkpoint, which copies it whole, is taken by
// laserbrain run before the agent starts.
const CheckpointBudget = 2 * time.Second

// checkpoint is pre-tool-use's step before the gate decides, whatever it
// decides: before a call that may write (anything but a read or our own
// tools), the caller's work tree is checkpointed for its run
// (supercode/undo), with the named data the project policy lists. What the
// run's previous call changed comes out of it and is recorded on the run
// (a KindChange event, with the command that takes it back); a call that
// deleted or overwrote more than the policy's threshold is reported to
// laserbrain run, which under --halt-on-loss stops the agent here: the
// answer is then a refusal (stop). A checkpoint that cannot be taken costs
// the call nothing but the undo point: it is logged.
func (h *Handler) checkpoint(ctx context.Context, e client.Payload) (client.Reply, bool, error) {
	getenv := os.Getenv
	if h.Tracker.Getenv != nil {
		getenv = h.Tracker.Getenv
	}
	if !e.Tool.MayWrite() || undo.Off(getenv) {
		return client.Reply{}, false, nil
	}
	c := h.caller(e)
	run := c.Run
	if run == "" {
		run = c.Session
	}
	if run == "" || fleet.ValidateRunID(run) != nil {
		return client.Reply{}, false, nil
	}
	pol, err := h.policy(e)
	if err != nil {
		return client.Reply{}, false, err // unchecked: laserbrain checks it, and checkpoints
	}
	st, err := undo.Default()
	if err != nil {
		return client.Reply{}, false, nil
	}
	dir := e.Cwd
	if dir == "" {
		dir = c.Dir
	}
	cctx, cancel := context.WithTimeout(ctx, CheckpointBudget)
	defer cancel()
	got, err := st.Capture(cctx, dir, undo.Input{Run: run, Kind: undo.KindCall, Call: e.ToolUseID,
		Tool: e.Tool.Name, What: callText(e.Tool), Include: pol.Undo.Include})
	if errors.Is(err, undo.ErrNoRepo) {
		return client.Reply{}, false, nil
	}
	if err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: no undo checkpoint before %s: %v", PreToolUse, e.Tool.Name, err))
		return client.Reply{}, false, nil
	}
	if got.Again || got.BeforeRun != run || got.Change.Empty() {
		return client.Reply{}, false, nil
	}
	loss, lost := undo.SettingsOf(pol.Undo).Loss(got.Change)
	h.recordChange(ctx, c, run, got.Before, got.Change, loss)
	if !lost {
		return client.Reply{}, false, nil
	}
	if reason := h.Tracker.ReportLoss(fmt.Sprintf("call %s (%s) %s", ChangeCall(got.Before), got.Before.Tool, loss), e.ToolUseID); reason != "" {
		return deny(reason), true, nil
	}
	return client.Reply{}, false, nil
}

// callText is what a checkpoint says the call does: its command lines, or
// the files it writes.
func callText(t *client.Tool) string {
	if lines := t.Lines(); len(lines) > 0 {
		return strings.Join(lines, "\n")
	}
	return strings.Join(t.Files, " ")
}

// ChangeCall names the call a checkpoint stands before, as undo --to takes
// it: its id, else its place in the run's list.
func ChangeCall(r undo.Record) string {
	if r.Call != "" {
		return r.Call
	}
	return fmt.Sprintf("#%d", r.Seq)
}

// UndoCommand is the command that goes back to before a checkpoint's call.
func UndoCommand(run string, r undo.Record) string {
	return fmt.Sprintf("laserbrain undo --run %s --to %s", run, ChangeCall(r))
}

// recordChange records on the run what the call a checkpoint stood
// before changed (loss: what it lost past the threshold), best effort.
func (h *Handler) recordChange(ctx context.Context, c agentrun.Caller, run string, before undo.Record, ch undo.Change, loss string) {
	if err := RecordChange(ctx, h.Tracker, c, run, before, ch, loss); err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: what call %s changed could not be recorded on the run: %v", PreToolUse, ChangeCall(before), err))
	}
}

// RecordChange records on the run, as a KindChange event, what the call a
// checkpoint stood before changed and how to undo it; loss says what it
// lost past the policy's threshold ("" within it). The run is opened when
// the caller has none yet.
func RecordChange(ctx context.Context, sup *agentrun.Tracker, c agentrun.Caller, run string, before undo.Record, ch undo.Change, loss string) error {
	r, found, err := sup.Find(ctx, c)
	if err != nil {
		return err
	}
	if !found {
		if r, err = sup.Open(ctx, c); err != nil {
			return err
		}
	}
	res := fleet.ChangeResult{Call: ChangeCall(before), Tool: before.Tool, What: before.What, Summary: ch.Summary(),
		Added: len(ch.Added), Modified: len(ch.Modified), Deleted: len(ch.Deleted), LostBytes: ch.LostBytes,
		Loss: loss, Undo: UndoCommand(run, before)}
	for _, m := range ch.Refs {
		res.Refs = append(res.Refs, m.Text())
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return err
	}
	st, err := sup.Fleet()
	if err != nil {
		return err
	}
	ok := loss == ""
	text := res.Summary + " — undo: " + res.Undo
	if !ok {
		text = "loss: " + loss + "; " + text
	}
	_, err = st.AppendEvent(ctx, r.ID, fleet.RunEvent{ID: fmt.Sprintf("change:%s:%d", run, before.Seq), At: time.Now().UTC(),
		Kind: fleet.KindChange, Name: before.Tool, OK: &ok, Result: raw, Text: text})
	return err
}
