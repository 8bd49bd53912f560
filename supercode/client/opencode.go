package client

import (
	"encoding/json"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
)

// opencode runs no command hooks: our plugin (plugin/laserbrain.js, which
// `laserbrain install opencode` writes) runs in opencode, hands each event
// to laserbrain as one JSON object — opencode's own names: the hook
// ("tool.execute.before"), sessionID, callID, tool, args, directory, and
// after the call its output — and throws our denial's reason, which
// opencode makes the tool error the model sees. Its answer is always JSON
// on stdout, {"decision","reason","context"}; the plugin treats anything
// else (no binary, a crash, unreadable output) as a denial.
type opencode struct{}

func (opencode) Name() Name { return OpenCode }

// openCodeEvents maps the plugin's hook names onto ours.
var openCodeEvents = [...]clientEvent{
	{"tool.execute.before", PreToolUse},
	{"tool.execute.after", PostToolUse},
	{"session.created", SessionStart},
	{"session.idle", Stop},
	// opencode's bus event for a permission it puts to its user (1.18.33:
	// properties id, sessionID, permission, patterns); the plugin sends
	// the permission and its patterns as the message.
	{"permission.asked", Notification},
}

// OpenCodeEvent is the plugin's name for our event ("" when it has none).
func OpenCodeEvent(ev EventName) string { return theirName(openCodeEvents[:], ev) }

type openCodePayload struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"sessionID"`
	CallID        string          `json:"callID"`
	Tool          *string         `json:"tool"`
	Args          json.RawMessage `json:"args"`
	Directory     string          `json:"directory"`
	Output        *struct {
		Title    string          `json:"title"`
		Output   json.RawMessage `json:"output"`
		Metadata json.RawMessage `json:"metadata"`
	} `json:"output"`
	Prompt string `json:"prompt"`
	// Message is a notification's text (permission.asked).
	Message string `json:"message"`
}

func (opencode) Decode(hook EventName, input []byte, getenv func(string) string) (Payload, error) {
	p, _, err := payloadOf[openCodePayload](OpenCode, input, "hook_event_name, sessionID, tool, args")
	if err != nil {
		return Payload{}, err
	}
	want := OpenCodeEvent(hook)
	if p.HookEventName != want {
		return Payload{}, fmt.Errorf("this is the %s hook (opencode's %s), but the event is %q: reinstall the plugin (laserbrain install opencode)", hook, want, p.HookEventName)
	}
	e := Payload{Name: hook, ClientEvent: want, Client: OpenCode, Session: p.SessionID, Cwd: p.Directory, ToolUseID: p.CallID,
		Prompt: p.Prompt, Raw: json.RawMessage(input)}
	presence(&e, getenv)
	if hook == Notification {
		e.Notice = &Notice{Type: want, Message: p.Message}
	}
	switch hook {
	case PreToolUse, PostToolUse:
		if e.Tool, err = toolOf(hook, "tool", p.Tool, p.Args); err != nil {
			return e, err
		}
	}
	if hook == PostToolUse && p.Output != nil {
		var meta struct {
			Exit *int `json:"exit"`
		}
		_ = json.Unmarshal(p.Output.Metadata, &meta)
		var ok laserbrain.OK
		if meta.Exit != nil {
			ok = laserbrain.OKOf(*meta.Exit == 0)
		}
		raw, _ := json.Marshal(p.Output)
		e.Response = &Response{Text: responseText(p.Output.Output), Raw: raw, OK: ok}
	}
	return e, nil
}

func (opencode) Encode(hook EventName, a Reply) Output {
	out := map[string]string{}
	d, decided := a.Decided()
	if d == operator.Ask {
		d = operator.Deny // a plugin cannot ask a person
	}
	if hook == PreToolUse && decided {
		out["decision"], out["reason"] = d.String(), a.Reason
	}
	if a.Context != "" {
		out["context"] = a.Context
	}
	if a.Notice != "" {
		out["notice"] = a.Notice
	}
	if a.Log != "" {
		out["log"] = a.Log
	}
	return Output{Stdout: jsonLine(out)}
}
