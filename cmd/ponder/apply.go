package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

type applyOptions struct {
	// App is what every ponder command shares.
	App    *app
	dryRun bool
}

func newApplyCmd(a *app, runF func(*applyOptions) error) *cobra.Command {
	opts := &applyOptions{App: a}
	cmd := &cobra.Command{
		Use:   "apply [--dry-run]",
		Short: "Write apply-plan.md from the live findings and mark the session applied",
		Long: `apply needs a converged or stopped session: it writes apply-plan.md (live
findings by severity, then id) and marks the session applied. --dry-run
prints the same plan at any time and changes nothing.`,
		Example: `  ponder apply --dry-run
  ponder apply`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runApply),
	}
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the plan; write nothing, change no status")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "the session is neither converged nor stopped (stateError)"}, cli.ExitDoc{Code: cli.ExitOCA}, localWriteFailed)
	return cmd
}

func runApply(opts *applyOptions) error {
	apply := func(e *ponder.Engine, slug string) (*ponder.ApplyResult, error) { return e.Apply(slug, opts.dryRun) }
	return call(opts.App, apply, func(w io.Writer, res *ponder.ApplyResult) {
		for _, line := range strings.SplitAfter(res.Plan, "\n") {
			fmt.Fprint(w, term(strings.TrimSuffix(line, "\n")))
			if strings.HasSuffix(line, "\n") {
				fmt.Fprintln(w)
			}
		}
		if res.PlanPath != nil {
			fmt.Fprintf(w, "\nwrote %s; session %s is %s\n", *res.PlanPath, res.Slug, res.Status)
		}
	})
}
