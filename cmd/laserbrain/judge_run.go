package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

type judgeRunOptions struct {
	IO *cli.IOStreams
	// Reader is a supervisor on the stores opened for reading.
	Reader func() *agentrun.Tracker

	run  string
	json bool
}

func newJudgeRunCmd(f *Factory, runF func(*judgeRunOptions) error) *cobra.Command {
	opts := &judgeRunOptions{IO: f.IOStreams, Reader: f.Reader}
	cmd := &cobra.Command{
		Use:   "judge-run --run ID",
		Short: "Judge a whole run: continue, finish, narrow, abandon, ...",
		Long: `judge-run prints the whole-run judgment (phronesis) of a saved run: its
verdict, why, what to do, and the control decision taken from observed
evidence alone. It exits 0 whatever the verdict: the verdict is advice.

For an agent's run (laserbrain run, the hooks) it also reads what the hooks
recorded: a run that made tool calls and spelled no check since its last
ground is unmeasured — the judgment says so, never continue — and --json
carries the run's coverage figures.`,
		Example: `  laserbrain judge-run --run 9d14c2e07a11
  laserbrain judge-run --run 9d14c2e07a11 --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runJudgeRun),
	}
	cmd.Flags().StringVar(&opts.run, "run", "", "the run to judge")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the judgment as JSON")
	_ = cmd.MarkFlagRequired("run")
	cli.CompleteFlag(cmd, "run", completeRunIDs(f))
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no such run, or a bad --run id"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runJudgeRun(opts *judgeRunOptions) error {
	sup := opts.Reader()
	defer sup.Close()
	j, figs, err := judgeRun(sup, opts.run)
	if err != nil {
		return err
	}
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, struct {
			laserbrain.Judgment
			Coverage *coverage.Figures `json:"coverage,omitempty"`
		}{j, figs})
	}
	w := opts.IO.Out
	fmt.Fprintf(w, "judgment: %s\n", j.Verdict)
	fmt.Fprintf(w, "because:  %s\n", j.Because)
	if d := driftLine(j); d != "" {
		fmt.Fprintln(w, d)
	}
	fmt.Fprintf(w, "counsel:  %s\n", j.Counsel)
	if c := j.Control; c != nil {
		fmt.Fprintf(w, "control:  %s — %s\n", c.Decision, controlText(c.Because))
	}
	if figs != nil {
		fmt.Fprintf(w, "coverage: %s\n", figs.Summary())
	}
	if sc := j.Scores; sc != nil {
		ceiling := "none"
		if sc.Ceiling != nil {
			ceiling = fmt.Sprint(*sc.Ceiling)
		}
		fmt.Fprintf(w, "scores:   closure %.2f, pace %.2f, evidence %.2f, repetition %d, prior runs %d, best distance %s\n",
			sc.Closure, sc.Pace, sc.Evidence, sc.Repetition, sc.Recurrence, ceiling)
	}
	return nil
}

// judgeRun judges run id: the saved run's judgment, and for an agent's
// run (the fleet store has it: its id, or its current task's) the same
// judgment read against the run's coverage — unmeasured when its tool
// calls went unchecked since its ground. A run with no check at all is
// found in the fleet store alone.
func judgeRun(sup *agentrun.Tracker, id string) (laserbrain.Judgment, *coverage.Figures, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return laserbrain.Judgment{}, nil, cli.Usagef("--run: %v", err)
	}
	ctx := context.Background()
	runs, err := sup.Runs()
	if err != nil {
		return laserbrain.Judgment{}, nil, cli.Failure(err)
	}
	r, rerr := runs.ReadRun(ctx, id)
	if rerr != nil && !errors.Is(rerr, laserbrain.ErrNoRun) {
		return laserbrain.Judgment{}, nil, storeError(rerr, "")
	}
	st, err := sup.Fleet()
	if err != nil {
		return laserbrain.Judgment{}, nil, cli.Failure(err)
	}
	base, _, _ := strings.Cut(id, ".")
	fr, ferr := st.Run(ctx, base)
	if ferr != nil && !errors.Is(ferr, fleet.ErrNotFound) {
		return laserbrain.Judgment{}, nil, cli.Failure(ferr)
	}
	current := ferr == nil && (fr.Task == id || (fr.Task == "" && fr.ID == id))
	if rerr != nil && !current {
		return laserbrain.Judgment{}, nil, storeError(rerr, "laserbrain runs lists the runs")
	}
	if r == nil {
		r = laserbrain.NewRun(laserbrain.RunOptions{ID: id})
	}
	j := r.Phronesis()
	if !current {
		return j, nil, nil
	}
	events, err := st.Events(ctx, fr.ID)
	if err != nil {
		return laserbrain.Judgment{}, nil, cli.Failure(err)
	}
	figs := coverage.Measure(events)
	return coverage.Judge(j, figs), &figs, nil
}

// readRun loads a saved run; a missing run or a bad id is bad input.
func readRun(sup *agentrun.Tracker, id string) (*laserbrain.Run, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, cli.Usagef("--run: %v", err)
	}
	store, err := sup.Runs()
	if err != nil {
		return nil, cli.Failure(err)
	}
	r, err := store.ReadRun(context.Background(), id)
	if err != nil {
		return nil, storeError(err, "laserbrain runs lists the runs")
	}
	return r, nil
}
