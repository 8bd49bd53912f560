package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/undo"
)

// maxResult bounds the tool result kept on an event.
const maxResult = 16 << 10

// postToolUse records a completed call (PostToolUse: it worked unless the
// client says it failed or was interrupted; PostToolUseFailure: it failed)
// on the caller's run, as the subagent that made it when one did.
//
// Every call, laserbrain's own included, is taken into the run's coverage
// record (a step; check_state a check, reset_task a new task), and a
// reminder due is the answer's context.
//
// First, the files the gate read for the call are compared with what it
// read (pin.go): a change is recorded and told.
func (h *Handler) postToolUse(ctx context.Context, e *event) (client.Reply, error) {
	if e.Tool == nil {
		return client.Reply{}, fmt.Errorf(`the event has no "tool_name"`)
	}
	if e.Refused {
		// laserbrain's refusal that ran in the call's place (Cline): the
		// refusal is already on the run, and this is no work of the agent.
		return client.Reply{}, nil
	}
	restoreCall(e.Tool)
	changed := h.unpin(e)
	a, err := h.observeCall(ctx, e)
	if len(changed) > 0 {
		sw := h.swapped(ctx, e, changed)
		a.Notice, a.Context, a.Log = joinText(sw.Notice, a.Notice), joinText(sw.Context, a.Context), joinText(sw.Log, a.Log)
	}
	return a, err
}

// observeCall records a completed call and takes it into coverage.
func (h *Handler) observeCall(ctx context.Context, e *event) (client.Reply, error) {
	t := e.Tool
	if t.Kind == client.KindOwn {
		// Reporting, not work: no evidence, not a tool call of the run;
		// kept once per call (two hook layers firing for one call count
		// it once) and counted for coverage.
		r, st, err := h.openWithStore(ctx, e)
		if err != nil {
			return client.Reply{}, err
		}
		id := h.eventID("own")
		if e.ToolUseID != "" {
			id = "own:" + e.ToolUseID
		}
		ok := e.Name == PostToolUse && (e.Response == nil || !e.Response.OK.Failed())
		added, err := st.AppendEvent(ctx, r.ID, fleet.RunEvent{ID: id, At: h.now(), Kind: fleet.KindOwn, Name: t.Name, OK: laserbrain.OKOf(ok),
			Session: e.Session, Subagent: subagentOf(e)})
		if err != nil || !added {
			return client.Reply{}, err
		}
		return h.coverageAnswer(ctx, e, r)
	}
	ok := e.Name == PostToolUse
	var result json.RawMessage
	if r := e.Response; r != nil {
		result = r.Raw
		ok = ok && !r.OK.Failed()
	}
	text := describeCall(t)
	if e.Name == PostToolUseFailure && e.Response != nil && e.Response.Text != "" {
		text += " — " + e.Response.Text
	}
	if len(result) > maxResult {
		result = nil // kept small; the transcript has it whole
	}
	id := h.eventID("tool")
	if e.ToolUseID != "" {
		id = "tool:" + e.ToolUseID
	}
	var args any
	if len(t.Input) > 0 {
		d := json.NewDecoder(bytes.NewReader(t.Input))
		d.UseNumber()
		_ = d.Decode(&args)
	}
	fe := fleet.RunEvent{ID: id, At: h.now(), Kind: fleet.KindTool, Name: t.Name, OK: laserbrain.OKOf(ok), Result: result, Text: text, Session: e.Session,
		Subagent: subagentOf(e)}
	// The observed tool event: what machine evidence counts (tool, args, ok).
	obs := laserbrain.ToolCall(t.Name, args, ok)
	r, err := h.open(ctx, e)
	counted, added := false, false
	if err == nil {
		added, counted, err = h.Tracker.Observe(ctx, r.ID, fe, obs)
	}
	if isUnreachable(err) && !counted && !h.Tracker.Replaying {
		// The call goes to the queue (Handle); the machine's evidence is
		// on this machine and counts it now, not at the replay.
		if p, perr := localstore.DefaultPaths(); perr == nil {
			if rerr := localstore.OpenEvidence(p.Config).Record(obs); rerr != nil {
				h.log(fmt.Sprintf("laserbrain hook %s: evidence not recorded: %v", e.Name, rerr))
			}
		}
	}
	if err != nil || !added {
		// A call already recorded (a second hook layer for one call, a
		// replay) was counted the first time.
		return client.Reply{}, err
	}
	return h.coverageAnswer(ctx, e, r)
}

// open opens the caller's run (registering it when there is none) and
// keeps it for the rest of the event.
func (h *Handler) open(ctx context.Context, e *event) (fleet.Run, error) {
	r, err := h.Tracker.Open(ctx, h.caller(e))
	if err == nil {
		e.keepRun(r, true)
	}
	return r, err
}

// openWithStore is open, and the fleet store the run is kept in.
func (h *Handler) openWithStore(ctx context.Context, e *event) (fleet.Run, fleet.Store, error) {
	r, err := h.open(ctx, e)
	if err != nil {
		return r, nil, err
	}
	st, err := h.Tracker.Fleet()
	return r, st, err
}

// coverageAnswer takes the event into the run's coverage record and says
// what coverage has for the model.
func (h *Handler) coverageAnswer(ctx context.Context, e *event, r fleet.Run) (client.Reply, error) {
	out, err := h.observeCoverage(ctx, e, r)
	if err != nil {
		return client.Reply{}, err
	}
	return client.Reply{Context: out.Context}, nil
}

// describeCall is a one-line account of a call for the run's event list.
func describeCall(t *client.Tool) string {
	if lines := t.Lines(); len(lines) > 0 {
		return text.Clip(strings.Join(lines, "; "), 300)
	}
	var in map[string]any
	if json.Unmarshal(t.Input, &in) != nil {
		return t.Name
	}
	for _, k := range []string{"command", "file_path", "filePath", "notebook_path", "path", "url", "pattern", "query"} {
		if s, ok := in[k].(string); ok {
			return text.Clip(s, 300)
		}
	}
	return t.Name
}

// userPromptSubmit: a person spoke, so the next check is a user turn (a new
// goal is then a new instruction, not drift). An empty prompt is nobody
// speaking: Qwen Code fires UserPromptSubmit with prompt "" after every
// tool round, which is not a user turn.
//
// The prompt may ground the run's coverage record (the first groundable
// one, when the run has no ground yet).
func (h *Handler) userPromptSubmit(ctx context.Context, e *event) (client.Reply, error) {
	if strings.TrimSpace(e.Prompt) == "" {
		return client.Reply{}, nil
	}
	r, st, err := h.openWithStore(ctx, e)
	if err != nil {
		return client.Reply{}, err
	}
	at := e.arrived // a replay's clock is its entry's time
	if at.IsZero() {
		at = h.now()
	}
	if r, err = st.UpdateRun(ctx, r.ID, func(x *fleet.Run) error {
		// A prompt recorded late — replayed from the queue, or written by
		// a hook the client stopped waiting for — marks no check that came
		// after it: that check has been answered already, without it.
		if x.Last != nil && x.Last.At.After(at) {
			return nil
		}
		x.UserTurn = true
		return nil
	}); err != nil {
		return client.Reply{}, err
	}
	text := e.Prompt
	if len(text) > 1000 {
		text = text[:1000] + "…"
	}
	if _, err = st.AppendEvent(ctx, r.ID, fleet.RunEvent{ID: h.eventID("prompt"), At: h.now(), Kind: fleet.KindPrompt, Name: "user-prompt-submit", Text: text, Session: e.Session}); err != nil {
		return client.Reply{}, err
	}
	return h.coverageAnswer(ctx, e, r)
}

// stop judges the run. When its last check drifted, the stop is blocked
// once with the agent's own advice; a Stop that follows a block
// (stop_hook_active) always goes through.
//
// A Stop that would end the run unmeasured (coverage's StopAfter unchecked
// steps) is held once too, for a last check.
func (h *Handler) stop(ctx context.Context, e *event) (client.Reply, error) {
	r, ok, err := h.run(ctx, e)
	if err != nil || !ok {
		return client.Reply{}, err
	}
	cov, err := h.observeCoverage(ctx, e, r)
	if err != nil {
		return client.Reply{}, err
	}
	j, err := h.Tracker.Judge(ctx, r.ID)
	if err != nil {
		return client.Reply{}, err
	}
	st, err := h.Tracker.Fleet()
	if err != nil {
		return client.Reply{}, err
	}
	block := r.Last != nil && r.Last.Drifting && !e.StopHookActive
	ev := fleet.RunEvent{ID: h.eventID("stop"), At: h.now(), Kind: fleet.KindStop, Name: "stop", OK: laserbrain.OKTrue, Session: e.Session,
		Text: "judgment " + j.Verdict}
	var ans client.Reply
	if block {
		reason := fmt.Sprintf("laserbrain: you are stopping while your run is drifting (%s, Φ=%.2f, ground %q). %s Whole-run judgment: %s — %s",
			r.Last.Reason, r.Last.Phi, r.Last.Ground, r.Last.Advice, j.Verdict, j.Counsel)
		ans = client.Reply{Block: true, Reason: reason}
		ev.OK, ev.Text = laserbrain.OKFalse, "blocked: "+reason
		if _, err := st.UpdateRun(ctx, r.ID, func(x *fleet.Run) error { x.StopsBlocked++; return nil }); err != nil {
			return client.Reply{}, err
		}
	}
	ans.Context = cov.Context
	if cov.Block != "" {
		ans.Block, ans.Reason = true, joinText(ans.Reason, cov.Block)
		ev.OK, ev.Text = laserbrain.OKFalse, "blocked: "+ans.Reason
	}
	_, err = st.AppendEvent(ctx, r.ID, ev)
	return ans, err
}

// sessionStart opens the run (or attaches the session to the run
// `laserbrain run` made) and records the start.
//
// The session is told, as its start's context, what laserbrain measures
// and how to spell it (the grammar's notation), its ground, and how
// coverage holds it.
func (h *Handler) sessionStart(ctx context.Context, e *event) (client.Reply, error) {
	r, st, err := h.openWithStore(ctx, e)
	if err != nil {
		return client.Reply{}, err
	}
	if _, err = st.AppendEvent(ctx, r.ID, fleet.RunEvent{ID: h.eventID("session-start"), At: h.now(), Kind: fleet.KindSession, Name: "session-start", Text: e.Source, Session: e.Session}); err != nil {
		return client.Reply{}, err
	}
	h.sessionCheckpoint(ctx, e, undo.KindStart)
	brief, err := h.sessionBrief(e, r)
	return client.Reply{Context: brief}, err
}

// sessionEnd records the end; a run the session opened by itself ends with
// it (one `laserbrain run` made ends when its command exits).
func (h *Handler) sessionEnd(ctx context.Context, e *event) error {
	r, ok, err := h.Tracker.Find(ctx, h.caller(e))
	if err != nil || !ok {
		return err
	}
	st, err := h.Tracker.Fleet()
	if err != nil {
		return err
	}
	if len(r.Command) == 0 && !r.IsEnded() {
		if _, err := st.UpdateRun(ctx, r.ID, func(x *fleet.Run) error { x.Ended = h.now(); return nil }); err != nil {
			return err
		}
	}
	_, err = st.AppendEvent(ctx, r.ID, fleet.RunEvent{ID: h.eventID("session-end"), At: h.now(), Kind: fleet.KindSession, Name: "session-end", Text: e.Reason, Session: e.Session})
	h.sessionCheckpoint(ctx, e, undo.KindEnd)
	return err
}

// notification records that the agent waits for a person, when the
// client's notification says so (a permission prompt, an idle prompt): the
// run waits until its next event (fleet.Waiting). A notification that
// waits for nobody (a login done) is not recorded.
func (h *Handler) notification(ctx context.Context, e *event) error {
	what, waits := e.Notice.WaitsFor()
	if !waits {
		return nil
	}
	r, err := h.Tracker.Open(ctx, h.caller(e))
	if err != nil {
		return err
	}
	st, err := h.Tracker.Fleet()
	if err != nil {
		return err
	}
	text := e.Notice.Message
	if text == "" {
		text = "waiting for " + what
	}
	if len(text) > 1000 {
		text = text[:1000] + "…"
	}
	kind := e.Notice.Type
	if kind == "" {
		kind = "notification"
	}
	_, err = st.AppendEvent(ctx, r.ID, fleet.RunEvent{ID: h.eventID("waiting"), At: h.now(), Kind: fleet.KindWaiting, Name: kind, Text: text,
		Session: e.Session, Subagent: subagentOf(e)})
	return err
}
