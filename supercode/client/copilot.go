package client

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/laserkit/laserkit/internal/firstuse"
	"github.com/laserkit/laserkit/laserbrain"
)

// copilot is Copilot CLI: camelCase events and fields
// (sessionStart, userPromptSubmitted, preToolUse, postToolUse, agentStop,
// sessionEnd; sessionId, toolName, toolArgs, toolResult). Exit 2 blocks,
// but the model then reads only "hook exited with code 2": the reason must
// go in permissionDecisionReason, beside permissionDecision.
type copilot struct{}

func (copilot) Name() Name { return Copilot }

// copilotEvents maps Copilot CLI's event names onto ours.
var copilotEvents = [...]clientEvent{
	{"sessionStart", SessionStart},
	{"userPromptSubmitted", UserPromptSubmit},
	{"preToolUse", PreToolUse},
	{"postToolUse", PostToolUse},
	{"agentStop", Stop},
	{"sessionEnd", SessionEnd},
	{"notification", Notification},
	{"subagentStop", SubagentStop},
}

// CopilotEvent is Copilot CLI's name for our event ("" when it has none).
func CopilotEvent(ev EventName) string { return theirName(copilotEvents[:], ev) }

type copilotPayload struct {
	SessionID     string          `json:"sessionId"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hookEventName"`
	ToolName      *string         `json:"toolName"`
	ToolArgs      json.RawMessage `json:"toolArgs"`
	ToolResult    *struct {
		ResultType       string `json:"resultType"`
		TextResultForLlm string `json:"textResultForLlm"`
	} `json:"toolResult"`
	Prompt         string `json:"prompt"`
	Source         string `json:"source"`
	Reason         string `json:"reason"`
	StopReason     string `json:"stopReason"`
	StopHookActive bool   `json:"stop_hook_active"`
	TranscriptPath string `json:"transcriptPath"`
}

// copilotExit is the exit status Copilot CLI's bash tool writes at the end
// of its result ("<shellId: 1 completed with exit code 3>"): a failing
// command's postToolUse still says resultType "success".
var copilotExit = firstuse.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`completed with exit code (\d+)>\s*$`) }} // compiled on first use: the gate starts without it

func (copilot) Decode(hook EventName, input []byte, getenv func(string) string) (Payload, error) {
	p, obj, err := payloadOf[copilotPayload](Copilot, input, "sessionId, toolName, toolArgs")
	if err != nil {
		return Payload{}, err
	}
	want := CopilotEvent(hook)
	if p.HookEventName != "" && !strings.EqualFold(p.HookEventName, want) {
		return Payload{}, errors.New("this is the " + string(hook) + " hook (Copilot CLI's " + want + "), but the event is " + p.HookEventName)
	}
	e := Payload{Name: hook, ClientEvent: want, Client: Copilot, Session: p.SessionID, Cwd: p.Cwd, Prompt: p.Prompt,
		Source: p.Source, Reason: p.Reason, StopHookActive: p.StopHookActive, Transcript: p.TranscriptPath, Raw: json.RawMessage(input)}
	presence(&e, getenv)
	switch hook {
	case PreToolUse, PostToolUse:
		if p.ToolName == nil {
			return e, wrongClient(Copilot, obj, "sessionId, toolName, toolArgs")
		}
		args := p.ToolArgs
		// toolArgs is an object, or the object JSON-encoded in a string.
		if s, ok := stringOf(args); ok && json.Valid([]byte(s)) {
			args = json.RawMessage(s)
		}
		if e.Tool, err = classify(*p.ToolName, args, hook == PreToolUse); err != nil {
			return e, err
		}
	}
	if r := p.ToolResult; hook == PostToolUse && r != nil {
		var ok laserbrain.OK
		switch r.ResultType {
		case "success":
			ok = laserbrain.OKTrue
		case "failure", "rejected", "denied":
			ok = laserbrain.OKFalse
		}
		if m := copilotExit.Get().FindStringSubmatch(r.TextResultForLlm); m != nil {
			ok = laserbrain.OKOf(m[1] == "0")
		}
		raw, _ := json.Marshal(r)
		e.Response = &Response{Text: r.TextResultForLlm, OK: ok, Raw: raw}
	}
	return e, nil
}

func (copilot) Encode(hook EventName, a Reply) Output {
	out := map[string]any{}
	if d, decided := a.Decided(); hook == PreToolUse && decided {
		out["permissionDecision"], out["permissionDecisionReason"] = d.String(), a.Reason
	}
	if hook == Stop && a.Block {
		out["decision"], out["reason"] = "block", a.Reason
	}
	if a.Context != "" {
		out["additionalContext"] = a.Context
	}
	return a.commandOutput(out)
}
