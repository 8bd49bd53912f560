package gate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// fakeSource is a store with one run state and the authorizations a
// person gave, counting what the gate reads and spends.
type fakeSource struct {
	rs                   operator.RunState
	grants               []fleet.Authorization
	spent                []string // ids, in order
	noUse                map[string]bool
	runReads, grantReads int
	failRun, failGrants  error
	lastAction           string
}

func (f *fakeSource) RunState(ctx context.Context, c agentrun.Caller) (operator.RunState, fleet.Run, bool, error) {
	f.runReads++
	if f.failRun != nil {
		return operator.RunState{}, fleet.Run{}, false, f.failRun
	}
	rs := f.rs
	rs.Read = true
	return rs, fleet.Run{ID: "r1", Fleet: "f", Agent: "a"}, true, nil
}

func (f *fakeSource) Grants(ctx context.Context, c agentrun.Caller, run fleet.Run, found bool, action string) ([]fleet.Authorization, error) {
	f.grantReads++
	f.lastAction = action
	if f.failGrants != nil {
		return nil, f.failGrants
	}
	var out []fleet.Authorization
	for _, g := range f.grants {
		if g.Covers(run.Fleet, run.ID, run.Agent, action) {
			out = append(out, g)
		}
	}
	return out, nil
}

func (f *fakeSource) Spend(ctx context.Context, run fleet.Run, grants []fleet.Authorization) (fleet.Authorization, bool, error) {
	for _, g := range grants {
		if f.noUse[g.ID] {
			continue
		}
		f.spent = append(f.spent, g.ID)
		g.Used = append(g.Used, fleet.Use{At: time.Unix(0, 0), Run: run.ID})
		return g, true, nil
	}
	return fleet.Authorization{}, false, nil
}

// counting replaces the operator's decision with one that counts its
// calls, for the duration of the test.
func counting(t *testing.T) *int {
	t.Helper()
	n := 0
	saved := decide
	decide = func(an shell.Analysis, p operator.Presence, rs operator.RunState, pol operator.Policy) operator.Decision {
		n++
		return saved(an, p, rs, pol)
	}
	t.Cleanup(func() { decide = saved })
	return &n
}

func unattended() agentrun.Caller {
	return agentrun.Caller{Presence: operator.Unattended, PresenceWhy: "CI=true"}
}

func grant(id, action string, uses int) fleet.Authorization {
	return fleet.Authorization{ID: id, Fleet: "f", Action: action, By: "ann", Uses: uses, Expires: time.Now().Add(time.Hour)}
}

// Decide runs once per action whatever the answer needs: nothing (an
// allow), the run (a refusal the run upholds, or blocks), and a person's
// authorization (spent); the run is read only for a refusal an
// authorization could lift, the authorizations only when the run lets one.
func TestCheckDecidesOnce(t *testing.T) {
	cases := []struct {
		name              string
		cmd               string
		rs                operator.RunState
		grants            []fleet.Authorization
		want              operator.Answer
		rule              string
		reads, grantReads int
	}{
		{"allow", "ls -la", operator.RunState{}, nil, operator.Allow, operator.RuleNothing, 0, 0},
		{"note", "echo 'rm -rf /'", operator.RunState{}, nil, operator.Allow, operator.RuleData, 0, 0},
		{"person's command", "laserbrain authorize -- rm -rf x", operator.RunState{}, nil, operator.Deny, operator.RulePersonOnly, 0, 0},
		{"refused", "rm -rf build", operator.RunState{}, nil, operator.Deny, operator.RuleExecuted, 1, 1},
		{"drifting", "rm -rf build", operator.RunState{Attached: true, Reading: true, Drifting: true, DriftReason: "off"},
			[]fleet.Authorization{grant("g1", "rm -rf build", 1)}, operator.Deny, operator.RuleDrifting, 1, 0},
		{"authorized", "rm   -rf build", operator.RunState{}, []fleet.Authorization{grant("g1", "rm -rf build", 1)}, operator.Allow, operator.RuleAuthorized, 1, 1},
		{"another action", "rm -rf build2", operator.RunState{}, []fleet.Authorization{grant("g1", "rm -rf build", 1)}, operator.Deny, operator.RuleExecuted, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := counting(t)
			src := &fakeSource{rs: c.rs, grants: c.grants}
			ans, _, _, err := Check(context.Background(), src, Input{Caller: unattended(), Analysis: shell.Analyze(c.cmd, "")})
			if err != nil {
				t.Fatal(err)
			}
			if ans.Action != c.want || ans.Rule != c.rule {
				t.Errorf("%q: %s by %q, want %s by %q (%s)", c.cmd, ans.Action, ans.Rule, c.want, c.rule, ans.Reason)
			}
			if *n != 1 {
				t.Errorf("%q: the operator decided %d times, want once", c.cmd, *n)
			}
			if src.runReads != c.reads || src.grantReads != c.grantReads {
				t.Errorf("%q: read the run %d times and the authorizations %d times, want %d and %d", c.cmd, src.runReads, src.grantReads, c.reads, c.grantReads)
			}
			if ans.UseAuthorization != (len(src.spent) == 1) || len(src.spent) > 1 {
				t.Errorf("%q: uses an authorization %v, spent %v", c.cmd, ans.UseAuthorization, src.spent)
			}
		})
	}
}

// Check with a store answers as Decide does with everything read whole:
// the same decision, whatever the run says, for the pure function and
// the I/O around it.
func TestCheckAnswersAsDecide(t *testing.T) {
	states := []operator.RunState{
		{},
		{Attached: true},
		{Attached: true, Reading: true},
		{Attached: true, Reading: true, Drifting: true, DriftReason: "off its ground"},
		{Attached: true, Reading: true, Judgment: "abandon"},
		{Attached: true, Reading: true, Judgment: "narrow"},
	}
	cmds := []string{"ls", "rm -rf build", "git push --force origin main", "python3 -c 'import shutil'", "echo 'rm -rf x'", "git clean -n", "cat > .git/hooks/pre-commit"}
	for _, rs := range states {
		for _, cmd := range cmds {
			for _, grants := range [][]fleet.Authorization{nil, {grant("g1", cmd, 2)}} {
				an := shell.Analyze(cmd, "")
				read := rs
				read.Read = true
				whole := Decide(Input{Caller: unattended(), Analysis: an, Run: read, Grants: grants})
				got, _, _, err := Check(context.Background(), &fakeSource{rs: rs, grants: grants}, Input{Caller: unattended(), Analysis: an})
				if err != nil {
					t.Fatal(err)
				}
				if got.Action != whole.Action || got.Rule != whole.Rule || got.Reason != whole.Reason || got.Target != whole.Target {
					t.Errorf("%q in %+v (grants %d): Check %s/%s %q, Decide %s/%s %q", cmd, rs, len(grants),
						got.Action, got.Rule, got.Reason, whole.Action, whole.Rule, whole.Reason)
				}
			}
		}
	}
}

// A use spent by another process first: the next authorization of the
// same action is spent instead, and with none left the answer is the
// refusal.
func TestCheckSpendsAnotherOrRefuses(t *testing.T) {
	an := shell.Analyze("rm -rf build", "")
	src := &fakeSource{grants: []fleet.Authorization{grant("g1", "rm -rf build", 1), grant("g2", "rm -rf build", 1)}, noUse: map[string]bool{"g1": true}}
	ans, _, _, err := Check(context.Background(), src, Input{Caller: unattended(), Analysis: an})
	if err != nil || ans.Action != operator.Allow || len(src.spent) != 1 || src.spent[0] != "g2" {
		t.Fatalf("one of two spent elsewhere: %s, spent %v, %v", ans.Action, src.spent, err)
	}
	src.noUse["g2"] = true
	src.spent = nil
	ans, _, _, err = Check(context.Background(), src, Input{Caller: unattended(), Analysis: an})
	if err != nil || ans.Action != operator.Deny || ans.Rule != operator.RuleExecuted || len(src.spent) != 0 {
		t.Fatalf("both spent elsewhere: %s by %s, spent %v, %v", ans.Action, ans.Rule, src.spent, err)
	}
}

// What cannot be read is said, with the decision so far: a refusal.
func TestCheckReadErrors(t *testing.T) {
	an := shell.Analyze("rm -rf build", "")
	down := errors.New("connection refused")
	for _, src := range []*fakeSource{{failRun: down}, {failGrants: down}} {
		ans, _, _, err := Check(context.Background(), src, Input{Caller: unattended(), Analysis: an})
		var re *ReadError
		if !errors.As(err, &re) || !errors.Is(err, down) || ans.Action != operator.Deny {
			t.Errorf("%+v: %s, %v", src, ans.Action, err)
		}
	}
}
