package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

func newAbortCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "abort",
		Short: "Mark the session aborted",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.eng()
			if err != nil {
				return a.finish(nil, err, nil)
			}
			res, err := e.Abort(a.slug)
			return a.finish(res, err, func(w io.Writer) { fmt.Fprintf(w, "session %s aborted\n", res.Slug) })
		},
	}
}
