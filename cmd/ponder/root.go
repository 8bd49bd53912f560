package main

import (
	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "ponder",
		Short: "A deterministic deliberation state machine for codebase audits",
		Long: `ponder runs a codebase audit as a state machine: a coverage gate, four voices
bound to four ledger operations, and convergence certified by silence after
full verification. State lives under .ponder/<slug>/ in the working directory.

A pass: [predict] → deliberate → delta* → judge → decide continue|stop.
Exit codes: 0 ok, 1 usage error, 2 refused (stateError), 3 OCA required
(PONDER_OCA=on) but unusable. See ponder/SPEC.md.`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.PersistentFlags().StringVar(&a.slug, "slug", "", "session to act on (default: the one in .ponder/current)")
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print the result as JSON (explicit nulls)")
	root.AddCommand(
		newStartCmd(a),
		newUnitsCmd(a),
		newPredictCmd(a),
		newDeliberateCmd(a),
		newDeltaCmd(a),
		newJudgeCmd(a),
		newDecideCmd(a),
		newAbortCmd(a),
		newApplyCmd(a),
		newStatusCmd(a),
		newListCmd(a),
		newReportCmd(a),
		newGradeCmd(a),
		newDoctorCmd(a),
		newRepairCmd(a),
		newMetacognizeCmd(a),
		newOCACmd(a.streams),
	)
	return root
}
