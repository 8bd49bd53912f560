package main

import (
	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/cli/versioncmd"
)

// The root help's command groups.
const (
	groupSession = "session"
	groupPass    = "pass"
	groupResults = "results"
	groupCare    = "care"
)

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "ponder",
		Short: "A deterministic deliberation state machine for codebase audits",
		Long: `ponder runs a codebase audit as a state machine: a coverage gate, four voices
bound to four ledger operations, and convergence certified by silence after
full verification. State lives under .ponder/<slug>/ in the working
directory (or the nearest parent that has one, as git does).

A pass: [predict] → deliberate → delta* → judge → decide continue|stop.

Each command works on the session --slug names, else PONDER_SLUG (start
prints its export line), else .ponder/current while at most one session is
active; with several active and none named, it refuses and lists them. Give
each agent on a repository its own shell with its own PONDER_SLUG.

PONDER_OCA (` + ocaModes + `) says whether sessions are also written to an
OCA PostgreSQL database (PONDER_OCA_DSN): auto uses it when it is reachable,
on requires it (exit 3 when it is not), off never connects.

laserbrain supervise watches every session of a repository as the agent
ponder:<slug>; a session it halts refuses writing commands (exit 2) until a
person runs laserbrain supervise release. Every command's help lists its
exit codes; 'ponder help exit-codes' prints the table ponder and laserbrain
share. See ponder/SPEC.md.`,
		Example: `  ponder start "the checkout flow" --lens security
  ponder units --scan src
  ponder deliberate --skeptic "the retry loop hides failures" --skeptic-confidence 0.7
  ponder delta findings.jsonl
  ponder judge && ponder decide continue`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		// The command that runs, for a refusal's pointer to its help.
		PersistentPreRun: func(cmd *cobra.Command, args []string) { a.cmd = cmd },
	}
	root.PersistentFlags().StringVar(&a.slug, "slug", "", "session to act on (default: $PONDER_SLUG, else .ponder/current while only one session is active)")
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print the result as JSON (explicit nulls)")
	cli.CompleteFlag(root, "slug", completeSlugs)
	root.AddGroup(
		&cobra.Group{ID: groupSession, Title: "A session:"},
		&cobra.Group{ID: groupPass, Title: "A pass:"},
		&cobra.Group{ID: groupResults, Title: "Results:"},
		&cobra.Group{ID: groupCare, Title: "Care and OCA:"},
		&cobra.Group{ID: cli.GroupMore, Title: "More:"},
	)
	cli.AddToGroup(root, groupSession, newStartCmd(a, nil), newUnitsCmd(a, nil), newStatusCmd(a, nil), newListCmd(a, nil), newAbortCmd(a, nil))
	cli.AddToGroup(root, groupPass, newPredictCmd(a, nil), newDeliberateCmd(a, nil), newDeltaCmd(a, nil), newGradeCmd(a, nil), newMetacognizeCmd(a, nil), newJudgeCmd(a, nil), newDecideCmd(a, nil))
	cli.AddToGroup(root, groupResults, newReportCmd(a, nil), newApplyCmd(a, nil))
	cli.AddToGroup(root, groupCare, newDoctorCmd(a, nil), newRepairCmd(a, nil), newOCACmd(a))
	versioncmd.Add(root, a.streams, versioncmd.CamelCase)
	cli.SetExits(root)
	return root
}
