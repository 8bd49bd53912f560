package agentrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// What the gate reads and writes in the stores for everything that gates
// an agent's actions (package gate: the pre-tool-use hook, laserbrain
// loop): the run's state, a person's authorizations of exactly the
// action and the spending of one use, the project policy, and the
// decision as recorded.

// RunState reads what the caller's run says for the gate: whether it has
// a task the operator checks, that task's latest drift verdict and its
// whole-run judgment. found is false when the caller has no run yet.
func (s *Tracker) RunState(ctx context.Context, c Caller) (rs operator.RunState, run fleet.Run, found bool, err error) {
	rs = operator.RunState{Read: true, PresenceWhy: c.PresenceWhy}
	run, found, err = s.Find(ctx, c)
	if err != nil || !found {
		return rs, run, found, err
	}
	task, err := s.TaskState(ctx, run)
	if err != nil {
		return rs, run, found, err
	}
	AttachTask(&rs, task)
	return rs, run, found, nil
}

// AttachTask puts what the run's task says for the gate on rs: that there
// is one, its latest drift verdict and its whole-run judgment. A nil task
// leaves rs as it is.
func AttachTask(rs *operator.RunState, task *laserbrain.Run) {
	if task == nil {
		return
	}
	rs.Attached = true
	var reason string
	rs.Drifting, reason, rs.Reading = task.LastVerdict()
	if rs.Drifting {
		rs.DriftReason = reason
	}
	rs.Judgment = task.Judgment()
}

// Grants are a person's live authorizations that name exactly action for
// the caller (fleet.Grants): in the run's fleet for the run and its agent,
// or, for a caller with no run yet, in the fleet of its directory. Most
// calls find no authorization at all, which needs no fleet id (a git
// process).
func (s *Tracker) Grants(ctx context.Context, c Caller, run fleet.Run, found bool, action string) ([]fleet.Authorization, error) {
	st, err := s.Fleet()
	if err != nil {
		return nil, err
	}
	if all, err := st.ListAuthorizations(ctx, ""); err != nil || len(all) == 0 {
		return nil, err
	}
	fid := run.Fleet
	if !found {
		if fid, err = fleet.IDEnv(ctx, c.Dir, s.getenv); err != nil {
			return nil, err
		}
	}
	agent := run.Agent
	if agent == "" {
		agent = c.Agent
	}
	return fleet.Grants(ctx, st, fid, run.ID, agent, action, s.now())
}

// Spend spends one use of the first of grants with one left, for run
// (fleet.Spend).
func (s *Tracker) Spend(ctx context.Context, run fleet.Run, grants []fleet.Authorization) (fleet.Authorization, bool, error) {
	st, err := s.Fleet()
	if err != nil {
		return fleet.Authorization{}, false, err
	}
	return fleet.Spend(ctx, st, grants, run.ID, s.now())
}

// AuthorizedBy says which authorization let an action through.
func AuthorizedBy(a fleet.Authorization) string {
	return fmt.Sprintf("%s (%s), use %d of %d", a.ID, a.By, len(a.Used), a.Uses)
}

// GateResult is a decision as the run records it.
func GateResult(d operator.Decision) json.RawMessage {
	labels := d.Labels
	if labels == nil {
		labels = []string{}
	}
	res := fleet.GateResult{Decision: d.Action, Labels: labels, Role: d.Role, Presence: d.Presence.String(), Rule: d.Rule, Policy: d.Policy}
	if d.Action != operator.Allow || d.UseAuthorization {
		// What a person's authorization must name to let it through.
		res.Action = d.Target
	}
	if d.Action == operator.Allow && len(d.Findings) > 0 {
		res.Findings = d.Findings
	}
	b, _ := json.Marshal(res) // strings and the operator's findings: cannot fail
	return b
}

// Authorizable says whether a person may authorize the shell command for
// an agent working in dir (operator.Authorizable under the project policy
// there), and why not: laserbrain authorize and laserbrain ui ask it.
func Authorizable(command, dir string, validate operator.PolicyValidator) (bool, string, error) {
	return authorizable(command, dir, validate, operator.Authorizable)
}

// ActAuthorizable says whether a person may authorize the shell command
// for laserbrain act, for an agent working in dir (operator
// ActAuthorizable), and why not.
func ActAuthorizable(command, dir string, validate operator.PolicyValidator) (bool, string, error) {
	return authorizable(command, dir, validate, operator.ActAuthorizable)
}

// authorizable reads the command under the project policy of dir and asks
// rule whether a person may authorize it.
func authorizable(command, dir string, validate operator.PolicyValidator, rule func(shell.Analysis, operator.Policy) (bool, string)) (bool, string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, "", err
	}
	pol, err := LoadPolicy(abs, validate)
	if err != nil {
		return false, "", err
	}
	ok, why := rule(shell.Analyze(command, abs), pol)
	return ok, why, nil
}

// LoadPolicy reads the project policy for a command run in dir (operator
// LoadPolicy), with laserbrain's home as the place whose records no agent
// writes. validate checks the file against the schema; nil means this
// binary cannot (the lean gate): a policy laserbrain has checked before —
// the same bytes — is taken, any other is operator.ErrPolicyUnchecked.
func LoadPolicy(dir string, validate operator.PolicyValidator) (operator.Policy, error) {
	home := ""
	if p, err := localstore.DefaultPaths(); err == nil {
		home = p.Home
	}
	pol, err := operator.LoadPolicy(dir, checkedPolicy(home, validate))
	pol.Home = home
	return pol, err
}

// checkedPolicy wraps a schema validator with a record of the policy
// files it passed, by their bytes' SHA-256, in laserbrain's home (which no
// agent writes): the lean gate, which links no schema validator, takes a
// policy laserbrain checked, and hands any other to laserbrain.
func checkedPolicy(home string, validate operator.PolicyValidator) operator.PolicyValidator {
	return func(data []byte) error {
		sum := sha256.Sum256(data)
		mark := ""
		if home != "" {
			mark = filepath.Join(home, "policy-checked", hex.EncodeToString(sum[:]))
		}
		if mark != "" {
			if _, err := os.Stat(mark); err == nil {
				return nil
			}
		}
		if validate == nil {
			return operator.ErrPolicyUnchecked
		}
		if err := validate(data); err != nil {
			return err
		}
		if mark != "" {
			// Best effort: the next call checks again if it cannot be kept.
			if err := os.MkdirAll(filepath.Dir(mark), 0o755); err == nil {
				_ = os.WriteFile(mark, nil, 0o644)
			}
		}
		return nil
	}
}

// IsPolicyUnchecked: the policy needs a binary that can check it.
func IsPolicyUnchecked(err error) bool { return errors.Is(err, operator.ErrPolicyUnchecked) }

// ActLeave says what lets laserbrain act carry action out for run outside
// its boundary: the project policy's act rule for exactly that command,
// else a person's live authorization of it, which is spent (one use per
// act). ok is false when neither does.
func (s *Tracker) ActLeave(ctx context.Context, run fleet.Run, action string, pol operator.Policy) (leave string, ok bool, err error) {
	if pol.Err == "" {
		if r, ok := pol.Boundary.ActRule(action); ok {
			return "the project policy's act rule " + r.ID + " (" + r.Reason + ")", true, nil
		}
	}
	st, err := s.Fleet()
	if err != nil {
		return "", false, err
	}
	a, ok, err := fleet.Authorize(ctx, st, run.Fleet, run.ID, run.Agent, action, s.now())
	if err != nil || !ok {
		return "", false, err
	}
	return "a person's authorization " + AuthorizedBy(a), true, nil
}
