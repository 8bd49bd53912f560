package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

type startOptions struct {
	// App is what every ponder command shares.
	App *app
	// args are the positional arguments.
	args []string

	lens    string
	project string
	passes  int
}

func newStartCmd(a *app, runF func(*startOptions) error) *cobra.Command {
	o := &startOptions{App: a}
	cmd := &cobra.Command{
		Use:   `start "<subject>" [--lens L] [--passes N] [--project P]`,
		Short: "Start a session and make it current",
		Long: `start creates .ponder/<slug>/session.json and writes .ponder/current.
The slug is <lens>-<YYYY-MM-DD> (UTC), or the subject's words without --lens;
an existing slug gets -2, -3, … With OCA reachable it prints Prior pondering
on the same subject; otherwise the probe's reason.

It prints "export PONDER_SLUG=<slug>": run it in the agent's shell. Every
ponder command picks its session from --slug, else PONDER_SLUG, else
.ponder/current — the last only while at most one session is active, so
several agents on one repository each keep to their own.`,
		Example: `  ponder start "the checkout flow" --lens security
  ponder start "payments retries" --passes 6 --project shop --json`,
		Args: cli.ExactArgs(1),
		RunE: cli.RunArgs(o, &o.args, runF, runStart),
	}
	cmd.Flags().StringVar(&o.lens, "lens", "", "the lens of the audit (names the slug)")
	cmd.Flags().StringVar(&o.project, "project", "", "project name (default: the git top-level directory's name)")
	cmd.Flags().IntVar(&o.passes, "passes", ponder.DefaultPassBudget, "pass budget, at least 1")
	cli.CompleteFlags(cmd, cli.NoValue, "lens", "project", "passes")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "an empty subject, --passes below 1, an unknown PONDER_OCA"}, cli.ExitDoc{Code: cli.ExitOCA}, localWriteFailed)
	return cmd
}

func runStart(o *startOptions) error {
	start := func(e *ponder.Engine, _ string) (*ponder.StartResult, error) {
		return e.Start(ponder.StartOptions{Subject: o.args[0], Lens: o.lens, Project: o.project, Passes: o.passes})
	}
	return call(o.App, start, printStart)
}

func printStart(w io.Writer, r *ponder.StartResult) {
	lens := "none"
	if r.Lens != nil {
		lens = *r.Lens
	}
	fmt.Fprintf(w, "started %s: %q (lens %s, project %s, %d passes)\n", r.Slug, r.Subject, term(lens), term(r.Project), r.PassBudget)
	if p := r.OCA.Probe; p != nil && !p.Reachable {
		fmt.Fprintf(w, "OCA unusable (%s): %s — starting cold (PONDER_OCA=off skips OCA)\n", p.Mode, term(p.Note))
	}
	if len(r.OCA.PriorPondering) > 0 {
		fmt.Fprintln(w, "Prior pondering:")
		for _, ep := range r.OCA.PriorPondering {
			fmt.Fprintf(w, "  %s  %s\n", ep.Timestamp.UTC().Format("2006-01-02"), term(ep.Content))
			if ep.ActualOutcome != nil {
				fmt.Fprintf(w, "    outcome: %s\n", term(*ep.ActualOutcome))
			}
		}
	}
	fmt.Fprintln(w, r.Export)
	fmt.Fprintln(w, "next: run the export line above in this agent's shell (every ponder command then works on this session), then ponder units --scan <dir> and ponder deliberate")
}
