package supervise

import (
	"context"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// TestSelfReground: a drifting agent that regrounds its own run — a
// reset_task, or a check claiming a user turn, when no person spoke — is
// recorded as a self-reground, and the supervisor reads that check as any
// other: the drift streak goes on and reaches a person. A person's prompt
// before the same reset does clear it (the control).
func TestSelfReground(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reground  func(ctx context.Context, sup *agentrun.Tracker, st fleet.Store) agentrun.CheckInput
		self      bool
		escalated bool
	}{
		{"the agent's reset_task (MCP) then a check", func(ctx context.Context, sup *agentrun.Tracker, _ fleet.Store) agentrun.CheckInput {
			if _, err := sup.ResetTask(ctx, "r1"); err != nil {
				t.Fatal(err)
			}
			return agentrun.CheckInput{}
		}, true, true},
		{"the agent's check --reset-task", func(context.Context, *agentrun.Tracker, fleet.Store) agentrun.CheckInput {
			return agentrun.CheckInput{ResetTask: true}
		}, true, true},
		{"the agent's check --user-turn", func(context.Context, *agentrun.Tracker, fleet.Store) agentrun.CheckInput {
			return agentrun.CheckInput{StepInput: laserbrain.StepInput{UserTurn: true}}
		}, true, true},
		{"a person's prompt, then the agent's reset_task", func(ctx context.Context, sup *agentrun.Tracker, st fleet.Store) agentrun.CheckInput {
			// What user-prompt-submit records when a person speaks.
			if _, err := st.UpdateRun(ctx, "r1", func(x *fleet.Run) error { x.UserTurn = true; return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := sup.ResetTask(ctx, "r1"); err != nil {
				t.Fatal(err)
			}
			return agentrun.CheckInput{}
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			ctx := context.Background()
			runs := laserbrain.NewMemStore()
			r.opts.Runs = runs
			var asked []Escalation
			r.opts.OnEscalate = func(ctx context.Context, e Escalation) Resolution { asked = append(asked, e); return Resolution{} }
			r.must(r.st.CreateRun(ctx, fleet.Run{ID: "r1", Agent: "claude", Fleet: r.fid, Dir: r.dir, Created: time.Now()}))
			sup := &agentrun.Tracker{Stores: agentrun.StoreFuncs{Fleet: func() (fleet.Store, error) { return r.st, nil },
				Runs: func() (laserbrain.Store, error) { return runs, nil }}.Open}
			check := func(in agentrun.CheckInput, goal string) {
				in.Goal, in.Progress, in.Distance = goal, laserbrain.ProgressAdvancing, laserbrain.Dist(5)
				if _, err := sup.Check(ctx, "r1", in); err != nil {
					t.Fatal(err)
				}
			}
			check(agentrun.CheckInput{}, "write the parser")
			check(agentrun.CheckInput{}, "paint the kitchen walls")
			check(agentrun.CheckInput{}, "paint the kitchen walls")
			if row := agentRow(t, r.round(), "claude:r1"); !row.Drifting || len(asked) != 0 {
				t.Fatalf("two drifting checks: %+v, asked %d", row, len(asked))
			}
			check(tc.reground(ctx, sup, r.st), "paint the kitchen walls")
			run, err := r.st.Run(ctx, "r1")
			r.must(err)
			if got := len(run.SelfReground) == 1; got != tc.self {
				t.Fatalf("self-reground recorded = %v (%q), want %v", got, run.SelfReground, tc.self)
			}
			evs, err := r.st.Events(ctx, "r1")
			r.must(err)
			noted := false
			for _, e := range evs {
				noted = noted || e.Kind == fleet.KindSession && e.Name == "self-reground"
			}
			if noted != tc.self {
				t.Fatalf("self-reground event = %v, want %v: %+v", noted, tc.self, evs)
			}
			row := agentRow(t, r.round(), "claude:r1")
			if tc.escalated != (len(asked) == 1 && asked[0].Kind == EscalateDrift && asked[0].Verdict.Streak == 3) || row.Drifting != tc.escalated {
				t.Fatalf("after the reground: drifting %v, asked %+v; want escalated %v", row.Drifting, asked, tc.escalated)
			}
		})
	}
}
