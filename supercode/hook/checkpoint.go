package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
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
// (supercode/undo), with the named data the project policy lists; the
// checkpoint keeps what the run's previous call changed. A call that
// deleted or overwrote more than the policy's threshold is recorded on the
// run for the supervisor (a KindLoss event, with the command that takes it
// back) and reported to laserbrain run, which under --halt-on-loss stops
// the agent here: the answer is then a refusal (stop). A checkpoint that cannot be taken costs
// the call nothing but the undo point: it is logged.
func (h *Handler) checkpoint(ctx context.Context, e *event) (client.Reply, bool, error) {
	if !e.Tool.MayWrite() {
		return client.Reply{}, false, nil
	}
	c := h.caller(e)
	run, ok := h.undoRun(c)
	if !ok {
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
		Tool: e.Tool.Name, What: callText(e.Tool), Include: pol.Undo.Include, Budgeted: true})
	if errors.Is(err, undo.ErrNoRepo) || errors.Is(err, undo.ErrSlow) {
		return client.Reply{}, false, nil
	}
	if err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: no undo checkpoint before %s: %v", PreToolUse, e.Tool.Name, err))
		return client.Reply{}, false, nil
	}
	if got.Again || got.Record.Changed == nil {
		return client.Reply{}, false, nil
	}
	loss, lost := undo.SettingsOf(pol.Undo).Loss(*got.Record.Changed)
	if !lost {
		return client.Reply{}, false, nil
	}
	if err := RecordLoss(ctx, h.Tracker, c, run, got.Before, *got.Record.Changed, loss); err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: the loss of call %s could not be recorded on the run: %v", PreToolUse, undo.CallName(got.Before), err))
	}
	if reason := h.Tracker.ReportLoss(fmt.Sprintf("call %s (%s) %s", undo.CallName(got.Before), got.Before.Tool, loss), e.ToolUseID); reason != "" {
		return deny(reason), true, nil
	}
	return client.Reply{}, false, nil
}

// undoRun is the run the caller's checkpoints are kept under: laserbrain
// run's, else the session's (hooks alone); false when it has none or undo
// is off.
func (h *Handler) undoRun(c agentrun.Caller) (string, bool) {
	run := c.Run
	if run == "" {
		run = c.Session
	}
	return run, run != "" && fleet.ValidateRunID(run) == nil && !undo.Off(h.getenv)
}

// callText is what a checkpoint says the call does: its command lines, or
// the files it writes.
func callText(t *client.Tool) string {
	if lines := t.Lines(); len(lines) > 0 {
		return strings.Join(lines, "\n")
	}
	return strings.Join(t.Files, " ")
}

// RecordLoss records on the run, as a KindLoss event for the supervisor,
// that the call a checkpoint stood before deleted or overwrote more than
// the policy's threshold (loss says what), and how to undo it. The run is
// opened when the caller has none yet.
func RecordLoss(ctx context.Context, tr *agentrun.Tracker, c agentrun.Caller, run string, before undo.Record, ch undo.Change, loss string) error {
	r, found, err := tr.Find(ctx, c)
	if err != nil {
		return err
	}
	if !found {
		if r, err = tr.Open(ctx, c); err != nil {
			return err
		}
	}
	res := fleet.LossResult{Call: undo.CallName(before), Tool: before.Tool, What: before.What, Summary: ch.Summary(),
		Added: ch.Files.Added, Modified: ch.Files.Modified, Deleted: ch.Files.Deleted, LostBytes: ch.LostBytes,
		Loss: loss, Undo: undo.Command(run, before)}
	for _, m := range ch.Refs {
		res.Refs = append(res.Refs, m.Text())
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return err
	}
	st, err := tr.Fleet()
	if err != nil {
		return err
	}
	_, err = st.AppendEvent(ctx, r.ID, fleet.RunEvent{ID: fmt.Sprintf("loss:%s:%d", run, before.Seq), At: time.Now().UTC(),
		Kind: fleet.KindLoss, Name: before.Tool, OK: laserbrain.OKFalse, Result: raw,
		Text: fmt.Sprintf("call %s %s — undo: %s", res.Call, loss, res.Undo)})
	return err
}

// sessionCheckpoint takes the checkpoint at a session's start or end for
// its run (hooks installed, no laserbrain run: a run laserbrain run made
// has its own), so undo has the state before the first call and the state
// the session left. Best effort, within the hook's deadline: logged.
func (h *Handler) sessionCheckpoint(ctx context.Context, e *event, kind undo.Kind) {
	c := h.caller(e)
	if c.Run != "" || c.Session == "" || fleet.ValidateRunID(c.Session) != nil || undo.Off(h.getenv) {
		return
	}
	pol, err := h.policy(e)
	if err != nil {
		return
	}
	st, err := undo.Default()
	if err != nil {
		return
	}
	dir := e.Cwd
	if dir == "" {
		dir = c.Dir
	}
	_, err = st.Capture(ctx, dir, undo.Input{Run: c.Session, Kind: kind, Include: pol.Undo.Include, Budgeted: true})
	if err != nil && !errors.Is(err, undo.ErrNoRepo) && !errors.Is(err, undo.ErrSlow) {
		h.log(fmt.Sprintf("laserbrain hook: no undo checkpoint at the session's %s: %v", kind, err))
	}
}
