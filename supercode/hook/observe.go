package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// maxResult bounds the tool result kept on an event.
const maxResult = 16 << 10

// postToolUse records a completed call (PostToolUse: it worked unless it
// was interrupted; PostToolUseFailure: it failed) on the caller's run.
func (h *Handler) postToolUse(ctx context.Context, ev Event, p Payload) error {
	if p.ToolName == nil {
		return fmt.Errorf(`the event has no "tool_name"`)
	}
	name := *p.ToolName
	if agentrun.SelfTool(name) {
		return nil
	}
	ok := ev == PostToolUse
	result := p.ToolResponse
	if ev == PostToolUse && interrupted(p.ToolResponse) {
		ok = false
	}
	text := describeCall(name, p.ToolInput)
	if ev == PostToolUseFailure {
		b, _ := json.Marshal(map[string]any{"error": p.Error, "is_interrupt": p.IsInterrupt})
		result = b
		if p.Error != "" {
			text += " — " + p.Error
		}
	}
	if len(result) > maxResult {
		result = nil // kept small; the transcript has it whole
	}
	id := h.eventID("tool")
	if p.ToolUseID != "" {
		id = "tool:" + p.ToolUseID
	}
	var args any
	if len(p.ToolInput) > 0 {
		d := json.NewDecoder(bytes.NewReader(p.ToolInput))
		d.UseNumber()
		_ = d.Decode(&args)
	}
	fe := fleet.Event{ID: id, At: h.now(), Kind: fleet.KindTool, Name: name, OK: &ok, Result: result, Text: text, Session: p.SessionID}
	// The observed tool event: what machine evidence counts (tool, args, ok).
	obs := laserbrain.ToolCall(name, args, ok)
	r, err := h.Sup.Open(ctx, h.caller(p))
	counted := false
	if err == nil {
		_, counted, err = h.Sup.Observe(ctx, r.ID, fe, obs)
	}
	if isUnreachable(err) && !counted && !h.Sup.Replaying {
		// The call goes to the queue (Handle); the machine's evidence is
		// on this machine and counts it now, not at the replay.
		if p, perr := localstore.DefaultPaths(); perr == nil {
			if rerr := localstore.OpenEvidence(p.Config).Record(obs); rerr != nil {
				h.log(fmt.Sprintf("laserbrain hook %s: evidence not recorded: %v", ev, rerr))
			}
		}
	}
	return err
}

func interrupted(resp json.RawMessage) bool {
	var r struct {
		Interrupted bool `json:"interrupted"`
	}
	return json.Unmarshal(resp, &r) == nil && r.Interrupted
}

// describeCall is a one-line account of a call for the run's event list.
func describeCall(name string, input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return name
	}
	for _, k := range []string{"command", "file_path", "notebook_path", "path", "url", "pattern", "query"} {
		if s, ok := in[k].(string); ok {
			if len(s) > 300 {
				s = s[:300] + "…"
			}
			return s
		}
	}
	return name
}

// userPromptSubmit: a person spoke, so the next check is a user turn (a new
// goal is then a new instruction, not drift).
func (h *Handler) userPromptSubmit(ctx context.Context, p Payload) error {
	r, err := h.Sup.Open(ctx, h.caller(p))
	if err != nil {
		return err
	}
	st, err := h.Sup.Fleet()
	if err != nil {
		return err
	}
	if _, err := st.UpdateRun(ctx, r.ID, func(x *fleet.Run) error { x.UserTurn = true; return nil }); err != nil {
		return err
	}
	text := p.Prompt
	if len(text) > 1000 {
		text = text[:1000] + "…"
	}
	_, err = st.AppendEvent(ctx, r.ID, fleet.Event{ID: h.eventID("prompt"), At: h.now(), Kind: fleet.KindPrompt, Name: "user-prompt-submit", Text: text, Session: p.SessionID})
	return err
}

// stop judges the run. When its last check drifted, the stop is blocked
// once with the agent's own advice; a Stop that follows a block
// (stop_hook_active) always goes through.
func (h *Handler) stop(ctx context.Context, p Payload) (Answer, error) {
	c := h.caller(p)
	r, ok, err := h.Sup.Find(ctx, c)
	if err != nil || !ok {
		return Answer{}, err
	}
	j, err := h.Sup.Judge(ctx, r.ID)
	if err != nil {
		return Answer{}, err
	}
	st, err := h.Sup.Fleet()
	if err != nil {
		return Answer{}, err
	}
	block := r.Last != nil && r.Last.Drifting && !p.StopHookActive
	yes, no := true, false
	ev := fleet.Event{ID: h.eventID("stop"), At: h.now(), Kind: fleet.KindStop, Name: "stop", OK: &yes, Session: p.SessionID,
		Text: "judgment " + j.Verdict}
	var ans Answer
	if block {
		reason := fmt.Sprintf("laserbrain: you are stopping while your run is drifting (%s, Φ=%.2f, ground %q). %s Whole-run judgment: %s — %s",
			r.Last.Reason, r.Last.Phi, r.Last.Ground, r.Last.Advice, j.Verdict, j.Counsel)
		b, err := json.Marshal(map[string]string{"decision": "block", "reason": reason})
		if err != nil {
			return Answer{}, err
		}
		ans.Stdout = string(b) + "\n"
		ev.OK, ev.Text = &no, "blocked: "+reason
		if _, err := st.UpdateRun(ctx, r.ID, func(x *fleet.Run) error { x.StopsBlocked++; return nil }); err != nil {
			return Answer{}, err
		}
	}
	_, err = st.AppendEvent(ctx, r.ID, ev)
	return ans, err
}

// sessionStart opens the run (or attaches the session to the run
// `laserbrain run` made) and records the start.
func (h *Handler) sessionStart(ctx context.Context, p Payload) error {
	r, err := h.Sup.Open(ctx, h.caller(p))
	if err != nil {
		return err
	}
	st, err := h.Sup.Fleet()
	if err != nil {
		return err
	}
	_, err = st.AppendEvent(ctx, r.ID, fleet.Event{ID: h.eventID("session-start"), At: h.now(), Kind: fleet.KindSession, Name: "session-start", Text: p.Source, Session: p.SessionID})
	return err
}

// sessionEnd records the end; a run the session opened by itself ends with
// it (one `laserbrain run` made ends when its command exits).
func (h *Handler) sessionEnd(ctx context.Context, p Payload) error {
	r, ok, err := h.Sup.Find(ctx, h.caller(p))
	if err != nil || !ok {
		return err
	}
	st, err := h.Sup.Fleet()
	if err != nil {
		return err
	}
	if len(r.Command) == 0 && !r.IsEnded() {
		if _, err := st.UpdateRun(ctx, r.ID, func(x *fleet.Run) error { x.Ended = h.now(); return nil }); err != nil {
			return err
		}
	}
	_, err = st.AppendEvent(ctx, r.ID, fleet.Event{ID: h.eventID("session-end"), At: h.now(), Kind: fleet.KindSession, Name: "session-end", Text: p.Reason, Session: p.SessionID})
	return err
}

// laserbrainHome is where laserbrain keeps its own state; agents may not
// write there.
func laserbrainHome() string {
	p, err := localstore.DefaultPaths()
	if err != nil {
		return ""
	}
	return p.Home
}
