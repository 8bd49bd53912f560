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

// File-writing tools and the input field naming the file: Claude Code's
// Write, Edit, MultiEdit and NotebookEdit, Gemini CLI's write_file and
// replace.
var writeTools = map[string]string{
	"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path",
	"write_file": "file_path", "replace": "file_path",
}

// preToolUse gates one tool call. A shell command the operator classifies
// as irreversible or outward, and a write into a protected path, is an
// action needing authorization: it goes through operator.Act joined to the
// caller's run, so it is refused while the run drifts or its judgment says
// abandon, wrong-problem or repeating, and otherwise needs a person's
// authorization (laserbrain authorize), looked up afresh for every action.
func (h *Handler) preToolUse(ctx context.Context, p Payload) Answer {
	if reason := h.Sup.LimitToolCall(toolName(p), p.ToolUseID); reason != "" {
		return h.deny(reason)
	}
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
	if field, ok := writeTools[name]; ok {
		path, err := stringField(p.ToolInput, field)
		if err != nil {
			return h.failed(PreToolUse, fmt.Errorf("a %s event needs tool_input.%s as a string", name, field))
		}
		what, abs, protected := protectedPath(path, p.Cwd)
		if outright(what) {
			return h.refuseWrite(ctx, p, what, fmt.Sprintf("%s would write %s", name, abs))
		}
		if !protected {
			return Answer{}
		}
		a := operator.Action{Kind: "write", Target: abs, Reversible: false}
		return h.gate(ctx, p, a, "write "+abs, what, gateFacts{labels: []string{"protected file: " + what}})
	}
	command, isShell, err := shellCommand(name, p.ToolInput)
	if err != nil {
		return h.failed(PreToolUse, err)
	}
	if !isShell {
		return Answer{}
	}
	// Read in the event's directory: "git checkout NAME" discards NAME's
	// changes when NAME is a file there, and switches branches otherwise.
	r := operator.ClassifyIn(p.Cwd, command, true, false)
	// A person's command (laserbrain authorize, …) is refused whoever is
	// there, and no authorization lets it through.
	if f, ok := r.PersonOnly(); ok {
		return h.refuseOutright(ctx, p, operator.PersonOnlyReason(f), strings.TrimPrefix(f.Label, "parsed: "))
	}
	// Where the command writes: into what is never authorizable, refused;
	// into other protected files, an action needing authorization like a
	// Write of them; a protected file named where the gate cannot tell
	// whether the command writes it, not cleared.
	never, neverAbs, writes, unsure := shellWrites(command, p.Cwd)
	if never != "" {
		return h.refuseWrite(ctx, p, never, writeWhy("command", neverAbs))
	}
	for _, w := range writes {
		r.Add(operator.Finding{Label: "writes a protected file: " + w, Where: operator.Executed})
	}
	if unsure != "" {
		r.Add(operator.Finding{Label: "may write a protected file (" + unsure + ")", Where: operator.Unknown,
			Note: "the gate cannot tell where this command writes"})
	}
	switch r.Decision {
	case operator.Deny:
		a := operator.Action{Kind: "shell", Target: command, Reversible: false, Outward: r.Outward}
		return h.gate(ctx, p, a, command, r.Why, commandFacts(r, r.Findings))
	case operator.Ask:
		return h.unsure(ctx, p, command, r)
	}
	return Answer{}
}

// unsure answers a call the gate could not clear: a match only in data or
// in code, a dry run, or a command it could not read. It is the one place
// that decides what to do without a clear finding, by who is there
// (operator.RoleAnswer's table): with a person there, or nobody saying,
// it asks. With nobody there an ask would be a refusal nobody explained
// (Claude Code refuses it), so code and what the gate cannot read are
// refused as actions needing authorization, with what to do instead, and
// a match only in data or a dry run goes ahead: the finding is recorded
// on the run and put before the model, and the agent's own permission
// rules still decide (no permissionDecision is given).
func (h *Handler) unsure(ctx context.Context, p Payload, command string, r operator.Result) Answer {
	c := h.caller(p)
	ans := r.HookAnswerFor(c.Presence, c.PresenceWhy)
	facts := commandFacts(r, ans.Findings)
	switch ans.Decision {
	case operator.Ask:
		h.recordUnsure(ctx, c, p, facts, fleet.GateAsk, nil, ans.Reason)
		return decision("ask", ans.Reason)
	case operator.Deny:
		a := operator.Action{Kind: "shell", Target: command, Reversible: false, Outward: r.Outward}
		return h.gateAs(ctx, p, a, command, r.Why, ans.Reason, facts)
	}
	if len(ans.Findings) > 0 {
		h.recordUnsure(ctx, c, p, facts, fleet.GateAllow, ans.Findings, ans.Context)
	}
	if ans.Context == "" {
		return Answer{}
	}
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName":     string(PreToolUse),
		"additionalContext": ans.Context,
	}})
	return Answer{Stdout: string(b) + "\n"}
}

// gateFacts is what the gate knows of an action besides its text: the
// operator's labels and the role of the match that decides.
type gateFacts struct {
	labels []string
	role   string
}

// commandFacts are a classified command's labels and the strongest role
// among the findings that decided.
func commandFacts(r operator.Result, deciding []operator.Finding) gateFacts {
	f := gateFacts{labels: r.Labels}
	if w, ok := operator.Strongest(deciding); ok {
		f.role = w.String()
	}
	return f
}

// result is the recorded event's result: the decision and the facts, for
// caller c (whose presence decided how unsure calls are answered).
func (g gateFacts) result(decision string, c agentrun.Caller, findings []operator.Finding) json.RawMessage {
	labels := g.labels
	if labels == nil {
		labels = []string{}
	}
	res := fleet.GateResult{Decision: decision, Labels: labels, Role: g.role, Presence: c.Presence.String()}
	if len(findings) > 0 {
		res.Findings = findings
	}
	b, _ := json.Marshal(res) // strings and the operator's findings: cannot fail
	return b
}

// recordUnsure records a call the gate asked about, or let go ahead with a
// finding, on the caller's run, best effort: the run is opened when the
// caller names one (a session or LASERBRAIN_RUN), and a record that cannot
// be written is logged, not turned into a refusal.
func (h *Handler) recordUnsure(ctx context.Context, c agentrun.Caller, p Payload, facts gateFacts, decision string, findings []operator.Finding, text string) {
	if c.Run == "" && c.Session == "" {
		return
	}
	run, err := h.Sup.Open(ctx, c)
	var st fleet.Store
	if err == nil {
		st, err = h.Sup.Fleet()
	}
	if err == nil {
		var ok *bool // an ask: nobody knows yet
		if decision == fleet.GateAllow {
			yes := true
			ok = &yes
		}
		_, err = st.AppendEvent(ctx, run.ID, fleet.Event{ID: gateEventID(p, ""), At: h.now(), Kind: fleet.KindGate, Name: toolName(p), OK: ok,
			Result: facts.result(decision, c, findings), Text: text, Session: p.SessionID})
	}
	if err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: the gate's %s could not be recorded on the run: %v", PreToolUse, decision, err))
	}
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

// gate puts an action needing authorization to the operator, joined to
// the caller's run.
func (h *Handler) gate(ctx context.Context, p Payload, a operator.Action, actionText, why string, facts gateFacts) Answer {
	return h.gateAs(ctx, p, a, actionText, why, "", facts)
}

// gateAs is gate with the reason for a plain refusal (nobody authorized
// it) given by the caller; "" is the gate's own.
//
// When the run cannot be read because the store's database is out of
// reach, the action is refused with the reason (the command alone decided
// it needs the run; a call the gate clears never gets here).
func (h *Handler) gateAs(ctx context.Context, p Payload, a operator.Action, actionText, why, plain string, facts gateFacts) Answer {
	c := h.caller(p)
	run, found, err := h.Sup.Find(ctx, c)
	if errors.Is(err, agentrun.ErrStoreElsewhere) {
		return Answer{Delegate: true}
	}
	if isUnreachable(err) {
		return h.cannotRead(p, a, why, "the run", err, facts.result(fleet.GateDeny, c, nil))
	}
	if err != nil {
		return h.failed(PreToolUse, err)
	}
	op := &operator.Operator{}
	if found {
		task, err := h.Sup.Task(ctx, run)
		if isUnreachable(err) {
			return h.cannotRead(p, a, why, "the run", err, facts.result(fleet.GateDeny, c, nil))
		}
		if err != nil {
			return h.failed(PreToolUse, err)
		}
		if task != nil {
			op.Harness = task
		}
	}
	var granted fleet.Authorization
	op.Authorizer = operator.AuthorizerFunc(func(ctx context.Context, _ operator.Action) (bool, error) {
		st, err := h.Sup.Fleet()
		if err != nil {
			return false, err
		}
		// No authorization at all (the usual case): no need to resolve the
		// fleet, which costs a git process.
		if all, err := st.ListAuthorizations(ctx, ""); err != nil || len(all) == 0 {
			return false, err
		}
		fid := run.Fleet
		if !found {
			if fid, err = fleet.ID(ctx, c.Dir); err != nil {
				return false, err
			}
		}
		agent := run.Agent
		if agent == "" {
			agent = c.Agent
		}
		au, ok, err := fleet.Authorize(ctx, st, fid, run.ID, agent, actionText, h.now())
		granted = au
		return ok, err
	})
	err = op.Act(ctx, a, func(context.Context) error { return nil })
	var refused *operator.Refused
	switch {
	case err == nil:
		reason := fmt.Sprintf("laserbrain: authorized by %s (%s), use %d of %d", granted.ID, granted.By, len(granted.Used), granted.Uses)
		h.record(ctx, c, run, found, p, true, reason, facts.result(fleet.GateAllow, c, nil))
		return decision("allow", reason)
	case errors.As(err, &refused):
		reason := refusalReason(refused, a, why, plain)
		h.record(ctx, c, run, found, p, false, reason, facts.result(fleet.GateDeny, c, nil))
		return h.deny(reason)
	case errors.Is(err, agentrun.ErrStoreElsewhere):
		return Answer{Delegate: true}
	case isUnreachable(err):
		return h.cannotRead(p, a, why, "the authorizations", err, facts.result(fleet.GateDeny, c, nil))
	default:
		return h.failed(PreToolUse, err)
	}
}

// cannotRead refuses an action needing authorization whose run (or
// authorizations) the gate cannot read: the store's database is out of
// reach. The decision is queued for the run like the observers' events,
// and the session's first refusal explains the outage.
func (h *Handler) cannotRead(p Payload, a operator.Action, why, what string, cause error, result json.RawMessage) Answer {
	reason := "laserbrain: cannot read " + what + ": " + reasonOf(cause) + ". " + capitalize(actionWhat(a, why)) +
		", and nothing irreversible or outward runs while the run cannot be read; reversible actions go on. Do not retry it in another form."
	if h.firstTold(p.SessionID) {
		reason += " " + outageNotice(cause)
	}
	if err := h.enqueue(PreToolUse, h.input, &gateDecision{OK: false, Text: reason, Result: result}); err != nil {
		h.log(fmt.Sprintf("laserbrain hook pre-tool-use: the refusal could not be queued: %v", err))
	}
	return h.deny(reason)
}

// actionWhat says what kind of action was refused.
func actionWhat(a operator.Action, why string) string {
	what := "this command is irreversible or outward"
	if a.Kind == "write" {
		return "this file is protected (" + why + ")"
	}
	if why != "" {
		what += " — " + why
	}
	return what
}

// refusalReason is written for the model: what was refused, why, and what
// to do instead. The reasons differ by cause, so the agent (and a test)
// can tell a drifting run's refusal from a plain one; plain, when given,
// is the reason for a plain refusal.
func refusalReason(r *operator.Refused, a operator.Action, why, plain string) string {
	what := actionWhat(a, why)
	switch r.Code {
	case operator.RefusedDrift:
		return "laserbrain: refused because your run is drifting: " + r.Reason + ". " + capitalize(what) +
			", and nothing irreversible or outward runs while the run is off its ground. Check your state (check_state) and return to your goal first; do not retry it in another form."
	case operator.RefusedJudgment:
		return "laserbrain: refused because " + r.Reason + ": the run as a whole should stop, not act. " + capitalize(what) +
			". Do not retry it in another form; tell the user."
	case operator.RefusedNoReading:
		return "laserbrain: refused: " + r.Reason + ". " + capitalize(what) + "."
	}
	if plain != "" {
		return plain
	}
	return "laserbrain operator gate: " + what + ", and nobody authorized it. Do not retry it in another form; ask the user to run it or to authorize it."
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// record keeps the decision on the run, best effort: a decision that cannot
// be recorded still stands (a refusal must not turn into an allow). When
// the caller has no run yet, one is opened as for a noted allow.
func (h *Handler) record(ctx context.Context, c agentrun.Caller, run fleet.Run, found bool, p Payload, ok bool, text string, result json.RawMessage) {
	if !found {
		h.recordDecision(ctx, c, p, ok, text, result)
		return
	}
	h.recordOn(ctx, run.ID, p, ok, text, result)
}

// recordDecision keeps a gate decision on the caller's run, best effort,
// opening the run when the caller names one (LASERBRAIN_RUN, or a session)
// that is not registered yet: a Claude Code session whose SessionStart
// never reached the hooks has its refusals recorded like its noted allows,
// so a report counts both. A caller naming nothing has no run to keep it on.
func (h *Handler) recordDecision(ctx context.Context, c agentrun.Caller, p Payload, ok bool, text string, result json.RawMessage) {
	if c.Run == "" && c.Session == "" {
		return
	}
	run, err := h.Sup.Open(ctx, c)
	if err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: the gate's decision could not be recorded on the run: %v", PreToolUse, err))
		return
	}
	h.recordOn(ctx, run.ID, p, ok, text, result)
}

func (h *Handler) recordOn(ctx context.Context, runID string, p Payload, ok bool, text string, result json.RawMessage) {
	st, err := h.Sup.Fleet()
	if err != nil {
		return
	}
	_, _ = st.AppendEvent(ctx, runID, fleet.Event{ID: gateEventID(p, h.eventID("gate")), At: h.now(), Kind: fleet.KindGate, Name: toolName(p), OK: &ok,
		Result: result, Text: text, Session: p.SessionID})
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
// tool not known to be something else is shell-like when its input has a
// "command" string or array.
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
	raw, has := in["command"]
	if !has {
		if known {
			return "", true, fmt.Errorf("a %s event needs tool_input.command as a string", name)
		}
		return "", false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true, nil
	}
	var argv []string
	if json.Unmarshal(raw, &argv) == nil && len(argv) > 0 {
		return joinArgv(argv), true, nil
	}
	// A command we cannot read is not waved through.
	return "", true, fmt.Errorf("a %s event needs tool_input.command as a string", name)
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
