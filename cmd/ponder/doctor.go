package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

func newDoctorCmd(a *app, runF func(*appOptions) error) *cobra.Command {
	opts := &appOptions{App: a}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the environment, the sessions' files and OCA; exit 1 on any problem",
		Long: `doctor checks git, every session's session.json and ledger (a torn ledger tail
is reported with the repair command), PONDER_OCA and, unless it is off, OCA
itself through the probe. It changes nothing.`,
		Example: `  ponder doctor
  ponder doctor --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runDoctor),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitFinding, When: "a problem was found: each is listed"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runDoctor(opts *appOptions) error {
	opts.App.anyOCAMode = true // an unknown PONDER_OCA is one of the problems doctor reports
	doctor := func(e *ponder.Engine, slug string) (*ponder.DoctorResult, error) { return e.Doctor(slug, os.Getenv) }
	return call(opts.App, doctor, func(w io.Writer, res *ponder.DoctorResult) {
		for _, c := range res.Checks {
			mark := "ok     "
			if c.Problem {
				mark = "PROBLEM"
			}
			fmt.Fprintf(w, "%s %-10s %s\n", mark, c.Name, term(c.Detail))
		}
	})
}
