package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
)

// cline is Cline: an executable per event in a hooks
// directory (TaskStart, UserPromptSubmit, PreToolUse, PostToolUse,
// TaskComplete, TaskCancel, SessionShutdown, …); the payload names its hook
// in Cline's inner words (hookName "tool_call" for PreToolUse,
// "tool_result" for PostToolUse, …), the task is the session, the
// workspace roots the directory, and tool_call{id,name,input} the call,
// with preToolUse{toolName, parameters} beside it (each parameter a JSON
// string). Exit 2 does not block, and {"cancel":true} ends the whole task
// (the model never hears why). Cline 3.0.65 also obeys overrideInput — the
// call runs with the input the hook gives — and contextModification, which
// reaches the model in the next request as a <hook_context> message. So a
// refused shell call is rewritten into a command that prints the reason
// and fails (Refusal), with the reason as context too: the marker a
// chained command would write stays absent, the model reads why, and the
// task goes on. A refused call of any other tool, whose input we cannot
// rewrite into something harmless, is cancelled.
type cline struct{}

// refusalPrefix starts every refusal command, so that its PostToolUse is
// known for laserbrain's and not observed as the agent's work.
const refusalPrefix = ": laserbrain refused; printf '%s\\n' "

// Refusal is the shell command a refused Cline shell call runs instead:
// it prints reason and exits 1, and does nothing else.
func Refusal(reason string) string {
	return refusalPrefix + "'" + strings.ReplaceAll(reason, "'", `'\''`) + "'; exit 1"
}

// isRefusal reports whether command is exactly a Refusal.
func isRefusal(command string) bool {
	rest, ok := strings.CutPrefix(command, refusalPrefix+"'")
	if !ok {
		return false
	}
	body, ok := strings.CutSuffix(rest, "'; exit 1")
	return ok && Refusal(strings.ReplaceAll(body, `'\''`, "'")) == command
}

// clineShellInput is the input a refused shell call of Cline's is
// rewritten to, for the tools that take a command: run_commands (an
// array) and execute_command (a string). ok is false for any other tool.
func clineShellInput(t *Tool, reason string) (map[string]any, bool) {
	if t == nil || t.Kind != KindShell {
		return nil, false
	}
	switch t.Name {
	case "run_commands":
		return map[string]any{"commands": []string{Refusal(reason)}}, true
	case "execute_command":
		return map[string]any{"command": Refusal(reason)}, true
	}
	return nil, false
}

func (cline) Name() Name { return Cline }

// ClineHooks maps Cline's hook file names onto our events, in the order
// they are installed.
var ClineHooks = []struct {
	File  string
	Event EventName
}{
	{"TaskStart", SessionStart},
	{"TaskResume", SessionStart},
	{"UserPromptSubmit", UserPromptSubmit},
	{"PreToolUse", PreToolUse},
	{"PostToolUse", PostToolUse},
	{"TaskComplete", Stop},
	{"TaskCancel", SessionEnd},
	{"SessionShutdown", SessionEnd},
}

// clineInner are the hookName values Cline 3.0.65 sends, by file name.
func clineInner(file string) string {
	switch file {
	case "TaskStart":
		return "agent_start"
	case "TaskResume":
		return "agent_resume"
	case "TaskCancel":
		return "agent_abort"
	case "TaskComplete":
		return "agent_end"
	case "TaskError":
		return "agent_error"
	case "PreToolUse":
		return "tool_call"
	case "PostToolUse":
		return "tool_result"
	case "UserPromptSubmit":
		return "prompt_submit"
	case "SessionShutdown":
		return "session_shutdown"
	}
	return ""
}

// clineEvent is our event for a Cline hookName (either spelling).
func clineEvent(hookName string) (EventName, bool) {
	for _, h := range ClineHooks {
		if strings.EqualFold(h.File, hookName) || clineInner(h.File) == hookName {
			return h.Event, true
		}
	}
	return "", false
}

type clineCall struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

type clinePayload struct {
	HookName       string     `json:"hookName"`
	TaskID         string     `json:"taskId"`
	WorkspaceRoots []string   `json:"workspaceRoots"`
	AgentID        string     `json:"agent_id"`
	ParentAgentID  *string    `json:"parent_agent_id"`
	ToolCall       *clineCall `json:"tool_call"`
	// ToolResult is PostToolUse's record of the call (Cline 3.0.65 sends
	// it instead of tool_call there): its output, for run_commands one
	// {query,result,success,error} per command.
	ToolResult *clineCall `json:"tool_result"`
	PreToolUse *struct {
		ToolName   string                     `json:"toolName"`
		Parameters map[string]json.RawMessage `json:"parameters"`
	} `json:"preToolUse"`
	PostToolUse *struct {
		ToolName   string                     `json:"toolName"`
		Parameters map[string]json.RawMessage `json:"parameters"`
		Result     string                     `json:"result"`
		Success    laserbrain.OK              `json:"success"`
	} `json:"postToolUse"`
	UserPromptSubmit *struct {
		Prompt string `json:"prompt"`
	} `json:"userPromptSubmit"`
}

func (cline) Decode(hook EventName, input []byte, getenv func(string) string) (Payload, error) {
	p, obj, err := payloadOf[clinePayload](Cline, input, "hookName, taskId, tool_call, preToolUse")
	if err != nil {
		return Payload{}, err
	}
	if p.HookName == "" {
		return Payload{}, wrongClient(Cline, obj, "hookName, taskId, tool_call, preToolUse")
	}
	if ev, ok := clineEvent(p.HookName); !ok || ev != hook {
		return Payload{}, fmt.Errorf("this is the %s hook, but Cline's event is %q", hook, p.HookName)
	}
	e := Payload{Name: hook, ClientEvent: p.HookName, Client: Cline, Session: p.TaskID, Raw: json.RawMessage(input)}
	if len(p.WorkspaceRoots) > 0 {
		e.Cwd = p.WorkspaceRoots[0]
	}
	if p.ParentAgentID != nil && *p.ParentAgentID != "" {
		e.Subagent = &Subagent{ID: p.AgentID}
	}
	if p.UserPromptSubmit != nil {
		e.Prompt = p.UserPromptSubmit.Prompt
	}
	presence(&e, getenv)
	if hook != PreToolUse && hook != PostToolUse {
		return e, nil
	}
	name, input2 := "", json.RawMessage(nil)
	var params map[string]json.RawMessage
	if p.PreToolUse != nil {
		name, params = p.PreToolUse.ToolName, p.PreToolUse.Parameters
	}
	if p.PostToolUse != nil {
		name, params = p.PostToolUse.ToolName, p.PostToolUse.Parameters
	}
	for _, call := range []*clineCall{p.ToolCall, p.ToolResult} {
		if call == nil {
			continue
		}
		e.ToolUseID = call.ID
		if call.Name != "" {
			name = call.Name
		}
		input2 = call.Input
	}
	if len(input2) == 0 || string(input2) == "null" {
		input2 = parametersObject(params)
	}
	if name == "" {
		return e, errors.New(`the event has no tool name (tool_call.name, preToolUse.toolName)`)
	}
	if e.Tool, err = classify(name, input2, hook == PreToolUse); err != nil {
		return e, err
	}
	if hook == PostToolUse && e.Tool.Kind == KindShell && len(e.Tool.Commands) == 1 && isRefusal(e.Tool.Commands[0].Line) {
		e.Refused = true
	}
	if r := p.PostToolUse; r != nil {
		e.Response = &Response{Text: r.Result, OK: r.Success}
		e.Response.Raw, _ = json.Marshal(map[string]any{"result": r.Result, "success": r.Success})
		// postToolUse.success stays true when one of run_commands'
		// commands failed: each command's own success is in the output.
		if p.ToolResult != nil {
			var outs []struct {
				Success laserbrain.OK `json:"success"`
			}
			if json.Unmarshal(p.ToolResult.Output, &outs) == nil {
				for _, o := range outs {
					if o.Success.Failed() {
						e.Response.OK = laserbrain.OKFalse
					}
				}
			}
		}
	}
	return e, nil
}

// parametersObject turns Cline's parameters (every value a string, the
// non-string ones JSON-encoded) back into an input object.
func parametersObject(params map[string]json.RawMessage) json.RawMessage {
	obj := map[string]json.RawMessage{}
	for k, raw := range params {
		obj[k] = raw
		if v, ok := stringOf(raw); ok {
			if t := strings.TrimSpace(v); (strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{")) && json.Valid([]byte(t)) {
				obj[k] = json.RawMessage(t)
			}
		}
	}
	b, _ := json.Marshal(obj)
	return b
}

func (cline) Encode(hook EventName, a Reply) Output {
	out := map[string]any{}
	if d, decided := a.Decided(); hook == PreToolUse && decided && d != operator.Allow {
		// Cline has no ask: a refusal either way.
		if in, ok := clineShellInput(a.Call, a.Reason); ok {
			out["overrideInput"], out["contextModification"] = in, a.Reason
		} else {
			out["cancel"], out["errorMessage"] = true, a.Reason
		}
	} else if a.Context != "" {
		out["contextModification"] = a.Context
	}
	return a.commandOutput(out)
}
