package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

func newDoctorCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the environment, the sessions' files and OCA; exit 1 on any problem",
		Long: `doctor checks git, every session's session.json and ledger (a torn ledger tail
is reported with the repair command), PONDER_OCA and, unless it is off, OCA
itself through the probe. It changes nothing.`,
		Example: `  ponder doctor
  ponder doctor --json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a.anyOCAMode = true // an unknown PONDER_OCA is one of the problems doctor reports
			e, err := a.eng()
			if err != nil {
				return a.finish(nil, err, nil)
			}
			res, err := e.Doctor(a.slug, os.Getenv)
			return a.finish(res, err, func(w io.Writer) {
				for _, c := range res.Checks {
					mark := "ok     "
					if c.Problem {
						mark = "PROBLEM"
					}
					fmt.Fprintf(w, "%s %-10s %s\n", mark, c.Name, term(c.Detail))
				}
			})
		},
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitFinding, When: "a problem was found: each is listed"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}
