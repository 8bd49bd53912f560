package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

func newListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the sessions under .ponder/, newest first (read-only)",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.eng()
			if err != nil {
				return a.finish(nil, err, nil)
			}
			res, err := e.List()
			return a.finish(res, err, func(w io.Writer) {
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
		},
	}
}
