package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

type coverageOptions struct {
	IO *cli.IOStreams
	// Reader is a supervisor on the stores opened for reading.
	Reader func() *agentrun.Tracker

	run, fleetDir string
	json          bool
}

// coverageRow is one run as laserbrain coverage reports it.
type coverageRow struct {
	Run   string `json:"run"`
	Agent string `json:"agent"`
	Fleet string `json:"fleet"`
	coverage.Figures
}

func newCoverageCmd(f *Factory, runF func(*coverageOptions) error) *cobra.Command {
	opts := &coverageOptions{IO: f.IOStreams, Reader: f.Reader}
	cmd := &cobra.Command{
		Use:   "coverage [--run ID | --fleet DIR] [--json]",
		Short: "How much of each agent run its checks measured: tool calls, checks, coverage, refusals",
		Long: `coverage reports, per agent run (laserbrain run, the hooks), what its hooks
and checks recorded: tool calls, checks, coverage (checks over tool calls
and checks), the longest stretch of tool calls without a check, the tool
calls since the last check, and how many calls the gate refused for
coverage. A run that made tool calls and spelled no check since its ground
is unmeasured. Without --run, every run of the fleet of the repository
containing --fleet DIR (default the current directory), oldest first.`,
		Example: `  laserbrain coverage
  laserbrain coverage --run 9d14c2e07a11 --json`,
		Args: cli.NoArgs,
		RunE: cli.RunAfter(opts, func(cmd *cobra.Command, _ []string) error {
			if opts.run != "" && cmd.Flags().Changed("fleet") {
				return cli.Usagef("--fleet and --run exclude each other")
			}
			return nil
		}, runF, runCoverage),
	}
	cmd.Flags().StringVar(&opts.run, "run", "", "one run's coverage")
	cmd.Flags().StringVar(&opts.fleetDir, "fleet", ".", "every run of the fleet of the repository containing DIR")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the figures as JSON")
	cli.CompleteFlag(cmd, "run", completeRunIDs(f))
	cli.CompleteFlag(cmd, "fleet", cli.Dirs)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no such run, a bad --run id, or a --fleet that is not a directory"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runCoverage(opts *coverageOptions) error {
	ctx := context.Background()
	streams := opts.IO
	sup := opts.Reader()
	defer sup.Close()
	st, err := sup.Fleet()
	if err != nil {
		return cli.Failure(err)
	}
	var runs []fleet.Run
	if opts.run != "" {
		if err := laserbrain.ValidateRunID(opts.run); err != nil {
			return cli.Usagef("--run: %v", err)
		}
		r, err := st.Run(ctx, opts.run)
		if errors.Is(err, fleet.ErrNotFound) {
			return cli.Usagef("no agent run %q (laserbrain runs lists them; a run laserbrain check made alone has no tool calls to cover)", opts.run)
		}
		if err != nil {
			return cli.Failure(err)
		}
		runs = []fleet.Run{r}
	} else {
		if fi, err := os.Stat(opts.fleetDir); err != nil || !fi.IsDir() {
			return cli.Usagef("--fleet %s: not a directory", opts.fleetDir)
		}
		fid, err := fleet.ID(ctx, opts.fleetDir)
		if err != nil {
			return cli.Usagef("--fleet %s: %v", opts.fleetDir, err)
		}
		noteDirFleet(streams.ErrOut, "coverage", fid)
		if runs, err = st.ListRuns(ctx, fleet.RunFilter{Fleet: fid}); err != nil {
			return cli.Failure(err)
		}
	}
	rows := []coverageRow{}
	for _, r := range runs {
		events, err := st.Events(ctx, r.ID)
		if err != nil {
			return cli.Failure(err)
		}
		rows = append(rows, coverageRow{Run: r.ID, Agent: r.Agent, Fleet: r.Fleet, Figures: coverage.Measure(events)})
	}
	if opts.json {
		if opts.run != "" {
			return cli.WriteJSON(streams.Out, rows[0])
		}
		return cli.WriteJSON(streams.Out, rows)
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tAGENT\tCALLS\tCHECKS\tCOVERAGE\tLONGEST UNCHECKED\tSINCE CHECK\tREFUSALS\tSTATE")
	for _, r := range rows {
		cov, state := "-", "-"
		if r.ToolCalls+r.Checks > 0 {
			cov = fmt.Sprintf("%.0f%%", r.Coverage*100)
		}
		switch {
		case r.Unmeasured:
			state = coverage.Unmeasured
		case r.ToolCalls > 0:
			state = "measured"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%d\t%d\t%d\t%s\n", r.Run, r.Agent, r.ToolCalls, r.Checks, cov, r.LongestUnchecked, r.SinceCheck, r.Refusals, state)
	}
	return tw.Flush()
}
