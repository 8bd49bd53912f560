package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Shell tools of the agent CLIs, by the name their payloads use (agents.md
// §4): Claude Code's Bash, Codex's shell, Gemini CLI's run_shell_command,
// Cursor's run_terminal_command. Any other tool whose input carries a
// "command" is read as a shell command too: a shell tool we do not know is
// gated, never waved through.
var shellTools = map[string]bool{
	"Bash": true, "shell": true, "local_shell": true, "run_shell_command": true, "run_terminal_command": true,
}

// Tools known not to run commands: Claude Code's own (as 2.1.328 lists
// them, plus older names) and the read-only tools of other CLIs. A
// "command" in their input is data, not a command line.
var nonShellTools = map[string]bool{
	"Agent": true, "Task": true, "ListAgents": true, "Read": true, "ReportFindings": true, "ScheduleWakeup": true,
	"Skill": true, "ToolSearch": true, "Workflow": true, "DeferredToolPlaceholder": true, "Glob": true, "Grep": true,
	"LS": true, "WebFetch": true, "WebSearch": true, "TodoWrite": true, "NotebookRead": true, "ExitPlanMode": true,
	"BashOutput": true, "KillShell": true, "SlashCommand": true,
	"read_file": true, "read_many_files": true, "list_directory": true, "glob": true, "search_file_content": true,
	"google_web_search": true, "web_fetch": true, "save_memory": true,
}

// File-writing tools and the input fields naming the files they write:
// Claude Code's Write, Edit, MultiEdit and NotebookEdit, Gemini CLI's
// write_file and replace, and the MCP filesystem server's write_file,
// edit_file and move_file (whose source goes away).
var writeTools = map[string][]string{
	"Write": {"file_path"}, "Edit": {"file_path"}, "MultiEdit": {"file_path"}, "NotebookEdit": {"notebook_path"},
	"replace": {"file_path"}, "write_file": {"file_path|path"}, "edit_file": {"path|file_path"}, "move_file": {"source", "destination"},
}

// preToolUse gates one tool call, in one straight line: the event is read
// into an analysis (a shell command's, or the paths a file tool writes),
// the operator decides (operator.Decide: the analysis, who is there, the
// run's state, the project policy), the decision is recorded once on the
// caller's run, and answered. The hook keeps only the I/O: it reads the
// run once and a person's authorizations once, and only when the decision
// needs them.
func (h *Handler) preToolUse(ctx context.Context, p Payload) Answer {
	if p.ToolName == nil {
		return h.failed(PreToolUse, errors.New(`the event has no "tool_name"`))
	}
	name := *p.ToolName
	// laserbrain's own tools are reporting, never work: a halted agent may
	// still read why (supervision, check_state).
	if agentrun.SelfTool(name) {
		return Answer{}
	}
	if ans, stop := h.halted(ctx, p); stop {
		return ans
	}
	an, isAction, err := analyzeCall(name, p.ToolInput, p.Cwd)
	if err != nil {
		return h.failed(PreToolUse, err)
	}
	if !isAction {
		return Answer{}
	}
	pol, err := agentrun.LoadPolicy(p.Cwd, h.ValidatePolicy)
	if agentrun.IsPolicyUnchecked(err) {
		return Answer{Delegate: true}
	}
	c := h.caller(p)
	rs := operator.RunState{PresenceWhy: c.PresenceWhy}
	d := operator.Decide(an, c.Presence, rs, pol)
	var run fleet.Run
	found := false
	if d.NeedsRun {
		rs, run, found, err = h.Sup.RunState(ctx, c)
		if err == nil {
			d = operator.Decide(an, c.Presence, rs, pol)
		}
		if err == nil && d.WantsAuthorization() {
			var au fleet.Authorization
			var ok bool
			au, ok, err = h.Sup.Authorize(ctx, c, run, found, fleet.NormalizeAction(d.Target))
			if ok {
				rs.Authorized, rs.AuthorizedBy = true, agentrun.AuthorizedBy(au)
				d = operator.Decide(an, c.Presence, rs, pol)
			}
		}
		switch {
		case errors.Is(err, agentrun.ErrStoreElsewhere):
			return Answer{Delegate: true}
		case isUnreachable(err):
			return h.cannotRead(p, d, err)
		case err != nil:
			return h.failed(PreToolUse, err)
		}
	}
	h.record(ctx, c, run, found, p, d)
	return h.answer(d)
}

// analyzeCall reads a tool call into the operator's analysis: a file
// tool's paths, or a shell-like tool's command. isAction is false for a
// tool that neither writes files nor runs commands.
func analyzeCall(name string, input json.RawMessage, cwd string) (an operator.Analysis, isAction bool, err error) {
	base := toolBase(name)
	if fields, ok := writeTools[base]; ok {
		var paths []string
		for _, field := range fields {
			var path string
			err := errors.New("missing")
			for _, alt := range strings.Split(field, "|") {
				if path, err = stringField(input, alt); err == nil {
					break
				}
			}
			if err != nil {
				return an, true, fmt.Errorf("a %s event needs tool_input.%s as a string", name, strings.ReplaceAll(field, "|", " (or "+")"))
			}
			paths = append(paths, path)
		}
		return operator.AnalyzeWrite(name, cwd, paths...), true, nil
	}
	command, isShell, err := shellCommand(name, input)
	if err != nil || !isShell {
		return an, isShell, err
	}
	// Read in the event's directory: "git checkout NAME" discards NAME's
	// changes when NAME is a file there, and switches branches otherwise;
	// a script the command runs is read from there.
	return operator.Analyze(command, cwd), true, nil
}

// toolBase is a tool's name without an MCP server's prefix
// (mcp__filesystem__write_file is write_file).
func toolBase(name string) string {
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if i := strings.Index(rest, "__"); i >= 0 {
			return rest[i+2:]
		}
	}
	return name
}

// record keeps a decision on the caller's run, best effort (a decision
// that cannot be recorded still stands: a refusal must not turn into an
// allow): refusals, asks, calls that went ahead with a note, by a person's
// authorization or by the project policy. A plain allow records nothing.
// When the caller has no run yet but names one (LASERBRAIN_RUN, or a
// session), it is opened, so a report counts every decision.
func (h *Handler) record(ctx context.Context, c agentrun.Caller, run fleet.Run, found bool, p Payload, d operator.Decision) {
	if d.Action == operator.Allow && d.Rule == operator.RuleNothing || d.Action == operator.Allow && d.Rule == operator.RuleCarveOut {
		return
	}
	if !found {
		if c.Run == "" && c.Session == "" {
			return
		}
		var err error
		if run, err = h.Sup.Open(ctx, c); err != nil {
			h.log(fmt.Sprintf("laserbrain hook %s: the gate's decision could not be recorded on the run: %v", PreToolUse, err))
			return
		}
	}
	st, err := h.Sup.Fleet()
	if err != nil {
		return
	}
	var ok *bool // an ask: nobody knows yet
	if d.Action != operator.Ask {
		yes := d.Action == operator.Allow
		ok = &yes
	}
	id := gateEventID(p, h.eventID("gate"))
	if _, err := st.AppendEvent(ctx, run.ID, fleet.Event{ID: id, At: h.now(), Kind: fleet.KindGate, Name: toolName(p), OK: ok,
		Result: agentrun.GateResult(d), Text: d.Reason, Session: p.SessionID}); err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: the gate's %s could not be recorded on the run: %v", PreToolUse, d.Action, err))
	}
}

// answer encodes a decision for Claude Code: a refusal (exit 2 and the
// reason, or permissionDecision deny with --format json); an ask; an
// allow by a person's authorization (permissionDecision allow with whose);
// an allow with a note (additionalContext, no permissionDecision: the
// agent's own rules still decide); otherwise nothing.
func (h *Handler) answer(d operator.Decision) Answer {
	switch {
	case d.Action == operator.Deny:
		return h.deny(d.Reason)
	case d.Action == operator.Ask:
		return decision("ask", d.Reason)
	case d.UseAuthorization:
		return decision("allow", d.Reason)
	case d.Context != "":
		b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
			"hookEventName":     string(PreToolUse),
			"additionalContext": d.Context,
		}})
		return Answer{Stdout: string(b) + "\n"}
	}
	return Answer{}
}

func gateEventID(p Payload, fallback string) string {
	if p.ToolUseID != "" {
		return "gate:" + p.ToolUseID
	}
	return fallback
}

func toolName(p Payload) string {
	if p.ToolName != nil {
		return *p.ToolName
	}
	return ""
}

// cannotRead refuses an action needing authorization whose run (or
// authorizations) the gate cannot read: the store's database is out of
// reach. The decision is queued for the run like the observers' events,
// and the session's first refusal explains the outage.
func (h *Handler) cannotRead(p Payload, d operator.Decision, cause error) Answer {
	what := "this command is irreversible or outward"
	if d.Kind == "write" {
		what = "this file is protected"
	}
	reason := "laserbrain: cannot read the run: " + reasonOf(cause) + ". " + capitalize(what) +
		", and nothing irreversible or outward runs while the run cannot be read; reversible actions go on. Do not retry it in another form."
	if h.firstTold(p.SessionID) {
		reason += " " + outageNotice(cause)
	}
	d.Action, d.Reason = operator.Deny, reason
	if err := h.enqueue(PreToolUse, h.input, &gateDecision{OK: false, Text: reason, Result: agentrun.GateResult(d)}); err != nil {
		h.log(fmt.Sprintf("laserbrain hook pre-tool-use: the refusal could not be queued: %v", err))
	}
	return h.deny(reason)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (h *Handler) deny(reason string) Answer {
	if h.Format == "json" {
		return decision("deny", reason)
	}
	return Answer{Exit: 2, Stderr: reason + "\n"}
}

func decision(d, reason string) Answer {
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName":            string(PreToolUse),
		"permissionDecision":       d,
		"permissionDecisionReason": reason,
	}})
	return Answer{Stdout: string(b) + "\n"}
}

func stringField(input json.RawMessage, field string) (string, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(input, &in); err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(in[field], &s); err != nil {
		return "", err
	}
	return s, nil
}

// shellCommand reads the command of a shell-like call: a known shell tool
// must carry one (a string, or an argv array as Codex sends); any other
// tool not known to be something else is shell-like when its input
// carries a command under "command", "cmd" or "script" (a string, or an
// argv array, with "args" after it), or an argv under "args".
func shellCommand(name string, input json.RawMessage) (cmd string, isShell bool, err error) {
	known := shellTools[name]
	if nonShellTools[name] {
		return "", false, nil
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil {
		if known {
			return "", true, fmt.Errorf("a %s event needs tool_input.command as a string", name)
		}
		return "", false, nil
	}
	keys := []string{"command"}
	if !known {
		keys = append(keys, "cmd", "script")
	}
	var args []string
	if raw, ok := in["args"]; ok && !known {
		if json.Unmarshal(raw, &args) != nil {
			var one string
			if json.Unmarshal(raw, &one) != nil {
				return "", true, fmt.Errorf("a %s event's tool_input.args is neither a string nor a list of strings", name)
			}
			args = []string{one}
		}
	}
	for _, key := range keys {
		raw, has := in[key]
		if !has {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if len(args) > 0 {
				return joinArgv(append([]string{s}, args...)), true, nil
			}
			return s, true, nil
		}
		var argv []string
		if json.Unmarshal(raw, &argv) == nil && len(argv) > 0 {
			return joinArgv(append(argv, args...)), true, nil
		}
		// A command we cannot read is not waved through.
		return "", true, fmt.Errorf("a %s event needs tool_input.%s as a string", name, key)
	}
	if known {
		return "", true, fmt.Errorf("a %s event needs tool_input.command as a string", name)
	}
	if len(args) > 0 {
		return joinArgv(args), true, nil
	}
	return "", false, nil
}

// joinArgv writes an argv as one shell command line, each word quoted when
// it needs to be; `bash -lc SCRIPT` becomes SCRIPT's text inside quotes,
// which the operator's parser follows into.
func joinArgv(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == '+' || r == ',' || r == '@' ||
				(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
		}) < 0 {
			words[i] = a
			continue
		}
		words[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(words, " ")
}
