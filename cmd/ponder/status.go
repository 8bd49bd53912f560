package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

func newStatusCmd(a *app, runF func(*appOptions) error) *cobra.Command {
	opts := &appOptions{App: a}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show where the session is and what comes next (read-only)",
		Long: `status prints the current session's phase, pass, coverage, live findings
and last verdict, and the commands that may come next. It reads the files
and changes nothing. A session the supervisor (laserbrain supervise) halted
shows the halt's reason, and next names the release a person runs, or abort.`,
		Example: `  ponder status
  ponder status --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runStatus),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no session"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runStatus(opts *appOptions) error {
	return call(opts.App, (*ponder.Engine).Status, func(w io.Writer, res *ponder.StatusResult) {
		fmt.Fprintf(w, "%s: %s — %s, pass %d of %d (%s)\n", res.Slug, term(res.Subject), res.Status, res.Pass, res.PassBudget, res.Phase)
		fmt.Fprintf(w, "units %d, coverage %d/%d, live findings %d, last verdict %s\n", res.Units, res.Grading.Graded, res.Grading.Counted, res.Live, sval(res.LastVerdict))
		if res.Halted != nil {
			fmt.Fprintf(w, "halted: %s\n", term(res.Halted.Reason))
			fmt.Fprintf(w, "next: %s (a person lifts the halt) | ponder abort (ends the session)\n", res.Halted.Release)
		} else if len(res.Next) > 0 {
			fmt.Fprintf(w, "next: ponder %s\n", strings.Join(res.Next, " | ponder "))
		}
	})
}
