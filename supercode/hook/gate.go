package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// preToolUse gates one tool call. A shell command the operator classifies
// as irreversible or outward, and a write into a protected path, is an
// action needing authorization: it goes through operator.Act joined to the
// caller's run, so it is refused while the run drifts or its judgment says
// abandon, wrong-problem or repeating, and otherwise needs a person's
// authorization (laserbrain authorize), looked up afresh for every action.
// A call with several commands (Cline's run_commands) has each gated: the
// first refused refuses the call.
func (h *Handler) preToolUse(ctx context.Context, e client.Event) (client.Answer, error) {
	if reason := h.Sup.LimitToolCall(toolName(e), e.ToolUseID); reason != "" {
		return deny(reason), nil
	}
	t := e.Tool
	if t == nil {
		return client.Answer{}, errors.New(`the event has no "tool_name"`)
	}
	// laserbrain's own tools are reporting, never work: a halted agent may
	// still read why (supervision, check_state). The call goes next to our
	// MCP server, which may have no other way to know the session: the
	// client process is bound to it first (agentrun.BindSession).
	if t.Kind == client.KindOwn {
		h.bind(e)
		return client.Answer{}, nil
	}
	if ans, stop, err := h.halted(ctx, e); stop || err != nil {
		return ans, err
	}
	switch t.Kind {
	case client.KindWrite:
		return h.gateWrite(ctx, e)
	case client.KindShell:
	default:
		return client.Answer{}, nil
	}
	var held client.Answer
	for i, c := range t.Commands {
		a, err := h.gateCommand(ctx, e, i, c.Line)
		if err != nil || a.Decision == client.Deny {
			return a, err
		}
		// An ask outweighs an allow, and either a note.
		if rank(a) > rank(held) {
			held = a
		} else if held.Decision == client.None && a.Context != "" && held.Context != "" {
			held.Context += "\n" + a.Context
		}
	}
	return held, nil
}

// bind binds the client process to e's session, unless laserbrain run
// names the run (the MCP server has it then). A binding that cannot be
// written costs the call nothing: it is logged, and the server checks on
// a run of its own.
func (h *Handler) bind(e client.Event) {
	c := h.caller(e)
	if c.Run != "" || c.Session == "" {
		return
	}
	// Without /proc (or with the client gone) there is nothing to bind.
	if err := h.Sup.BindSession(c); err != nil && !errors.Is(err, fs.ErrNotExist) {
		h.log(fmt.Sprintf("laserbrain hook %s: the MCP server cannot be told this session (%v); its checks go to a run of its own", PreToolUse, err))
	}
}

func rank(a client.Answer) int {
	switch a.Decision {
	case client.Ask:
		return 3
	case client.Allow:
		return 2
	}
	if a.Context != "" {
		return 1
	}
	return 0
}

// gateWrite gates a write tool's files: into what is never authorizable,
// refused; into other protected files, an action needing authorization.
func (h *Handler) gateWrite(ctx context.Context, e client.Event) (client.Answer, error) {
	var protected []string
	whats := ""
	for _, path := range e.Tool.Files {
		what, abs, ok := protectedPath(path, e.Cwd)
		if outright(what) {
			return h.refuseWrite(ctx, e, what, fmt.Sprintf("%s would write %s", e.Tool.Name, abs)), nil
		}
		if ok {
			protected = append(protected, abs)
			whats = what
		}
	}
	if len(protected) == 0 {
		return client.Answer{}, nil
	}
	target := strings.Join(protected, ", ")
	a := operator.Action{Kind: "write", Target: target, Reversible: false}
	return h.gate(ctx, e, a, "write "+target, whats, gateFacts{labels: []string{"protected file: " + whats}})
}

// gateCommand gates one shell command of a call (the i-th).
func (h *Handler) gateCommand(ctx context.Context, e client.Event, i int, command string) (client.Answer, error) {
	if i > 0 {
		// Each command's decision is recorded under an id of its own.
		e.ToolUseID = fmt.Sprintf("%s#%d", e.ToolUseID, i)
	}
	// Read in the event's directory: "git checkout NAME" discards NAME's
	// changes when NAME is a file there, and switches branches otherwise.
	r := operator.ClassifyIn(e.Cwd, command, true, false)
	// A person's command (laserbrain authorize, …) is refused whoever is
	// there, and no authorization lets it through.
	if f, ok := r.PersonOnly(); ok {
		return h.refuseOutright(ctx, e, operator.PersonOnlyReason(f), strings.TrimPrefix(f.Label, "parsed: ")), nil
	}
	// Where the command writes: into what is never authorizable, refused;
	// into other protected files, an action needing authorization like a
	// Write of them; a protected file named where the gate cannot tell
	// whether the command writes it, not cleared.
	never, neverAbs, writes, unsure := shellWrites(command, e.Cwd)
	if never != "" {
		return h.refuseWrite(ctx, e, never, writeWhy("command", neverAbs)), nil
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
		return h.gate(ctx, e, a, command, r.Why, commandFacts(r, r.Findings))
	case operator.Ask:
		return h.unsure(ctx, e, command, r)
	}
	return client.Answer{}, nil
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
func (h *Handler) unsure(ctx context.Context, e client.Event, command string, r operator.Result) (client.Answer, error) {
	c := h.caller(e)
	ans := r.HookAnswerFor(c.Presence, c.PresenceWhy)
	facts := commandFacts(r, ans.Findings)
	switch ans.Decision {
	case operator.Ask:
		h.recordUnsure(ctx, c, e, facts, fleet.GateAsk, nil, ans.Reason)
		return client.Answer{Decision: client.Ask, Reason: ans.Reason}, nil
	case operator.Deny:
		a := operator.Action{Kind: "shell", Target: command, Reversible: false, Outward: r.Outward}
		return h.gateAs(ctx, e, a, command, r.Why, ans.Reason, facts)
	}
	if len(ans.Findings) > 0 {
		h.recordUnsure(ctx, c, e, facts, fleet.GateAllow, ans.Findings, ans.Context)
	}
	return client.Answer{Context: ans.Context}, nil
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
func (h *Handler) recordUnsure(ctx context.Context, c agentrun.Caller, e client.Event, facts gateFacts, decision string, findings []operator.Finding, text string) {
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
		_, err = st.AppendEvent(ctx, run.ID, fleet.Event{ID: gateEventID(e, ""), At: h.now(), Kind: fleet.KindGate, Name: toolName(e), OK: ok,
			Result: facts.result(decision, c, findings), Text: text, Session: e.Session, Subagent: subagentOf(e)})
	}
	if err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: the gate's %s could not be recorded on the run: %v", PreToolUse, decision, err))
	}
}

func gateEventID(e client.Event, fallback string) string {
	if e.ToolUseID != "" {
		return "gate:" + e.ToolUseID
	}
	return fallback
}

func toolName(e client.Event) string {
	if e.Tool != nil {
		return e.Tool.Name
	}
	return ""
}

// subagentOf names the subagent that made a call, for the run's events:
// its type, else its id ("" for the session's own agent).
func subagentOf(e client.Event) string {
	if e.Subagent == nil {
		return ""
	}
	if e.Subagent.Type != "" {
		return e.Subagent.Type
	}
	return e.Subagent.ID
}

// gate puts an action needing authorization to the operator, joined to
// the caller's run.
func (h *Handler) gate(ctx context.Context, e client.Event, a operator.Action, actionText, why string, facts gateFacts) (client.Answer, error) {
	return h.gateAs(ctx, e, a, actionText, why, "", facts)
}

// gateAs is gate with the reason for a plain refusal (nobody authorized
// it) given by the caller; "" is the gate's own.
//
// When the run cannot be read because the store's database is out of
// reach, the action is refused with the reason (the command alone decided
// it needs the run; a call the gate clears never gets here).
func (h *Handler) gateAs(ctx context.Context, e client.Event, a operator.Action, actionText, why, plain string, facts gateFacts) (client.Answer, error) {
	c := h.caller(e)
	run, found, err := h.Sup.Find(ctx, c)
	if isUnreachable(err) {
		return h.cannotRead(e, a, why, "the run", err, facts.result(fleet.GateDeny, c, nil)), nil
	}
	if err != nil {
		return client.Answer{}, err
	}
	op := &operator.Operator{}
	if found {
		task, err := h.Sup.Task(ctx, run)
		if isUnreachable(err) {
			return h.cannotRead(e, a, why, "the run", err, facts.result(fleet.GateDeny, c, nil)), nil
		}
		if err != nil {
			return client.Answer{}, err
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
		h.record(ctx, c, run, found, e, true, reason, facts.result(fleet.GateAllow, c, nil))
		return client.Answer{Decision: client.Allow, Reason: reason}, nil
	case errors.As(err, &refused):
		reason := refusalReason(refused, a, why, plain)
		h.record(ctx, c, run, found, e, false, reason, facts.result(fleet.GateDeny, c, nil))
		return deny(reason), nil
	case isUnreachable(err):
		return h.cannotRead(e, a, why, "the authorizations", err, facts.result(fleet.GateDeny, c, nil)), nil
	default:
		return client.Answer{}, err
	}
}

// cannotRead refuses an action needing authorization whose run (or
// authorizations) the gate cannot read: the store's database is out of
// reach. The decision is queued for the run like the observers' events,
// and the session's first refusal explains the outage.
func (h *Handler) cannotRead(e client.Event, a operator.Action, why, what string, cause error, result json.RawMessage) client.Answer {
	reason := "laserbrain: cannot read " + what + ": " + reasonOf(cause) + ". " + capitalize(actionWhat(a, why)) +
		", and nothing irreversible or outward runs while the run cannot be read; reversible actions go on. Do not retry it in another form."
	if h.firstTold(e.Session) {
		reason += " " + outageNotice(cause)
	}
	if err := h.enqueue(PreToolUse, h.input, &gateDecision{OK: false, Text: reason, Result: result}); err != nil {
		h.log(fmt.Sprintf("laserbrain hook pre-tool-use: the refusal could not be queued: %v", err))
	}
	return deny(reason)
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
func (h *Handler) record(ctx context.Context, c agentrun.Caller, run fleet.Run, found bool, e client.Event, ok bool, text string, result json.RawMessage) {
	if !found {
		h.recordDecision(ctx, c, e, ok, text, result)
		return
	}
	h.recordOn(ctx, run.ID, e, ok, text, result)
}

// recordDecision keeps a gate decision on the caller's run, best effort,
// opening the run when the caller names one (LASERBRAIN_RUN, or a session)
// that is not registered yet: a Claude Code session whose SessionStart
// never reached the hooks has its refusals recorded like its noted allows,
// so a report counts both. A caller naming nothing has no run to keep it on.
func (h *Handler) recordDecision(ctx context.Context, c agentrun.Caller, e client.Event, ok bool, text string, result json.RawMessage) {
	if c.Run == "" && c.Session == "" {
		return
	}
	run, err := h.Sup.Open(ctx, c)
	if err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: the gate's decision could not be recorded on the run: %v", PreToolUse, err))
		return
	}
	h.recordOn(ctx, run.ID, e, ok, text, result)
}

func (h *Handler) recordOn(ctx context.Context, runID string, e client.Event, ok bool, text string, result json.RawMessage) {
	st, err := h.Sup.Fleet()
	if err != nil {
		return
	}
	_, _ = st.AppendEvent(ctx, runID, fleet.Event{ID: gateEventID(e, h.eventID("gate")), At: h.now(), Kind: fleet.KindGate, Name: toolName(e), OK: &ok,
		Result: result, Text: text, Session: e.Session, Subagent: subagentOf(e)})
}

// deny is a refusal, with its reason for the model.
func deny(reason string) client.Answer { return client.Answer{Decision: client.Deny, Reason: reason} }
