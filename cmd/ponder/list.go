package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

type listOptions struct {
	// App is what every ponder command shares.
	App *app
}

func newListCmd(a *app, runF func(*listOptions) error) *cobra.Command {
	opts := &listOptions{App: a}
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

func runList(opts *listOptions) error {
	e, err := opts.App.eng()
	if err != nil {
		return opts.App.finish(nil, err, nil)
	}
	res, err := e.List()
	return opts.App.finish(res, err, func(w io.Writer) {
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
