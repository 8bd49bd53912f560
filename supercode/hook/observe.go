package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// maxResult bounds the tool result kept on an event.
const maxResult = 16 << 10

// postToolUse records a completed call (PostToolUse: it worked unless the
// client says it failed or was interrupted; PostToolUseFailure: it failed)
// on the caller's run, as the subagent that made it when one did.
func (h *Handler) postToolUse(ctx context.Context, e client.Event) error {
	t := e.Tool
	if t == nil {
		return fmt.Errorf(`the event has no "tool_name"`)
	}
	if t.Kind == client.KindOwn || e.Refused {
		return nil
	}
	ok := e.Name == PostToolUse
	var result json.RawMessage
	if r := e.Response; r != nil {
		result = r.Raw
		if r.OK != nil {
			ok = ok && *r.OK
		}
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
	fe := fleet.Event{ID: id, At: h.now(), Kind: fleet.KindTool, Name: t.Name, OK: &ok, Result: result, Text: text, Session: e.Session,
		Subagent: subagentOf(e)}
	// The observed tool event: what machine evidence counts (tool, args, ok).
	obs := laserbrain.ToolCall(t.Name, args, ok)
	r, err := h.Sup.Open(ctx, h.caller(e))
	counted := false
	if err == nil {
		_, counted, err = h.Sup.Observe(ctx, r.ID, fe, obs)
	}
	if isUnreachable(err) && !counted && !h.Sup.Replaying {
		// The call goes to the queue (Handle); the machine's evidence is
		// on this machine and counts it now, not at the replay.
		if p, perr := localstore.DefaultPaths(); perr == nil {
			if rerr := localstore.OpenEvidence(p.Config).Record(obs); rerr != nil {
				h.log(fmt.Sprintf("laserbrain hook %s: evidence not recorded: %v", e.Name, rerr))
			}
		}
	}
	return err
}

// describeCall is a one-line account of a call for the run's event list.
func describeCall(t *client.Tool) string {
	if lines := t.Lines(); len(lines) > 0 {
		return clip(strings.Join(lines, "; "))
	}
	var in map[string]any
	if json.Unmarshal(t.Input, &in) != nil {
		return t.Name
	}
	for _, k := range []string{"command", "file_path", "filePath", "notebook_path", "path", "url", "pattern", "query"} {
		if s, ok := in[k].(string); ok {
			return clip(s)
		}
	}
	return t.Name
}

func clip(s string) string {
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// userPromptSubmit: a person spoke, so the next check is a user turn (a new
// goal is then a new instruction, not drift). An empty prompt is nobody
// speaking: Qwen Code fires UserPromptSubmit with prompt "" after every
// tool round (agents.md §4), which is not a user turn.
func (h *Handler) userPromptSubmit(ctx context.Context, e client.Event) error {
	if strings.TrimSpace(e.Prompt) == "" {
		return nil
	}
	r, err := h.Sup.Open(ctx, h.caller(e))
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
	text := e.Prompt
	if len(text) > 1000 {
		text = text[:1000] + "…"
	}
	_, err = st.AppendEvent(ctx, r.ID, fleet.Event{ID: h.eventID("prompt"), At: h.now(), Kind: fleet.KindPrompt, Name: "user-prompt-submit", Text: text, Session: e.Session})
	return err
}

// stop judges the run. When its last check drifted, the stop is blocked
// once with the agent's own advice; a Stop that follows a block
// (stop_hook_active) always goes through.
func (h *Handler) stop(ctx context.Context, e client.Event) (client.Answer, error) {
	c := h.caller(e)
	r, ok, err := h.Sup.Find(ctx, c)
	if err != nil || !ok {
		return client.Answer{}, err
	}
	j, err := h.Sup.Judge(ctx, r.ID)
	if err != nil {
		return client.Answer{}, err
	}
	st, err := h.Sup.Fleet()
	if err != nil {
		return client.Answer{}, err
	}
	block := r.Last != nil && r.Last.Drifting && !e.StopHookActive
	yes, no := true, false
	ev := fleet.Event{ID: h.eventID("stop"), At: h.now(), Kind: fleet.KindStop, Name: "stop", OK: &yes, Session: e.Session,
		Text: "judgment " + j.Verdict}
	var ans client.Answer
	if block {
		reason := fmt.Sprintf("laserbrain: you are stopping while your run is drifting (%s, Φ=%.2f, ground %q). %s Whole-run judgment: %s — %s",
			r.Last.Reason, r.Last.Phi, r.Last.Ground, r.Last.Advice, j.Verdict, j.Counsel)
		ans = client.Answer{Block: true, Reason: reason}
		ev.OK, ev.Text = &no, "blocked: "+reason
		if _, err := st.UpdateRun(ctx, r.ID, func(x *fleet.Run) error { x.StopsBlocked++; return nil }); err != nil {
			return client.Answer{}, err
		}
	}
	_, err = st.AppendEvent(ctx, r.ID, ev)
	return ans, err
}

// sessionStart opens the run (or attaches the session to the run
// `laserbrain run` made) and records the start.
func (h *Handler) sessionStart(ctx context.Context, e client.Event) error {
	r, err := h.Sup.Open(ctx, h.caller(e))
	if err != nil {
		return err
	}
	st, err := h.Sup.Fleet()
	if err != nil {
		return err
	}
	_, err = st.AppendEvent(ctx, r.ID, fleet.Event{ID: h.eventID("session-start"), At: h.now(), Kind: fleet.KindSession, Name: "session-start", Text: e.Source, Session: e.Session})
	return err
}

// sessionEnd records the end; a run the session opened by itself ends with
// it (one `laserbrain run` made ends when its command exits).
func (h *Handler) sessionEnd(ctx context.Context, e client.Event) error {
	r, ok, err := h.Sup.Find(ctx, h.caller(e))
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
	_, err = st.AppendEvent(ctx, r.ID, fleet.Event{ID: h.eventID("session-end"), At: h.now(), Kind: fleet.KindSession, Name: "session-end", Text: e.Reason, Session: e.Session})
	return err
}
