package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

func newListCmd(a *app, runF func(*appOptions) error) *cobra.Command {
	opts := &appOptions{App: a}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the sessions under .ponder/, newest first (read-only)",
		Long: `list prints every session under .ponder/ with its status and pass, the
current one marked. It reads the files and changes nothing.`,
		Example: `  ponder list
  ponder list --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runList),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runList(opts *appOptions) error {
	list := func(e *ponder.Engine, _ string) (*ponder.ListResult, error) { return e.List() }
	return call(opts.App, list, func(w io.Writer, res *ponder.ListResult) {
		if len(res.Sessions) == 0 {
			fmt.Fprintln(w, "no sessions")
		}
		for _, s := range res.Sessions {
			mark := " "
			if s.Current {
				mark = "*"
			}
			fmt.Fprintf(w, "%s %-28s %-9s pass %-2d %s\n", mark, s.Slug, s.Status, s.Pass, term(s.Subject))
		}
	})
}
