package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
)

type judgeRunOptions struct {
	run  string
	json bool
}

func newJudgeRunCmd(streams *cli.IOStreams) *cobra.Command {
	opts := &judgeRunOptions{}
	cmd := &cobra.Command{
		Use:   "judge-run --run ID",
		Short: "Judge a whole run: continue, finish, narrow, abandon, ...",
		Long: `judge-run prints the whole-run judgment (phronesis) of a saved run: its
verdict, why, what to do, and the control decision taken from observed
evidence alone. It exits 0 whatever the verdict: the verdict is advice.`,
		Example: `  laserbrain judge-run --run 9d14c2e07a11
  laserbrain judge-run --run 9d14c2e07a11 --json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := readRun(opts.run)
			if err != nil {
				return err
			}
			j := r.Phronesis()
			if opts.json {
				return cli.WriteJSON(streams.Out, j)
			}
			w := streams.Out
			fmt.Fprintf(w, "judgment: %s\n", j.Verdict)
			fmt.Fprintf(w, "because:  %s\n", j.Because)
			fmt.Fprintf(w, "counsel:  %s\n", j.Counsel)
			if c := j.Control; c != nil {
				fmt.Fprintf(w, "control:  %s — %s\n", c.Decision, c.Because)
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
		},
	}
	cmd.Flags().StringVar(&opts.run, "run", "", "the run to judge")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the judgment as JSON")
	_ = cmd.MarkFlagRequired("run")
	cli.CompleteFlag(cmd, "run", completeRunIDs)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no such run, or a bad --run id"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

// readRun loads a saved run; a missing run or a bad id is bad input.
func readRun(id string) (*laserbrain.Run, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, cli.Usagef("--run: %v", err)
	}
	b, err := openReader()
	if err != nil {
		return nil, cli.Failure(err)
	}
	defer b.Close()
	store, err := b.Runs()
	if err != nil {
		return nil, cli.Failure(err)
	}
	r, err := store.ReadRun(context.Background(), id)
	if err != nil {
		return nil, storeError(err, "laserbrain runs lists agents' runs")
	}
	return r, nil
}
