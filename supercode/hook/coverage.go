package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Coverage in the hooks: the engine (supercode/coverage) decides, the hook
// reads and keeps its record on the caller's run (fleet.Run.Coverage, in
// whichever store holds the run) and answers. Every event counts: a tool
// call's outcome a step, check_state's post-tool-use a check; the gate
// reads the record before each call.

// coverageConfig is how this event's caller is held to coverage (its
// run's variables over the project policy where it works), read once per
// event.
func (h *Handler) coverageConfig(e *event) (coverage.Config, error) {
	if e.coverage == nil {
		pol, err := h.policy(e)
		if err != nil {
			return coverage.Config{}, err
		}
		cfg, err := h.Tracker.CoverageConfig(pol)
		if err != nil {
			return coverage.Config{}, err
		}
		e.coverage = &cfg
	}
	return *e.coverage, nil
}

// policy is the project policy of the directory the event comes from
// (agentrun.LoadPolicy), read once per event: the gate and coverage read
// the same one. An event that names no directory comes from the one the
// client runs its hooks in, this process's. A policy this binary cannot
// check is operator.ErrPolicyUnchecked, which hands the event to
// laserbrain.
func (h *Handler) policy(e *event) (operator.Policy, error) {
	if e.policy == nil {
		dir := e.Cwd
		if dir == "" {
			dir = h.Tracker.WorkDir()
		}
		pol, err := agentrun.LoadPolicy(dir, h.ValidatePolicy)
		if err != nil {
			return pol, err
		}
		e.policy = &pol
	}
	return *e.policy, nil
}

// covEvent is an event as coverage reads it.
func (h *Handler) covEvent(e *event) coverage.HookEvent {
	ev := coverage.HookEvent{Name: string(e.Name), Session: e.Session, Agent: h.caller(e).Agent, Reason: e.Reason,
		StopHookActive: e.StopHookActive, CheckTool: client.CheckTool(h.clientName())}
	if t := e.Tool; t != nil {
		ev.Tool, ev.Kind, ev.Own, ev.Input = t.Name, coverage.Kind(t.Kind), t.Own, t.Input
		if t.Kind == client.KindWrite {
			ev.Files = t.Files
		}
		if t.Kind == client.KindShell && len(t.Commands) > 0 {
			checking := true
			for _, c := range t.Commands {
				checking = checking && client.IsCheckCommand(c.Line)
			}
			if checking {
				// The command checks by itself (laserbrain check, keyed by
				// LASERBRAIN_RUN): never held, and counted where it runs.
				ev.Own = coverage.CheckCommand
			}
		}
	}
	if r := e.Response; r != nil {
		ev.Response, ev.OK = r.Raw, r.OK
	}
	// An empty prompt is nobody speaking (Qwen Code's after every round).
	if e.Name == UserPromptSubmit && strings.TrimSpace(e.Prompt) != "" {
		p := e.Prompt
		ev.Prompt = &p
	}
	return ev
}

func (h *Handler) clientName() client.Name {
	if h.Client == "" {
		return client.Claude
	}
	return h.Client
}

// coverageGate holds a call to coverage, in one call right after the halt
// check: a call past the threshold without a check is refused (recorded on
// the run as a refusal for coverage, which laserbrain coverage counts), a
// read in the warning band runs with the warning before the model, and
// laserbrain's own tools always pass. stop reports that the call is
// answered. A caller with no run has no record yet, and passes; a store
// out of reach cannot say how many steps passed, and the call is decided
// without coverage (the failure policy: the operator gate still decides).
func (h *Handler) coverageGate(ctx context.Context, e *event) (ans client.Reply, stop bool, err error) {
	cfg, err := h.coverageConfig(e)
	if err != nil {
		return client.Reply{}, true, err
	}
	if cfg.Mode == coverage.Off {
		return client.Reply{}, false, nil
	}
	run, found, err := h.run(ctx, e)
	if isUnreachable(err) {
		return client.Reply{}, false, nil
	}
	if err != nil || !found {
		return client.Reply{}, err != nil, err
	}
	rec, err := agentrun.CoverageRecord(run)
	if err != nil {
		return client.Reply{}, true, err
	}
	in := coverage.Input{Event: h.covEvent(e), Record: rec}
	if cfg.NeedsLink(in.Event) {
		l, err := h.Tracker.Link(run.Fleet)
		if err == nil {
			in.Link, err = l.Lines()
		}
		if err != nil {
			return client.Reply{}, true, fmt.Errorf("reading the link for claims: %w", err)
		}
	}
	d := cfg.Gate(in)
	if d.Record != nil {
		// The reference reports a session's probe arm once; only that
		// mark changes.
		st, err := h.Tracker.Fleet()
		if err == nil {
			_, err = st.UpdateRun(ctx, run.ID, func(r *fleet.Run) error {
				cur, err := agentrun.CoverageRecord(*r)
				if err != nil || cur == nil {
					return err
				}
				cur.ArmLogged = true
				return agentrun.SetCoverageRecord(r, cur)
			})
		}
		if err != nil {
			h.log(fmt.Sprintf("laserbrain hook %s: the probe arm could not be kept: %v", e.Name, err))
		}
	}
	switch {
	case d.Warns():
		return client.Reply{Context: d.Reason}, false, nil
	case d.Answer == operator.Deny:
		label := coverage.Label(d.Stage)
		if d.Rule == coverage.RuleClaim {
			label = coverage.RuleClaim + ": " + d.Claim.Path + " (" + d.Claim.Agent + ")"
		}
		h.recordRefusal(ctx, run, e, label, d.Reason)
		return deny(d.Reason), true, nil
	}
	return client.Reply{}, false, nil
}

// recordRefusal keeps a refusal on the run as a gate event with its label
// (best effort: the refusal stands whether or not it is recorded).
func (h *Handler) recordRefusal(ctx context.Context, run fleet.Run, e *event, label, reason string) {
	st, err := h.Tracker.Fleet()
	if err == nil {
		c := h.caller(e)
		res, _ := json.Marshal(fleet.GateResult{Decision: operator.Deny, Labels: []string{label}, Presence: c.Presence.String()})
		_, err = st.AppendEvent(ctx, run.ID, fleet.RunEvent{ID: gateEventID(e, h.eventID("gate")), At: h.now(), Kind: fleet.KindGate,
			Name: toolName(e), OK: laserbrain.OKFalse, Result: res, Text: reason, Session: e.Session, Subagent: subagentOf(e)})
	}
	if err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: the refusal could not be recorded on the run: %v", PreToolUse, err))
	}
}

// observeCoverage takes an observed event into run's coverage record (a
// step, a check, a ground, a reset) and says what the model is to be told:
// a reminder as context, or a Stop held for a last check.
func (h *Handler) observeCoverage(ctx context.Context, e *event, run fleet.Run) (coverage.Outcome, error) {
	cfg, err := h.coverageConfig(e)
	if err != nil || cfg.Mode == coverage.Off {
		return coverage.Outcome{}, err
	}
	ev := h.covEvent(e)
	if cfg.NeedsTokens(ev) && e.Transcript != "" {
		if f, err := os.Open(e.Transcript); err == nil {
			if n, ok := coverage.TranscriptTokens(f); ok {
				ev.Tokens = &n
			}
			f.Close()
		}
	}
	rec, err := agentrun.Grounded(run)
	if err != nil {
		return coverage.Outcome{}, err
	}
	out := cfg.Observe(coverage.Input{Event: ev, Record: rec})
	if !out.Changed {
		return out, nil
	}
	// Kept under the run's lock, on the record as it is now: hooks of one
	// run fire at once (a call's parallel siblings, a subagent's).
	st, err := h.Tracker.Fleet()
	if err != nil {
		return out, err
	}
	_, err = st.UpdateRun(ctx, run.ID, func(r *fleet.Run) error {
		cur, err := agentrun.Grounded(*r)
		if err != nil {
			return err
		}
		out = cfg.Observe(coverage.Input{Event: ev, Record: cur})
		if !out.Changed {
			return nil
		}
		return agentrun.SetCoverageRecord(r, out.Record)
	})
	return out, err
}

// sessionBrief is what a session is told at its start: the notation of a
// reasoning state from the grammar, the run's ground (laserbrain run
// --goal, else the record's) and how coverage holds it, with the name the
// client gives check_state.
func (h *Handler) sessionBrief(e *event, run fleet.Run) (string, error) {
	cfg, err := h.coverageConfig(e)
	if err != nil {
		return "", err
	}
	ground := run.Goal
	if ground == "" {
		if rec, err := agentrun.CoverageRecord(run); err == nil && rec != nil {
			ground = rec.Goal
		}
	}
	return cfg.Brief(ground, client.CheckTool(h.clientName())), nil
}
