package client

import (
	"encoding/json"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
)

// Name is a client, as `laserbrain install` and --client spell it.
type Name string

// The clients laserbrain supervises.
const (
	Claude   Name = "claude"
	Codex    Name = "codex"
	Gemini   Name = "gemini"
	Qwen     Name = "qwen"
	OpenCode Name = "opencode"
	Cline    Name = "cline"
	Copilot  Name = "copilot"
)

// EventName is one of our hook events. Clients spell theirs differently
// (Gemini CLI's BeforeTool is our PreToolUse, Copilot CLI's preToolUse,
// Cline's PreToolUse file gets hookName "tool_call"); each adapter maps
// its own onto these.
type EventName string

// Our events.
const (
	PreToolUse         EventName = "PreToolUse"
	PostToolUse        EventName = "PostToolUse"
	PostToolUseFailure EventName = "PostToolUseFailure"
	UserPromptSubmit   EventName = "UserPromptSubmit"
	Stop               EventName = "Stop"
	SessionStart       EventName = "SessionStart"
	SessionEnd         EventName = "SessionEnd"
	Notification       EventName = "Notification"
	SubagentStart      EventName = "SubagentStart"
	SubagentStop       EventName = "SubagentStop"
)

// Payload is one hook event as a client sent it, read into our form
// whichever client it was.
type Payload struct {
	// Name is our event; ClientEvent the client's own name for it, as the
	// payload (or the hook it was installed under) spells it.
	Name        EventName
	ClientEvent string
	Client      Name

	Session    string // the client's session (Cline: the task)
	Cwd        string // the project directory the client runs in
	Transcript string // the transcript file, when the client keeps one
	ToolUseID  string // the tool call's id, when the client gives one

	// Tool is the call (PreToolUse, PostToolUse, PostToolUseFailure).
	Tool *Tool
	// Response is what the tool gave back (PostToolUse,
	// PostToolUseFailure).
	Response *Response

	Prompt         string // UserPromptSubmit
	StopHookActive bool   // Stop: the agent goes on because a Stop hook blocked
	LastMessage    string // Stop: the agent's last message, when given
	Source         string // SessionStart: startup, resume, …
	Reason         string // SessionEnd: why the session ended

	// Notice is what a Notification says: the client's kind for it and
	// its message (Claude Code's notification_type and message).
	Notice *Notice

	// Subagent is set when a subagent of the session made the call
	// (Claude Code's agent_id / agent_type).
	Subagent *Subagent

	// Refused marks the PostToolUse of a call the gate refused by
	// rewriting it (Cline: the refusal that ran in the call's place). It
	// is laserbrain's answer, not the agent's work: never observed.
	Refused bool

	// Presence is whether a person can answer the agent's questions, and
	// PresenceWhy what said so (agentrun.Attendance on the hook's
	// environment).
	Presence    operator.Presence
	PresenceWhy string

	// Raw is the payload as it came.
	Raw json.RawMessage
}

// ToolKind says what a tool does, as far as supervision cares.
type ToolKind string

// Tool kinds.
const (
	KindShell ToolKind = "shell" // runs commands
	KindWrite ToolKind = "write" // writes files (Files says which)
	KindRead  ToolKind = "read"  // reads or searches, changes nothing
	KindOwn   ToolKind = "own"   // one of laserbrain's own MCP tools (Own says which)
	KindMCP   ToolKind = "mcp"   // another MCP server's tool
	KindOther ToolKind = "other" // anything else
)

// Tool is a tool call.
type Tool struct {
	// Name is the tool's name as the client spells it (Bash,
	// run_shell_command, mcp__laserbrain__check_state, laserbrain_check_state).
	Name string
	Kind ToolKind
	// Own is the base name of one of laserbrain's own tools (check_state,
	// reset_task), whatever the client's MCP naming.
	Own string
	// Server is the MCP server, when the client says which.
	Server string
	// Commands are a shell tool's commands: one for a command string or
	// an argv, several for Cline's run_commands. Each is gated.
	Commands []Command
	// Files are the paths a write tool writes, as given (relative to Cwd
	// when not absolute).
	Files []string
	// Input is the tool's input as the client gave it (an object; Cline's
	// and Copilot's JSON-encoded strings decoded).
	Input json.RawMessage
}

// Command is one shell command of a call.
type Command struct {
	// Line is the command as one shell command line: the string given, or
	// an argv written with each word quoted as it needs.
	Line string
	// Argv is the argv when the client gave one.
	Argv []string
}

// MayWrite reports whether a call of the tool may change files: every
// tool but the reads, laserbrain's own and the clients' agents, plans,
// todo lists and questions (a tool nobody knows may write).
func (t *Tool) MayWrite() bool {
	if t == nil {
		return false
	}
	switch t.Kind {
	case KindRead, KindOwn:
		return false
	case KindOther:
		return !isOtherTool(t.Name)
	}
	return true
}

// Lines are the call's command lines.
func (t *Tool) Lines() []string {
	if t == nil {
		return nil
	}
	out := make([]string, len(t.Commands))
	for i, c := range t.Commands {
		out[i] = c.Line
	}
	return out
}

// Response is what a tool gave back.
type Response struct {
	// Text is the result as the model sees it, or the error.
	Text string
	// OK is true when the call worked, false when it failed or was
	// interrupted, unknown when the client does not say.
	OK laserbrain.OK
	// Raw is the response as the client gave it.
	Raw json.RawMessage
}

// Notice is a client's notification to its user.
type Notice struct {
	// Type is the client's own kind (Claude Code: permission_prompt,
	// idle_prompt, …; Gemini CLI: ToolPermission; opencode: permission.asked).
	Type    string
	Title   string
	Message string
}

// Subagent is a subagent of a session.
type Subagent struct {
	ID   string
	Type string
}

// Reply is what we say back to one hook event, before a client's
// encoding: a PreToolUse's decision with its reason, context for the
// model, a held Stop, a notice for the person, an observer's failure.
type Reply struct {
	// Decision and Reason answer a PreToolUse; Reason is written for the
	// model. nil gives no opinion: the client's own permission rules
	// decide (the gate's plain allow). An allow given overrides them (a
	// person's authorization). Decide makes one.
	Decision *operator.Answer
	Reason   string
	// Context is put in front of the model (additional context), where
	// the event takes it.
	Context string
	// Block makes a Stop go on, with Reason as what to do.
	Block bool
	// Notice is for the person (a system message), never a decision.
	Notice string
	// Log is an observer's failure: it goes to standard error, and the
	// session goes on.
	Log string
	// Call is the tool call a PreToolUse answer is about (the hook sets it
	// from the event; nil when the event could not be read). A client
	// that refuses a call only by rewriting it (Cline) needs to know what
	// to rewrite.
	Call *Tool
	// Rewrite is the command line a shell call runs instead: with an ask,
	// if the person approves it in their client (only where the client
	// shows the person the rewritten call: AsksRewritten); with an allow
	// or no decision, where the client runs a call as its hook rewrote it
	// (RunsRewritten).
	Rewrite string
}

// RunsRewritten reports whether client n runs a shell call its PreToolUse
// hook let through as the hook rewrote it: Claude Code's updatedInput
// with no permission decision, or an allow.
func RunsRewritten(n Name) bool { return n == Claude }

// AsksRewritten reports whether client n, asked about a call by a
// PreToolUse hook, takes the call rewritten with the ask and shows the
// person the rewritten call to approve: Claude Code's updatedInput beside
// permissionDecision "ask". Codex takes no ask, and Cline no ask at all
// (overrideInput there runs the rewritten call unasked).
func AsksRewritten(n Name) bool { return n == Claude }

// Decide is the reply that answers a PreToolUse with d, for the reason
// given (written for the model).
func Decide(d operator.Answer, reason string) Reply { return Reply{Decision: &d, Reason: reason} }

// Decided is the reply's decision, and false when it gives none.
func (r Reply) Decided() (operator.Answer, bool) {
	if r.Decision == nil {
		return operator.Allow, false
	}
	return *r.Decision, true
}

// Denies reports a reply that refuses the call.
func (r Reply) Denies() bool { return r.Decision != nil && *r.Decision == operator.Deny }

// Output is a Reply as a client reads it: the hook process's exit status
// and what it prints.
type Output struct {
	Exit   int
	Stdout string
	Stderr string
}

// clientEvent is a client's name for one of our events. The clients'
// tables of them are arrays of constants, which the compiler lays out,
// where maps would be built at package init in every hook process.
type clientEvent struct {
	theirs string
	ours   EventName
}

// theirName is the client's name in table for our event ev ("" when it
// has none).
func theirName(table []clientEvent, ev EventName) string {
	for _, e := range table {
		if e.ours == ev {
			return e.theirs
		}
	}
	return ""
}

// ourName is our event for the client's event name in table.
func ourName(table []clientEvent, name string) (EventName, bool) {
	for _, e := range table {
		if e.theirs == name {
			return e.ours, true
		}
	}
	return "", false
}

// waitingNotices are the notification kinds that mean the agent stopped
// for a person, and what it waits for. Claude Code's (2.1.328; Qwen Code
// sends the same names), Gemini CLI's (0.61.0) and opencode's (1.18.33,
// its bus event) kinds do not overlap.
// The others — a login done (auth_success), a question answered
// (elicitation_complete, elicitation_response), a turn ended elsewhere
// (agent_completed), a plugin's or the model's own message — tell the
// person something without anyone being waited for.
func waitingNotices(kind string) (string, bool) {
	switch kind {
	case "permission_prompt", "ToolPermission", "permission.asked":
		return "a permission prompt", true
	case "worker_permission_prompt":
		return "a permission prompt (a worker agent)", true
	case "idle_prompt":
		return "the person's next prompt", true
	case "elicitation_dialog":
		return "an answer to a question (MCP elicitation)", true
	case "agent_needs_input":
		return "the person's input", true
	}
	return "", false
}

// WaitsFor says what a notification waits for — a person's permission,
// answer or next prompt — and ok is false when it waits for nobody. A
// notification without a kind (Claude Code before notification_type) was
// only ever sent for a permission or an idle prompt: it waits.
func (n *Notice) WaitsFor() (what string, ok bool) {
	if n == nil {
		return "", false
	}
	if n.Type == "" {
		return "a person", true
	}
	what, ok = waitingNotices(n.Type)
	return what, ok
}
