package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
)

type historyOptions struct {
	IO     *cli.IOStreams
	Reader func() *agentrun.Tracker

	run   string
	json  bool
	audit bool
}

func newHistoryCmd(f *Factory, runF func(*historyOptions) error) *cobra.Command {
	opts := &historyOptions{IO: f.IOStreams, Reader: f.Reader}
	cmd := &cobra.Command{
		Use:   "history --run ID",
		Short: "Show a run's checks, oldest first",
		Long: `history prints every check of a saved run: its number, the verdict (with the
underlying one where a guard overrode it), whether it drifted, Φ and the
laserscore. --json prints the steps as the Python reference's get_history
returns them; --audit prints them as the run's audit chain, the JSON the
reference's Harness.export_audit writes — each check hash-linked to the one
before it, so that laserbrain verify (or the reference's verify_audit)
finds any record altered after the fact.`,
		Example: `  laserbrain history --run 9d14c2e07a11
  laserbrain history --run 9d14c2e07a11 --json
  laserbrain history --run 9d14c2e07a11 --audit > run.audit.json && laserbrain verify run.audit.json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runHistory),
	}
	cmd.Flags().StringVar(&opts.run, "run", "", "the run to show")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the steps as JSON")
	cmd.Flags().BoolVar(&opts.audit, "audit", false, "print the steps as the run's audit chain (hash-linked JSON; laserbrain verify checks it)")
	cmd.MarkFlagsMutuallyExclusive("json", "audit")
	_ = cmd.MarkFlagRequired("run")
	cli.CompleteFlag(cmd, "run", completeRunIDs(f))
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no such run, or a bad --run id"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runHistory(opts *historyOptions) error {
	sup := opts.Reader()
	defer sup.Close()
	r, err := readRun(sup, opts.run)
	if err != nil {
		return err
	}
	steps := r.Steps()
	if opts.audit {
		_, err := opts.IO.Out.Write(laserbrain.WriteAudit(laserbrain.AuditChain(r.ID(), steps)))
		return err
	}
	if opts.json {
		if steps == nil {
			steps = []laserbrain.StepRecord{}
		}
		return cli.WriteJSON(opts.IO.Out, steps)
	}
	fmt.Fprintf(opts.IO.Out, "run %s, ground %q, %d checks\n", r.ID(), r.GroundGoal(), len(steps))
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\treason\tdrifting\tphi\tlaserscore")
	for _, s := range steps {
		ls := "-"
		if s.Laserscore != nil {
			ls = *s.Laserscore
		}
		reason := s.Reason
		if s.Underlying != "" {
			reason += " (" + s.Underlying + ")"
		}
		drifting := "no"
		if s.Drifting {
			drifting = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.2f\t%s\n", s.N, reason, drifting, s.Phi, ls)
	}
	return tw.Flush()
}
