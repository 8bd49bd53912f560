package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

type runsOptions struct {
	IO *cli.IOStreams
	// Reader is a supervisor on the stores opened for reading.
	Reader func() *agentrun.Tracker

	fleetDir string
	all      bool
	json     bool
}

// runRow is one run as `laserbrain runs` lists it.
type runRow struct {
	Run string `json:"run"`
	// Origin is what made the run: "run" (laserbrain run or loop started
	// the agent), "session" (an agent's session, through the hooks
	// installed in its client), "check" (laserbrain check, or an MCP
	// connection with no agent's run: no agent, no fleet).
	Origin      string     `json:"origin"`
	Agent       string     `json:"agent"`
	Client      string     `json:"client,omitempty"`
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
	// Next is what to do about an unmeasured run.
	Next string `json:"next,omitempty"`
	// Limits are the runaway limits laserbrain run held the agent to, the
	// tool calls its hooks asked it about (refused ones included), and the
	// limit that stopped it, if one did.
	Limits         *fleet.Limits `json:"limits,omitempty"`
	ToolCallsAsked int           `json:"tool_calls_asked,omitempty"`
	Stopped        string        `json:"stopped,omitempty"`
}

// The origins of runs.
const (
	originRun     = "run"
	originSession = "session"
	originCheck   = "check"
)

func newRunsCmd(f *Factory, runF func(*runsOptions) error) *cobra.Command {
	opts := &runsOptions{IO: f.IOStreams, Reader: f.Reader}
	cmd := &cobra.Command{
		Use:   "runs [--fleet DIR | --all] [--json]",
		Short: "List runs: what made each, agent, checks, last verdict, judgment",
		Long: `runs lists the agents' runs of one fleet (the repository containing --fleet
DIR, default the current directory), or of every fleet with --all, oldest
first, then the runs laserbrain check made (no agent, no fleet; STATE
"checks"), so a run id any command names can be found here. Each row says
what made the run (ORIGIN): run (laserbrain run or loop started the agent),
session (an agent's client session, through its installed hooks), or check
(laserbrain check, or an MCP connection that had no agent's run); then the
agent, run id, fleet, checks, tool calls and coverage (checks over steps),
last verdict, whole-run judgment, and whether it ended.

A run whose agent made tool calls and spelled no check since its ground is
unmeasured: its last verdict and judgment say so, never grounded or
continue, and a note under the table says why and what to do (--json:
"next"). --json adds each run's coverage figures (laserbrain coverage
explains them).`,
		Example: `  laserbrain runs
  laserbrain runs --all --json
  laserbrain runs --fleet ~/src/shop`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runRuns(opts)
		},
	}
	cmd.Flags().StringVar(&opts.fleetDir, "fleet", "", "list the fleet of the repository containing DIR (default: the current directory)")
	cmd.Flags().BoolVar(&opts.all, "all", false, "list every fleet's runs")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the runs as JSON")
	cli.CompleteFlag(cmd, "fleet", cli.Dirs)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "--fleet is not a directory"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runRuns(opts *runsOptions) error {
	ctx := context.Background()
	sup := opts.Reader()
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
		noteDirFleet(opts.IO.ErrOut, "runs", filter.Fleet)
	}
	runs, err := st.ListRuns(ctx, filter)
	if err != nil {
		return cli.Failure(err)
	}
	rows := []runRow{}
	for _, r := range runs {
		row, err := agentRunRow(ctx, sup, st, r)
		if err != nil {
			return cli.Failure(err)
		}
		rows = append(rows, row)
	}
	every := runs // the runs a check run is not (every fleet's)
	if !opts.all {
		if every, err = st.ListRuns(ctx, fleet.RunFilter{}); err != nil {
			return cli.Failure(err)
		}
	}
	checks, err := checkRuns(ctx, sup, every)
	if err != nil {
		return cli.Failure(err)
	}
	rows = append(rows, checks...)
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, rows)
	}
	return writeRuns(opts.IO.Out, rows)
}

// agentRunRow is an agent's run as runs lists it.
func agentRunRow(ctx context.Context, sup *agentrun.Tracker, st fleet.Store, r fleet.Run) (runRow, error) {
	row := runRow{Run: r.ID, Origin: originSession, Agent: r.Agent, Client: r.Client, Fleet: r.Fleet, Steps: r.Checks, Created: r.Created,
		ExitCode: r.ExitCode, Sessions: r.Sessions, Command: r.Command, Judgment: r.Judgment, Attended: r.Attended, Ponder: r.Ponder,
		Limits: r.Limits, ToolCallsAsked: r.ToolCallsAsked, Stopped: r.Stopped}
	if len(r.Command) > 0 {
		row.Origin = originRun
	}
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
		return row, err
	}
	figs := coverage.Measure(events)
	row.Coverage = &figs
	if figs.Unmeasured {
		row.LastVerdict, row.Drifting, row.Judgment = coverage.Unmeasured, false, coverage.Unmeasured
		row.Next = unmeasuredNext(r.ID, figs)
	}
	return row, nil
}

// unmeasuredNext is why a run is unmeasured and what measures it.
func unmeasuredNext(id string, f coverage.Figures) string {
	return fmt.Sprintf("%s since the ground and no check after it, so nothing measured that work: "+
		"the agent checks (check_state, or laserbrain check --run %s) with its goal, progress and distance; "+
		"an agent that checks, then acts, stays measured for %d tool calls",
		text.Plural(int64(f.SinceGround), "tool call"), id, coverage.GroundMeasures-1)
}

// writeRuns is the runs as a table, then a note for each unmeasured run.
func writeRuns(w io.Writer, rows []runRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tORIGIN\tAGENT\tSTEPS\tCALLS\tCOVERAGE\tLAST VERDICT\tJUDGMENT\tSTATE\tFLEET")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Run, r.Origin, agent, r.Steps, calls, cov, last, r.Judgment, state, fl)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Next != "" {
			fmt.Fprintf(w, "%s (%s) is unmeasured: %s.\n", r.Run, r.Agent, r.Next)
		}
	}
	return nil
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
		row := runRow{Run: id, Origin: originCheck, Steps: lr.StepCount(), Judgment: lr.Phronesis().Verdict, Sessions: []string{}}
		if steps := lr.Steps(); len(steps) > 0 {
			row.Created = steps[0].At
		}
		row.Drifting, row.LastVerdict, _ = lr.LastVerdict()
		rows = append(rows, row)
	}
	return rows, nil
}
