package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

type doctorOptions struct {
	// App is what every ponder command shares.
	App *app
}

func newDoctorCmd(a *app, runF func(*doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{App: a}
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

func runDoctor(opts *doctorOptions) error {
	opts.App.anyOCAMode = true // an unknown PONDER_OCA is one of the problems doctor reports
	e, err := opts.App.eng()
	if err != nil {
		return opts.App.finish(nil, err, nil)
	}
	res, err := e.Doctor(opts.App.slug, os.Getenv)
	return opts.App.finish(res, err, func(w io.Writer) {
		for _, c := range res.Checks {
			mark := "ok     "
			if c.Problem {
				mark = "PROBLEM"
			}
			fmt.Fprintf(w, "%s %-10s %s\n", mark, c.Name, term(c.Detail))
		}
	})
}
