package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/report"
	"github.com/laserkit/laserkit/supercode/undo"
)

type reportOptions struct {
	IO *cli.IOStreams
	// Opened opens the stores (for reading: a report creates no home).
	Opened func(readOnly bool) (*backend.Backend, fleet.Store, laserbrain.Store, error)
	// fleetSet: --fleet was given.
	fleetSet bool

	fleet string
	run   string
	html  string
	json  bool
}

// reportClock is the report's time source; tests pin it.
var reportClock = time.Now

func newReportCmd(f *Factory, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{IO: f.IOStreams, Opened: f.Opened}
	cmd := &cobra.Command{
		Use:   "report [--fleet DIR | --run ID] [--html FILE] [--json]",
		Short: "Summarize a fleet in the terminal, or write a self-contained HTML report of it",
		Long: `Without --html, print a summary of a fleet (the agents working on the
repository at DIR, default the current directory) or of one run: the agents
waiting for a person first, then a line per agent (client, status —
working, waiting, halted, finished or unmeasured —, last verdict, Φ, checks,
coverage, when it was last seen and its last tool call), the collisions with
the files both touched, the gate's decisions with its latest denials, the
halts in force with the command that lifts each, and the questions no person
answered yet. --json prints the same as JSON ("summary"), beside the counts.

With --html FILE, write one self-contained HTML page instead: Φ at every
check with the verdicts marked, agents on the same job and the files both
touched, the gate's decisions per label, the repository's ponder sessions,
halts, escalations and whether the supervisor's journal verifies, and each
agent run's coverage (tool calls, checks, coverage, longest unchecked
stretch, refusals for coverage; an unmeasured run says so). Panels whose
data source does not exist yet say so. The page fetches nothing and has no
script; it reads the stores and changes nothing. Standard output names the
page and each run's coverage; --json says the same as JSON.`,
		Example: `  laserbrain report
  laserbrain report --html fleet.html
  laserbrain report --run 9d14c2e07a11 --html run.html --json`,
		Args: cli.NoArgs,
		RunE: cli.RunAfter(opts, func(cmd *cobra.Command, args []string) error {
			opts.fleetSet = cmd.Flags().Changed("fleet")
			return nil
		}, runF, runReport),
	}
	cmd.Flags().StringVar(&opts.fleet, "fleet", ".", "the repository whose fleet to report on")
	cmd.Flags().StringVar(&opts.run, "run", "", "report one run instead of a fleet")
	cmd.Flags().StringVar(&opts.html, "html", "", "write the HTML report to this file (replaced whole) instead of the summary")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print as JSON: the counts, and the summary (or what --html wrote)")
	cli.CompleteFlag(cmd, "fleet", cli.Dirs)
	cli.CompleteFlag(cmd, "run", completeRunIDs(f))
	cli.CompleteFlag(cmd, "html", cli.Files("html"))
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "an --html whose directory does not exist, no such run, or a --fleet that is not a repository"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runReport(opts *reportOptions) error {
	if opts.html != "" {
		if err := fsx.CheckParentDir(opts.html); err != nil {
			return cli.Usagef("--html: %v", err)
		}
	}
	if opts.run != "" && opts.fleetSet {
		return cli.Usagef("--fleet and --run exclude each other")
	}
	if opts.run != "" {
		if err := laserbrain.ValidateRunID(opts.run); err != nil {
			return cli.Usagef("--run: %v", err)
		}
	}
	if os.Getenv("GOGC") == "" {
		// A report reads a fleet whole and ends: collecting its garbage
		// as often as a long-lived process does costs it about a sixth of
		// its CPU, against about half as much memory again at its peak.
		debug.SetGCPercent(400)
	}
	b, fl, store, err := opts.Opened(true) // a report reads; it creates no home
	if err != nil {
		return err
	}
	defer b.Close()
	lo := report.Options{Runs: store, Fleet: fl, Now: reportClock, Usage: recordsUsage}
	if us, err := undo.Default(); err == nil {
		lo.Undo = us
	}
	if opts.run != "" {
		lo.Run = opts.run
	} else {
		lo.Repo = opts.fleet
	}
	rep, err := report.Load(context.Background(), lo)
	var bad *report.InputError
	if errors.Is(err, laserbrain.ErrNoRun) || errors.As(err, &bad) {
		return cli.Usagef("%v", err)
	}
	if err != nil {
		return cli.Failure(err)
	}
	res := reportResult{HTML: opts.html, Agents: len(rep.Agents), Collisions: []reportCollision{}, Sessions: len(rep.Sessions), Waiting: []string{},
		Coverage: []agentCoverage{}, Unmeasured: []string{}}
	for _, c := range rep.Collisions {
		if c.Over {
			res.PastCollisions++
			continue
		}
		res.Collisions = append(res.Collisions, reportCollision{Agents: c.Agents, Overlap: c.Overlap, Grounds: c.Grounds, Lenses: c.Lenses})
	}
	if opts.html == "" {
		sum := report.Summarize(rep)
		if opts.json {
			res.Summary = &sum
		} else {
			return sum.WriteText(opts.IO.Out)
		}
	} else {
		page := report.Render(rep)
		if err := fsx.WriteFileInDir(opts.html, page, 0o644); err != nil {
			var np *fsx.ErrNoParent
			var nr *fsx.ErrNotRegular
			if errors.As(err, &np) || errors.As(err, &nr) {
				return cli.Usagef("--html: %v", err)
			}
			return cli.Failure(fmt.Errorf("--html: %w", err))
		}
		res.Bytes = len(page)
	}
	for i := range rep.Agents {
		a := &rep.Agents[i]
		if a.Coverage != nil {
			res.Coverage = append(res.Coverage, agentCoverage{Agent: a.Name, Run: a.Run, Figures: *a.Coverage})
		}
		if a.Unmeasured() {
			res.Unmeasured = append(res.Unmeasured, a.Name)
		}
	}
	for _, s := range rep.Sources {
		if !s.Fed {
			res.Waiting = append(res.Waiting, s.Panel)
		}
	}
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, res)
	}
	fmt.Fprintf(opts.IO.Out, "wrote %s: %s, %s, %s, %s\n", opts.html, text.Plural(int64(res.Agents), "agent"), text.Plural(int64(len(rep.Collisions)), "collision"), text.Plural(int64(res.Sessions), "ponder session"), text.Plural(int64(res.Bytes), "byte"))
	for _, c := range res.Coverage {
		state := ""
		if c.Unmeasured {
			state = " — " + coverage.Unmeasured
		}
		fmt.Fprintf(opts.IO.Out, "  %s: %s%s\n", c.Agent, c.Summary(), state)
	}
	return nil
}

type reportResult struct {
	// HTML and Bytes say what --html wrote (absent without it).
	HTML   string `json:"html,omitempty"`
	Bytes  int    `json:"bytes,omitempty"`
	Agents int    `json:"agents"`
	// Collisions are the collisions between running agents, the very list
	// laserbrain supervise --json gives (one collision model,
	// supercode.Collide); PastCollisions counts those the page also shows
	// whose agents have since finished.
	Collisions     []reportCollision `json:"collisions"`
	PastCollisions int               `json:"past_collisions"`
	Sessions       int               `json:"sessions"`
	Waiting        []string          `json:"waiting"`
	// Coverage is every agent run's figures (laserbrain coverage);
	// Unmeasured names the runs that worked with no check since their
	// ground.
	Coverage   []agentCoverage `json:"coverage"`
	Unmeasured []string        `json:"unmeasured"`
	// Summary is the summary printed without --html.
	Summary *report.Summary `json:"summary,omitempty"`
}

// reportCollision is one collision as report --json lists it, in
// supervise --json's words.
type reportCollision struct {
	Agents  [2]string `json:"agents"`
	Overlap float64   `json:"overlap"`
	Grounds [2]string `json:"grounds"`
	Lenses  [2]string `json:"lenses"`
}

// agentCoverage is one agent run's coverage figures.
type agentCoverage struct {
	Agent string `json:"agent"`
	Run   string `json:"run"`
	coverage.Figures
}
