package client

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/laserkit/laserkit/internal/firstuse"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
)

// gemini is Gemini CLI: its own event names (BeforeTool is
// our PreToolUse, AfterTool PostToolUse, BeforeAgent UserPromptSubmit,
// AfterAgent Stop), Claude Code's field names otherwise, no tool-use id;
// MCP calls carry mcp_context. It obeys {"decision":"deny","reason"} (the
// model reads "Tool execution blocked: <reason>") and "ask"; an
// AfterAgent deny makes the agent go on with the reason.
type gemini struct{}

func (gemini) Name() Name { return Gemini }

// geminiEvents maps Gemini CLI's event names onto ours.
var geminiEvents = [...]clientEvent{
	{"SessionStart", SessionStart},
	{"BeforeAgent", UserPromptSubmit},
	{"BeforeTool", PreToolUse},
	{"AfterTool", PostToolUse},
	{"AfterAgent", Stop},
	{"SessionEnd", SessionEnd},
	{"Notification", Notification},
}

// geminiEvent is geminiOurs without ok.
func geminiEvent(name string) EventName {
	ours, _ := geminiOurs(name)
	return ours
}

// geminiOurs is our event for a Gemini CLI event name ("" when none).
func geminiOurs(name string) (EventName, bool) { return ourName(geminiEvents[:], name) }

// GeminiEvent is Gemini CLI's name for our event ("" when it has none).
func GeminiEvent(ev EventName) string { return theirName(geminiEvents[:], ev) }

// geminiExit finds the exit status in a shell tool's result ("Exit Code:
// 3"), which Gemini CLI and Qwen Code write.
var geminiExit = firstuse.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Exit Code: (\d+)`) }} // compiled on first use: the gate starts without it

type geminiPayload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       *string         `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	MCPContext     *struct {
		ServerName string `json:"server_name"`
		ToolName   string `json:"tool_name"`
	} `json:"mcp_context"`
	Prompt         string `json:"prompt"`
	PromptResponse string `json:"prompt_response"`
	StopHookActive bool   `json:"stop_hook_active"`
	Source         string `json:"source"`
	Reason         string `json:"reason"`
	// Notification: notification_type (ToolPermission), message, details.
	NotificationType string `json:"notification_type"`
	Message          string `json:"message"`
}

func (gemini) Decode(hook EventName, input []byte, getenv func(string) string) (Payload, error) {
	p, _, err := payloadOf[geminiPayload](Gemini, input, "session_id, hook_event_name, tool_name", Claude)
	if err != nil {
		return Payload{}, err
	}
	want := GeminiEvent(hook)
	if p.HookEventName != "" && p.HookEventName != want {
		if ours, ok := geminiOurs(p.HookEventName); ok {
			return Payload{}, fmt.Errorf("this is the %s hook (Gemini CLI's %s), but the event is %q (our %s)", hook, want, p.HookEventName, ours)
		}
		return Payload{}, fmt.Errorf("this is the %s hook (Gemini CLI's %s), but the event is %q: if Claude Code runs this hook, drop --client gemini from its command (laserbrain install claude writes it)", hook, want, p.HookEventName)
	}
	e := Payload{Name: hook, ClientEvent: want, Client: Gemini, Session: p.SessionID, Cwd: p.Cwd, Transcript: p.TranscriptPath,
		Prompt: p.Prompt, StopHookActive: p.StopHookActive, LastMessage: p.PromptResponse, Source: p.Source, Reason: p.Reason,
		Raw: json.RawMessage(input)}
	presence(&e, getenv)
	if hook == Notification {
		e.Notice = &Notice{Type: p.NotificationType, Message: p.Message}
	}
	switch hook {
	case PreToolUse, PostToolUse:
		if e.Tool, err = toolOf(hook, "tool_name", p.ToolName, p.ToolInput); err != nil {
			return e, err
		}
		if m := p.MCPContext; m != nil {
			e.Tool.Server = m.ServerName
			if e.Tool.Kind != KindOwn && e.Tool.Kind != KindShell {
				e.Tool.Kind = KindMCP
			}
			if _, own := OwnTool("mcp__" + m.ServerName + "__" + m.ToolName); own && m.ServerName == ServerName {
				e.Tool.Kind, e.Tool.Own, e.Tool.Commands = KindOwn, m.ToolName, nil
			}
		}
	}
	if hook == PostToolUse {
		var r struct {
			Error json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(p.ToolResponse, &r)
		failed := len(r.Error) > 0 && string(r.Error) != "null" && string(r.Error) != `""`
		text := responseText(p.ToolResponse)
		// A failing command is an AfterTool too (Gemini CLI has no
		// failure event): its exit status is in the text.
		if m := geminiExit.Get().FindStringSubmatch(text); m != nil && e.Tool.Kind == KindShell && m[1] != "0" {
			failed = true
		}
		e.Response = &Response{Text: text, Raw: p.ToolResponse, OK: laserbrain.OKOf(!failed)}
	}
	return e, nil
}

func (gemini) Encode(hook EventName, a Reply) Output {
	out := map[string]any{}
	d, decided := a.Decided()
	switch {
	case hook == PreToolUse && decided:
		// Gemini CLI 0.61.0 headless (-p) never comes back from an "ask":
		// the session waits for a confirmation nobody can give, the tool
		// result is never sent. An ask is a refusal with its reason, as
		// Claude Code answers one unattended; the person can authorize.
		if d == operator.Ask {
			d = operator.Deny
		}
		out["decision"], out["reason"] = d.String(), a.Reason
	case hook == Stop && a.Block:
		out["decision"], out["reason"] = "deny", a.Reason
	}
	if a.Context != "" {
		out["hookSpecificOutput"] = map[string]string{"hookEventName": GeminiEvent(hook), "additionalContext": a.Context}
	}
	if a.Notice != "" {
		out["systemMessage"] = a.Notice
	}
	return a.commandOutput(out)
}
