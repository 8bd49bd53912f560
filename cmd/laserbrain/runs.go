package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

type runsOptions struct {
	fleetDir string
	all      bool
	json     bool
}

// runRow is one run as `laserbrain runs` lists it.
type runRow struct {
	Run         string     `json:"run"`
	Agent       string     `json:"agent"`
	Fleet       string     `json:"fleet"`
	Steps       int        `json:"steps"`
	LastVerdict string     `json:"last_verdict"`
	Drifting    bool       `json:"drifting"`
	Judgment    string     `json:"judgment"`
	Created     time.Time  `json:"created"`
	Ended       *time.Time `json:"ended"`
	ExitCode    *int       `json:"exit_code"`
	Sessions    []string   `json:"sessions"`
	Command     []string   `json:"command,omitempty"`
	// Ponder is the ponder session the run works on (laserbrain run
	// --ponder), absent when none.
	Ponder string `json:"ponder,omitempty"`
	// Attended is whether a person could answer the agent: "attended",
	// "unattended", or absent when nothing said.
	Attended string `json:"attended,omitempty"`
	// Coverage is what the run's hooks and checks recorded (an agent's
	// run only); an unmeasured run's last verdict and judgment both read
	// "unmeasured".
	Coverage *coverage.Figures `json:"coverage,omitempty"`
	// Limits are the runaway limits laserbrain run held the agent to, the
	// tool calls its hooks asked it about (refused ones included), and the
	// limit that stopped it, if one did.
	Limits         *fleet.Limits `json:"limits,omitempty"`
	ToolCallsAsked int           `json:"tool_calls_asked,omitempty"`
	Stopped        string        `json:"stopped,omitempty"`
}

func newRunsCmd(f *Factory) *cobra.Command {
	streams := f.IOStreams
	opts := &runsOptions{}
	cmd := &cobra.Command{
		Use:   "runs [--fleet DIR | --all] [--json]",
		Short: "List agent runs: agent, run id, fleet, checks, last verdict, judgment",
		Long: `runs lists the runs of one fleet (the repository containing --fleet DIR,
default the current directory), oldest first, or of every fleet with --all:
agent, run id, fleet, checks, tool calls and coverage (checks over steps),
last verdict, whole-run judgment, and whether it ended. A run whose agent
made tool calls and spelled no check since its ground is unmeasured: its
last verdict and judgment say so, never grounded or continue. --json adds
each run's coverage figures (laserbrain coverage explains them). --all also lists the runs laserbrain check started on its own
(no agent, no fleet; STATE "checks"), oldest first after the agents' runs,
so a run id that scrolled away can be found again.`,
		Example: `  laserbrain runs
  laserbrain runs --all --json
  laserbrain runs --fleet ~/src/shop`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := context.Background()
			sup := f.Reader()
			defer sup.Close()
			st, err := sup.Fleet()
			if err != nil {
				return cli.Failure(err)
			}
			var filter fleet.RunFilter
			if !opts.all {
				dir := opts.fleetDir
				if dir == "" {
					dir = "."
				}
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					return cli.Usagef("--fleet %s: not a directory", dir)
				}
				if filter.Fleet, err = fleet.ID(ctx, dir); err != nil {
					return cli.Usagef("--fleet %s: %v", dir, err)
				}
				noteDirFleet(streams.ErrOut, "runs", filter.Fleet)
			}
			runs, err := st.ListRuns(ctx, filter)
			if err != nil {
				return cli.Failure(err)
			}
			rows := []runRow{}
			for _, r := range runs {
				row := runRow{Run: r.ID, Agent: r.Agent, Fleet: r.Fleet, Steps: r.Checks, Created: r.Created,
					ExitCode: r.ExitCode, Sessions: r.Sessions, Command: r.Command, Judgment: r.Judgment, Attended: r.Attended, Ponder: r.Ponder,
					Limits: r.Limits, ToolCallsAsked: r.ToolCallsAsked, Stopped: r.Stopped}
				if r.Sessions == nil {
					row.Sessions = []string{}
				}
				if r.IsEnded() {
					e := r.Ended
					row.Ended = &e
				}
				if r.Last != nil {
					row.LastVerdict, row.Drifting = r.Last.Reason, r.Last.Drifting
				}
				if lr, err := sup.Task(ctx, r); err == nil && lr != nil {
					row.Judgment = lr.Phronesis().Verdict
				} else if row.Judgment == "" {
					row.Judgment = "ungrounded"
				}
				events, err := st.Events(ctx, r.ID)
				if err != nil {
					return cli.Failure(err)
				}
				figs := coverage.Measure(events)
				row.Coverage = &figs
				if figs.Unmeasured {
					row.LastVerdict, row.Drifting, row.Judgment = coverage.Unmeasured, false, coverage.Unmeasured
				}
				rows = append(rows, row)
			}
			if opts.all {
				checks, err := checkRuns(ctx, sup, runs)
				if err != nil {
					return cli.Failure(err)
				}
				rows = append(rows, checks...)
			}
			if opts.json {
				return cli.WriteJSON(streams.Out, rows)
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tAGENT\tSTEPS\tCALLS\tCOVERAGE\tLAST VERDICT\tJUDGMENT\tSTATE\tFLEET")
			for _, r := range rows {
				state := "running"
				if r.Agent == "" {
					state = "checks" // laserbrain check's own run: no process
				}
				if r.Ended != nil {
					state = "ended"
					if r.ExitCode != nil {
						state = fmt.Sprintf("exit %d", *r.ExitCode)
					}
				}
				last := r.LastVerdict
				if last == "" {
					last = "-"
				}
				fl := r.Fleet
				if len(fl) > 12 && !strings.HasPrefix(fl, "dir:") {
					fl = fl[:12]
				}
				agent := r.Agent
				if agent == "" {
					agent, fl = "-", "-"
				}
				calls, cov := "-", "-"
				if c := r.Coverage; c != nil {
					calls = strconv.Itoa(c.ToolCalls)
					if c.ToolCalls+c.Checks > 0 {
						cov = fmt.Sprintf("%.0f%%", c.Coverage*100)
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Run, agent, r.Steps, calls, cov, last, r.Judgment, state, fl)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&opts.fleetDir, "fleet", "", "list the fleet of the repository containing DIR (default: the current directory)")
	cmd.Flags().BoolVar(&opts.all, "all", false, "list every fleet's runs")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the runs as JSON")
	cli.CompleteFlag(cmd, "fleet", cli.Dirs)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "--fleet is not a directory"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

// checkRuns are the runs in laserbrain's run store that no agent run owns
// (laserbrain check's own), oldest first: every id the store lists except
// the registered runs' tasks (RUN, RUN.2, …).
func checkRuns(ctx context.Context, sup *agentrun.Tracker, registered []fleet.Run) ([]runRow, error) {
	store, err := sup.Runs()
	if err != nil {
		return nil, err
	}
	lister, ok := store.(interface {
		RecentRunIDs(context.Context) ([]string, error)
	})
	if !ok {
		return nil, nil
	}
	ids, err := lister.RecentRunIDs(ctx)
	if err != nil {
		return nil, err
	}
	owned := map[string]bool{}
	for _, r := range registered {
		owned[r.ID] = true
	}
	var rows []runRow
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		if owned[id] {
			continue
		}
		if base, n, dotted := strings.Cut(id, "."); dotted && owned[base] {
			if _, err := strconv.Atoi(n); err == nil {
				continue
			}
		}
		lr, err := store.ReadRun(ctx, id)
		if errors.Is(err, laserbrain.ErrNoRun) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		row := runRow{Run: id, Steps: lr.StepCount(), Judgment: lr.Phronesis().Verdict, Sessions: []string{}}
		if steps := lr.Steps(); len(steps) > 0 {
			row.Created = steps[0].At
		}
		row.Drifting, row.LastVerdict, _ = lr.LastVerdict()
		rows = append(rows, row)
	}
	return rows, nil
}
