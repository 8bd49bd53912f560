package client

import (
	"encoding/json"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
)

// claudeFamily reads Claude Code's payloads, and the clients that took
// them over: Codex (its events and fields, plus turn_id; a tool response
// is a string) and Qwen Code (plus tool_call_id; its shell tool is
// run_shell_command). They differ in what they obey: Codex refuses
// permissionDecision "allow" and "ask" from a PreToolUse hook
// ("unsupported permissionDecision", in its 0.171.0 binary), so an ask is
// a denial there and an allow no decision at all.
type claudeFamily struct {
	name Name
	json bool // deny with permissionDecision on stdout, not exit 2
}

func (c *claudeFamily) Name() Name { return c.name }

// claudePayload is a Claude Code hook event's stdin object, as the real
// CLI sends it: the common keys and each event's own.
type claudePayload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`

	ToolName     *string         `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolUseID    string          `json:"tool_use_id"`
	ToolResponse json.RawMessage `json:"tool_response"`
	Error        string          `json:"error"`
	IsInterrupt  bool            `json:"is_interrupt"`

	Prompt string `json:"prompt"`

	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`

	Source string `json:"source"`
	Reason string `json:"reason"`

	Message          string `json:"message"`
	Title            string `json:"title"`
	NotificationType string `json:"notification_type"`

	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
}

func (c *claudeFamily) Decode(hook EventName, input []byte, getenv func(string) string) (Payload, error) {
	// Codex and Qwen Code send Claude Code's payloads plus a field of
	// their own: each reads the others' too, Claude Code reads neither (a
	// Codex or Qwen hook installed as Claude Code's would be answered in
	// the wrong format).
	alike := []Name{Claude, Codex, Qwen}
	if c.name == Claude {
		alike = []Name{Claude}
	}
	p, _, err := payloadOf[claudePayload](c.name, input, "session_id, hook_event_name, tool_name", alike...)
	if err != nil {
		return Payload{}, err
	}
	// A payload for another event is refused: a hook installed under the
	// wrong event must not act as if it were this one.
	if p.HookEventName != "" && p.HookEventName != string(hook) {
		return Payload{}, fmt.Errorf("this is the %s hook, but the event is %q", hook, p.HookEventName)
	}
	e := Payload{Name: hook, ClientEvent: string(hook), Client: c.name, Session: p.SessionID, Cwd: p.Cwd,
		Transcript: p.TranscriptPath, ToolUseID: p.ToolUseID, Prompt: p.Prompt, StopHookActive: p.StopHookActive,
		LastMessage: p.LastAssistantMessage, Source: p.Source, Reason: p.Reason, Raw: json.RawMessage(input)}
	if p.AgentID != "" || p.AgentType != "" {
		e.Subagent = &Subagent{ID: p.AgentID, Type: p.AgentType}
	}
	presence(&e, getenv)
	if hook == Notification {
		e.Notice = &Notice{Type: p.NotificationType, Title: p.Title, Message: p.Message}
	}
	switch hook {
	case PreToolUse, PostToolUse, PostToolUseFailure:
		if e.Tool, err = toolOf(hook, "tool_name", p.ToolName, p.ToolInput); err != nil {
			return e, err
		}
	}
	switch hook {
	case PostToolUse:
		r := &Response{Text: responseText(p.ToolResponse), Raw: p.ToolResponse, OK: laserbrain.OKOf(!interrupted(p.ToolResponse))}
		e.Response = r
	case PostToolUseFailure:
		raw, _ := json.Marshal(map[string]any{"error": p.Error, "is_interrupt": p.IsInterrupt})
		e.Response = &Response{Text: p.Error, Raw: raw, OK: laserbrain.OKFalse}
	}
	return e, nil
}

func interrupted(resp json.RawMessage) bool {
	var r struct {
		Interrupted bool `json:"interrupted"`
	}
	return json.Unmarshal(resp, &r) == nil && r.Interrupted
}

func (c *claudeFamily) Encode(hook EventName, a Reply) Output {
	specific := map[string]any{}
	if d, decided := a.Decided(); hook == PreToolUse && decided {
		if c.name == Codex {
			// Codex takes only deny from a PreToolUse hook: an ask is a
			// refusal, an allow no decision.
			if d == operator.Ask {
				d = operator.Deny
			}
			decided = d == operator.Deny
		}
		if decided && d == operator.Deny && !c.json {
			return Output{Exit: 2, Stderr: a.Reason + "\n"}
		}
		if decided {
			specific["permissionDecision"] = d.String()
			specific["permissionDecisionReason"] = a.Reason
		}
	}
	if d, decided := a.Decided(); hook == PreToolUse && a.Rewrite != "" &&
		(decided && d == operator.Ask && AsksRewritten(c.name) || (!decided || d == operator.Allow) && RunsRewritten(c.name)) {
		if in, ok := rewrittenInput(a.Call, a.Rewrite); ok {
			specific["updatedInput"] = in
		}
	}
	out := map[string]any{}
	if a.Context != "" {
		switch hook {
		case PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, SessionStart:
			specific["additionalContext"] = a.Context
		}
	}
	if len(specific) > 0 {
		specific["hookEventName"] = string(hook)
		out["hookSpecificOutput"] = specific
	}
	if hook == Stop && a.Block {
		out["decision"], out["reason"] = "block", a.Reason
	}
	if a.Notice != "" {
		out["systemMessage"] = a.Notice
	}
	return a.commandOutput(out)
}

// rewrittenInput is a Bash call's input with its command replaced by
// command, every other field (description, timeout) kept; ok is false for
// any other tool or an input that is not an object.
func rewrittenInput(t *Tool, command string) (map[string]any, bool) {
	if t == nil || t.Kind != KindShell || t.Name != "Bash" {
		return nil, false
	}
	in := map[string]any{}
	if len(t.Input) > 0 && json.Unmarshal(t.Input, &in) != nil {
		return nil, false
	}
	in["command"] = command
	return in, true
}
