package coverage

import (
	"encoding/json"
	"strings"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/laserbrain"
)

// Kind is what a tool is, as the client seam classifies it.
type Kind string

// Tool kinds.
const (
	Shell Kind = "shell" // runs a command
	Write Kind = "write" // writes files
	Read  Kind = "read"  // reads, lists, searches, fetches: changes nothing
	Own   Kind = "own"   // laserbrain's own tool (check_state, reset_task, …)
	MCP   Kind = "mcp"   // another MCP server's tool
	Other Kind = "other"
)

// Hook event names the engine acts on (the client seam maps each client's
// own names onto these).
const (
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	UserPromptSubmit   = "UserPromptSubmit"
	Stop               = "Stop"
	SubagentStop       = "SubagentStop"
)

// laserbrain's own tools by base name, as the seam names them across
// clients (mcp__laserbrain__check_state, mcp_laserbrain_check_state, …).
const (
	CheckState = "check_state"
	ResetTask  = "reset_task"
	// CheckCommand is the base name for a shell call that is a `laserbrain
	// check` command line: never refused, and not counted here (the command
	// records its own check, Checked).
	CheckCommand = "check"
)

// HookEvent is one hook event as coverage reads it: a small typed view the
// client seam fills. Our mode reads the seam's classification (Kind,
// Own, OK, Files); reference mode reads the tool's name, input and
// response as the reference does, so it agrees with it byte for byte.
type HookEvent struct {
	// Name is the hook event (PreToolUse, PostToolUse, …).
	Name string
	// Session is the client's session id.
	Session string
	// Agent is the hook process's LASERBRAIN_AGENT ("" when unset).
	Agent string
	// Tool is the tool's name as the client spells it ("" for no tool).
	Tool string
	Kind Kind
	// Own is the base name of laserbrain's own tool (CheckState,
	// ResetTask, …), "" for any other.
	Own string
	// Files are the paths a write tool writes.
	Files []string
	// Input is the tool's input as the client sent it.
	Input json.RawMessage
	// Response is the tool's response (post-tool-use), as sent.
	Response json.RawMessage
	// OK is the client's word on the outcome: unknown when it has none.
	OK laserbrain.OK
	// Prompt is the person's prompt (UserPromptSubmit); nil without one.
	Prompt *string
	// Reason is the event's reason field (a SessionEnd's; a Stop's when
	// the client sends one).
	Reason string
	// StopHookActive: this Stop follows one a hook already held.
	StopHookActive bool
	// Tokens is what the session had spent by now (TranscriptTokens), nil
	// when not known; it is kept on a check.
	Tokens *int
	// CheckTool is how the calling client names check_state
	// ("mcp__laserbrain__check_state" when empty).
	CheckTool string
}

// DefaultCheckTool is check_state as Claude Code names it.
const DefaultCheckTool = "mcp__laserbrain__check_state"

func (ev *HookEvent) checkTool() string {
	if ev.CheckTool != "" {
		return ev.CheckTool
	}
	return DefaultCheckTool
}

// isStop: a Stop or SubagentStop (the reference: an event name holding
// "stop" but not "failure").
func isStop(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "stop") && !strings.Contains(n, "failure")
}

// agentOf is the reference's agent stamp: $LASERBRAIN_AGENT stripped and
// lowercased, "unknown" when empty.
func agentOf(env string) string {
	if a := strings.ToLower(strings.TrimSpace(env)); a != "" {
		return a
	}
	return "unknown"
}

// refKind is what the reference makes of an event (its normalise).
type refKind int

const (
	refNone refKind = iota
	refPrompt
	refTool
	refCheck
	refReset
)

// refEvent is an event normalised the reference's way.
type refEvent struct {
	kind refKind
	tool string        // unwrapped, as spelled
	args grammar.Value // unwrapped, coerced
	ok   bool
	text string // a prompt's cleaned text; a response's JSON, 600 characters
}

// normalise reads an event as the reference's runtime does: the tool and
// its arguments unwrapped from any envelope, a prompt only when there is
// no tool, reset_task and check_state by how the name ends, and the
// outcome from the event's name and the response (exit code, error flags,
// failure phrases).
func normalise(ev *HookEvent) refEvent {
	tool, args := unwrap(ev.Tool, value(ev.Input))
	if ev.Prompt != nil && tool == "" {
		return refEvent{kind: refPrompt, text: cleanPrompt(*ev.Prompt)}
	}
	if tool == "" {
		return refEvent{kind: refNone}
	}
	resp := value(ev.Response)
	if resp.Kind == grammar.Null {
		resp = grammar.Value{Kind: grammar.Object}
	}
	ok := !strings.Contains(strings.ToLower(ev.Name), "failure")
	switch resp.Kind {
	case grammar.Object:
		code := get(resp, "exit_code")
		if code.Kind == grammar.Null {
			code = get(resp, "exitCode")
		}
		if isInt(code) {
			one, _ := num(code)
			ok = one.Sign() == 0
		} else if truthy(get(resp, "error")) || truthy(get(resp, "is_error")) || truthy(get(resp, "isError")) {
			ok = false
		}
	case grammar.String:
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(resp.Str)), "error") {
			ok = false
		}
	}
	if ok {
		probe := ""
		if resp.Kind == grammar.String {
			probe = cut(resp.Str, 4000)
		} else {
			probe = cut(dumps(resp), 4000)
		}
		if looksFailed(probe) {
			ok = false
		}
	}
	low := strings.ToLower(tool)
	if strings.HasSuffix(low, "reset_task") {
		return refEvent{kind: refReset, tool: tool, args: args, ok: true}
	}
	k := refTool
	if strings.HasSuffix(low, "check_state") {
		k = refCheck
	}
	text := ""
	if truthy(resp) {
		text = cut(dumps(resp), 600)
	}
	return refEvent{kind: k, tool: tool, args: args, ok: ok, text: text}
}

// isInt: Python's isinstance(x, int) of a json.loads value (a bool is one).
func isInt(v grammar.Value) bool {
	return v.Kind == grammar.Bool || (v.Kind == grammar.Number && !strings.ContainsAny(v.Num, ".eE"))
}

// gateTool is the tool name the reference's gate reads: the unwrapped
// name, lowercased (its arguments from tool_input alone).
func gateTool(ev *HookEvent) string {
	tool, _ := unwrap(ev.Tool, value(ev.Input))
	return strings.ToLower(tool)
}

var promptWrappers = [...]string{"user_query", "user_prompt", "query", "prompt"}

// cleanPrompt unwraps a client's prompt envelope: for each wrapper tag in
// turn, when both its opening and closing tag occur, what lies between the
// first of each.
func cleanPrompt(text string) string {
	t := pyStrip(text)
	for _, tag := range promptWrappers {
		open, close := "<"+tag+">", "</"+tag+">"
		i, j := strings.Index(t, open), strings.Index(t, close)
		if i >= 0 && j >= 0 {
			if start := i + len(open); start <= j {
				t = t[start:j]
			} else {
				t = ""
			}
		}
	}
	return pyStrip(t)
}

// notATask: prompts that ground nothing, greetings and acknowledgements. A
// switch, not a map filled by an init func, which every hook process ran.
func notATask(prompt string) bool {
	switch prompt {
	case "hello", "hi", "hey", "yo", "hiya", "hello there", "hey there", "good morning",
		"good afternoon", "good evening", "morning", "thanks", "thank you", "ty", "ok",
		"okay", "k", "cool", "nice", "great", "sure", "yes", "no", "yep", "nope", "test",
		"ping", "you there", "are you there", "hello?", "still there":
		return true
	}
	return false
}

// groundable: a prompt that can be the fixed reference later readings are
// measured against — not empty, not a slash command, not a greeting.
func groundable(text string) bool {
	t := cleanPrompt(text)
	if t == "" || strings.HasPrefix(t, "/") {
		return false
	}
	return !notATask(strings.TrimRight(strings.ToLower(pyStrip(t)), ".!?"))
}
