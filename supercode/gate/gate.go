// Package gate answers an action an agent is about to take — a shell
// command, or a file tool's write — for everything that gates one: the
// pre-tool-use hook, laserbrain loop's SCRIPT and the MCP server's
// classify tool, each with its own Input. The action is read once into a
// small typed Input (who asks and whether a person is there, the one
// analysis, the project policy, what the caller's run says, the
// authorizations a person gave for exactly this action); Decide is the
// one pure decision on it; Check is the thin I/O around Decide, which
// reads the run and the authorizations only when the action's decision
// depends on them, and spends the use of the authorization the answer
// relies on.
package gate

import (
	"context"
	"slices"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Input is everything the gate's answer to one action depends on.
type Input struct {
	// Caller is who asks: its presence (and what said so) decides what an
	// unclear action gets; its run, agent and directory where a person's
	// authorization is looked for.
	Caller agentrun.Caller
	// Analysis is the one reading of the action (shell.Analyze or
	// shell.AnalyzeWrite); Policy the project policy where it runs.
	Analysis shell.Analysis
	Policy   operator.Policy
	// Run is what the caller's run says (Read false: not read; the answer
	// then says whether it needs it). Grants are the live authorizations
	// that name exactly this action for the caller, witnessed, the one to
	// spend first first (read with Run).
	Run    operator.RunState
	Grants []fleet.Authorization
}

// decide is the operator's one decision (a test counts its calls).
var decide = operator.Decide

// Decide is the gate's one decision: the operator's decision of the
// action for the caller's presence under the policy, with what the run
// says when it was read, and a person's authorization of exactly this
// action when the answer is a refusal that one lifts.
func Decide(in Input) operator.Decision {
	rs := in.Run
	rs.PresenceWhy = in.Caller.PresenceWhy
	return authorize(decide(in.Analysis, in.Caller.Presence, rs, in.Policy), in.Grants)
}

// authorize lets a refusal that a person's authorization lifts through
// when one is there: the answer relies on the first one's next use.
func authorize(d operator.Decision, grants []fleet.Authorization) operator.Decision {
	if !d.WantsAuthorization() || d.NeedsRun || len(grants) == 0 {
		return d
	}
	next := grants[0]
	next.Used = append(slices.Clone(next.Used), fleet.Use{})
	return d.Authorized(agentrun.AuthorizedBy(next))
}

// Source is what Check reads and spends: the caller's run, and the
// authorizations of an action (agentrun.Tracker is one).
type Source interface {
	// RunState reads what the caller's run says; run is that run, found
	// false when the caller has none yet.
	RunState(ctx context.Context, c agentrun.Caller) (rs operator.RunState, run fleet.Run, found bool, err error)
	// Grants are the live, witnessed authorizations that name exactly
	// action (an operator action key) for the caller on run.
	Grants(ctx context.Context, c agentrun.Caller, run fleet.Run, found bool, action string) ([]fleet.Authorization, error)
	// Spend spends one use of the first of grants with one left.
	Spend(ctx context.Context, run fleet.Run, grants []fleet.Authorization) (fleet.Authorization, bool, error)
}

// ReadError is a failure to read what the answer depends on: the
// decision that comes with it is the one before it (a refusal).
type ReadError struct {
	What string // "the run" or "the authorizations"
	Err  error
}

func (e *ReadError) Error() string { return "reading " + e.What + ": " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Check answers in, reading from src what the answer depends on and
// nothing else: the run only when the action's decision needs it, the
// authorizations only when the run lets one lift the refusal. Decide
// runs once. One use of an authorization the answer relies on is spent;
// when other processes spent them all first, the answer is the refusal.
func Check(ctx context.Context, src Source, in Input) (d operator.Decision, run fleet.Run, found bool, err error) {
	d = Decide(in)
	if !d.NeedsRun {
		return d, run, found, nil
	}
	rs, run, found, err := src.RunState(ctx, in.Caller)
	if err != nil {
		return d, run, found, &ReadError{"the run", err}
	}
	if d = d.InRun(rs); !d.WantsAuthorization() {
		return d, run, found, nil
	}
	grants, err := src.Grants(ctx, in.Caller, run, found, d.Target)
	if err != nil || len(grants) == 0 {
		return d, run, found, readError("the authorizations", err)
	}
	a, ok, err := src.Spend(ctx, run, grants)
	if ok {
		d = d.Authorized(agentrun.AuthorizedBy(a))
	}
	return d, run, found, readError("the authorizations", err)
}

// readError is err as a ReadError of what, or nil.
func readError(what string, err error) error {
	if err == nil {
		return nil
	}
	return &ReadError{what, err}
}
