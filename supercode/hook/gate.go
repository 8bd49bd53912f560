package hook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/gate"
	"github.com/laserkit/laserkit/supercode/undo"
)

// preToolUse gates one tool call in one straight line: the runaway limit,
// laserbrain's own tools let through, the halt, the undo checkpoint (a
// step of its own, checkpoint.go, taken whatever is decided after),
// coverage (one call: coverageGate), then the event (one type for every
// client, supercode/client) is read into the operator's analysis — a
// write tool's files, or each shell command of the call —, the gate
// answers it (gate.Check: the analysis, who is there, the project policy,
// and the run's state and a person's authorizations when the answer
// depends on them), the decision is recorded once on the caller's run,
// and answered. A call with several commands (Cline's run_commands) has
// each decided: the first refused refuses the call.
func (h *Handler) preToolUse(ctx context.Context, e *event) (client.Reply, error) {
	if reason := h.Tracker.LimitToolCall(toolName(e), e.ToolUseID); reason != "" {
		return deny(reason), nil
	}
	t := e.Tool
	if t == nil {
		return client.Reply{}, errors.New(`the event has no "tool_name"`)
	}
	// laserbrain's own tools are reporting, never work: a halted agent may
	// still read why (supervision, check_state). The call goes next to our
	// MCP server, which may have no other way to know the session: the
	// client process is bound to it first (agentrun.BindSession).
	if t.Kind == client.KindOwn {
		h.bind(e)
		return client.Reply{}, nil
	}
	if ans, stop, err := h.halted(ctx, e); stop || err != nil {
		return ans, err
	}
	if e.Cwd != "" && !filepath.IsAbs(e.Cwd) {
		if abs, err := filepath.Abs(e.Cwd); err == nil {
			e.Cwd = abs
		}
	}
	// The undo checkpoint: a step of its own before anything decides.
	if ans, stop, err := h.checkpoint(ctx, e); stop || err != nil {
		return ans, err
	}
	warned, stop, err := h.coverageGate(ctx, e)
	if stop || err != nil {
		return warned, err
	}
	a, err := h.gateCall(ctx, e)
	if err == nil && !a.Denies() {
		a.Context = joinText(warned.Context, a.Context)
	}
	return a, err
}

// session is what the shell analysis is told of the caller's session:
// its environment (nil, this process's, where the hook runs as the
// session) and how its files stood at its first checkpoint.
func (h *Handler) session(ctx context.Context, e *event) shell.Session {
	var s shell.Session
	if h.Tracker != nil && h.Tracker.Getenv != nil {
		get := h.Tracker.Getenv
		s.Env = func(k string) (string, bool) {
			v := get(k)
			return v, v != ""
		}
	}
	run, ok := h.undoRun(h.caller(e))
	if !ok {
		return s
	}
	trees := map[string]map[string]undo.Blob{} // by work tree; nil: none recorded
	s.Started = func(p string) ([]byte, int64, bool, bool) {
		repo, err := undo.FindRepo(filepath.Dir(p))
		if err != nil {
			return nil, 0, false, false
		}
		files, read := trees[repo.Top]
		if !read {
			if st, err := undo.Default(); err == nil {
				if f, ok, err := st.StartFiles(ctx, run, repo.Top); ok && err == nil {
					files = f
				}
			}
			trees[repo.Top] = files
		}
		if files == nil {
			return nil, 0, false, false
		}
		rel, err := filepath.Rel(repo.Top, p)
		if err != nil {
			return nil, 0, false, false
		}
		b, found := files[filepath.ToSlash(rel)]
		return b.ID, b.Size, found, true
	}
	return s
}

// gateCall decides what the call does: a write's files, each shell
// command, read into the operator's analysis and answered by the gate
// (gate.Check: the caller, the analysis, the project policy; the run and
// a person's authorizations read only when the answer needs them, once
// for the whole call).
func (h *Handler) gateCall(ctx context.Context, e *event) (client.Reply, error) {
	t := e.Tool
	var analyses []shell.Analysis
	switch t.Kind {
	case client.KindWrite:
		analyses = append(analyses, shell.AnalyzeWrite(t.Name, e.Cwd, t.Files...))
	case client.KindShell:
		// Read in the event's directory: "git checkout NAME" discards
		// NAME's changes when NAME is a file there; a script the command
		// runs is read from there.
		s := h.session(ctx, e)
		for _, c := range t.Commands {
			analyses = append(analyses, shell.AnalyzeIn(c.Line, e.Cwd, s))
		}
	default:
		return client.Reply{}, nil
	}
	pol, err := h.policy(e)
	if err != nil {
		return client.Reply{}, err // unchecked: laserbrain checks it
	}
	c := h.caller(e)
	src := &onceRun{Tracker: h.Tracker}
	var held client.Reply
	for i, an := range analyses {
		ev := e
		if i > 0 {
			// Each command's decision is recorded under an id of its own.
			each := *e
			each.ToolUseID = fmt.Sprintf("%s#%d", e.ToolUseID, i)
			ev = &each
		}
		d, run, found, err := gate.Check(ctx, src, gate.Input{Caller: c, Analysis: an, Policy: pol})
		if err != nil {
			return h.cannotReadOr(ev, d, err)
		}
		rewrite := ""
		if len(analyses) == 1 {
			d, rewrite = h.throughAct(c, e, an, d)
		}
		h.record(ctx, c, run, found, ev, d)
		a := answer(d)
		a.Rewrite = rewrite
		if a.Denies() {
			return a, nil
		}
		// An ask outweighs an allow, and either a note.
		if rank(a) > rank(held) {
			held = a
		} else if held.Decision == nil && a.Context != "" && held.Context != "" {
			held.Context += "\n" + a.Context
		}
	}
	h.pin(e, readFiles(analyses), &held)
	return held, nil
}

// onceRun is the gate's source for one call: the caller's run is read
// once, however many of its commands need it.
type onceRun struct {
	*agentrun.Tracker
	read  bool
	rs    operator.RunState
	run   fleet.Run
	found bool
}

func (o *onceRun) RunState(ctx context.Context, c agentrun.Caller) (operator.RunState, fleet.Run, bool, error) {
	if !o.read {
		rs, run, found, err := o.Tracker.RunState(ctx, c)
		if err != nil {
			return rs, run, found, err
		}
		o.rs, o.run, o.found, o.read = rs, run, found, true
	}
	return o.rs, o.run, o.found, nil
}

// bind binds the client process to e's session, unless laserbrain run
// names the run (the MCP server has it then). A binding that cannot be
// written costs the call nothing: it is logged, and the server checks on
// a run of its own.
func (h *Handler) bind(e *event) {
	c := h.caller(e)
	if c.Run != "" || c.Session == "" {
		return
	}
	// Without /proc (or with the client gone) there is nothing to bind.
	if err := h.Tracker.BindSession(c); err != nil && !errors.Is(err, fs.ErrNotExist) {
		h.log(fmt.Sprintf("laserbrain hook %s: the MCP server cannot be told this session (%v); its checks go to a run of its own", PreToolUse, err))
	}
}

func rank(a client.Reply) int {
	if d, decided := a.Decided(); decided {
		switch d {
		case operator.Ask:
			return 3
		case operator.Allow:
			return 2
		}
	}
	if a.Context != "" {
		return 1
	}
	return 0
}

// answer is a decision as the hook gives it (the client's adapter encodes
// it): a refusal, an ask, an allow by a person's authorization, an allow
// with a note for the model (no permission decision: the agent's own rules
// still decide), or nothing.
func answer(d operator.Decision) client.Reply {
	switch {
	case d.Action == operator.Deny:
		return deny(d.Reason)
	case d.Action == operator.Ask:
		return client.Decide(operator.Ask, d.Reason)
	case d.UseAuthorization:
		return client.Decide(operator.Allow, d.Reason)
	}
	return client.Reply{Context: d.Context}
}

func deny(reason string) client.Reply { return client.Decide(operator.Deny, reason) }

// record keeps a decision on the caller's run, best effort (a decision
// that cannot be recorded still stands: a refusal must not turn into an
// allow): refusals, asks, calls that went ahead with a note, by a person's
// authorization or by the project policy. A plain allow records nothing.
// When the caller has no run yet but names one (LASERBRAIN_RUN, or a
// session), it is opened, so a report counts every decision.
func (h *Handler) record(ctx context.Context, c agentrun.Caller, run fleet.Run, found bool, e *event, d operator.Decision) {
	if d.Action == operator.Allow && (d.Rule == operator.RuleNothing || d.Rule == operator.RuleCarveOut) {
		return
	}
	if !found {
		if c.Run == "" && c.Session == "" {
			return
		}
		var err error
		if run, err = h.Tracker.Open(ctx, c); err != nil {
			h.log(fmt.Sprintf("laserbrain hook %s: the gate's decision could not be recorded on the run: %v", PreToolUse, err))
			return
		}
	}
	st, err := h.Tracker.Fleet()
	if err != nil {
		return
	}
	var ok laserbrain.OK // an ask: nobody knows yet
	if d.Action != operator.Ask {
		ok = laserbrain.OKOf(d.Action == operator.Allow)
	}
	_, err = st.AppendEvent(ctx, run.ID, fleet.RunEvent{ID: gateEventID(e, h.eventID("gate")), At: h.now(), Kind: fleet.KindGate, Name: toolName(e), OK: ok,
		Result: agentrun.GateResult(d), Text: d.Reason, Session: e.Session, Subagent: subagentOf(e)})
	if err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: the gate's %s could not be recorded on the run: %v", PreToolUse, d.Action, err))
	}
}

func gateEventID(e *event, fallback string) string {
	if e.ToolUseID != "" {
		return "gate:" + e.ToolUseID
	}
	return fallback
}

func toolName(e *event) string {
	if e.Tool != nil {
		return e.Tool.Name
	}
	return ""
}

// subagentOf names the subagent that made a call, for the run's events:
// its type, else its id ("" for the session's own agent).
func subagentOf(e *event) string {
	if e.Subagent == nil {
		return ""
	}
	if e.Subagent.Type != "" {
		return e.Subagent.Type
	}
	return e.Subagent.ID
}

// cannotReadOr answers a failure to read the run or its authorizations:
// a binary that cannot read the store hands the event on; a database out
// of reach refuses the action (cannotRead); anything else is a guard
// error.
func (h *Handler) cannotReadOr(e *event, d operator.Decision, err error) (client.Reply, error) {
	if isUnreachable(err) {
		return h.cannotRead(e, d, err), nil
	}
	return client.Reply{}, err
}

// cannotRead refuses an action needing authorization whose run (or
// authorizations) the gate cannot read: the store's database is out of
// reach. The decision is queued for the run like the observers' events,
// and the session's first refusal explains the outage.
func (h *Handler) cannotRead(e *event, d operator.Decision, cause error) client.Reply {
	what := "this command is irreversible or outward"
	if d.Kind == "write" {
		what = "this file is protected"
	}
	reason := "laserbrain: cannot read the run" + late(cause) + ": " + reasonOf(cause) + ". " + capitalize(what) +
		", and nothing irreversible or outward runs while the run cannot be read; reversible actions go on. Do not retry it in another form."
	if h.firstTold(e.Session) {
		reason += " " + outageNotice(cause)
	}
	d.Action, d.Reason = operator.Deny, reason
	if err := h.enqueue(e, &gateDecision{OK: false, Text: reason, Result: agentrun.GateResult(d)}); err != nil {
		h.log(fmt.Sprintf("laserbrain hook pre-tool-use: the refusal could not be queued: %v", err))
	}
	return deny(reason)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
