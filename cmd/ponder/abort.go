package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

func newAbortCmd(a *app, runF func(*appOptions) error) *cobra.Command {
	opts := &appOptions{App: a}
	cmd := &cobra.Command{
		Use:   "abort",
		Short: "Mark the session aborted",
		Long: `abort ends an active session without a verdict: its status becomes aborted
and every command that would change it is refused from then on. Its files
stay, for report and list. It is the one writing command a halted session
allows (ending it answers the supervisor's "which one yields?"); the halt's
reason is recorded in session.json (abortedHalted).`,
		Example: `  ponder abort
  ponder abort --slug ui-2026-08-24`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runAbort),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no session, or one that is not active (stateError)"}, localWriteFailed)
	return cmd
}

func runAbort(opts *appOptions) error {
	return call(opts.App, (*ponder.Engine).Abort, func(w io.Writer, res *ponder.AbortResult) {
		if res.Halted != nil {
			fmt.Fprintf(w, "session %s aborted; it was halted: %s\n", res.Slug, term(*res.Halted))
			return
		}
		fmt.Fprintf(w, "session %s aborted\n", res.Slug)
	})
}
