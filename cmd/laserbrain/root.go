package main

import (
	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

// The root help's command groups.
const (
	groupDrift    = "drift"
	groupAgents   = "agents"
	groupGate     = "gate"
	groupGrammar  = "grammar"
	groupSettings = "settings"
)

func newRootCmd(streams *cli.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "laserbrain",
		Short: "Measure agent drift against a frozen ground, and gate irreversible actions",
		Long: `laserbrain reads an agent's spelled state (goal, progress, distance),
writes its laserscore, measures drift (Φ) against the run's frozen ground
and returns one of nine verdicts. It supervises agents through their
clients' hooks (Claude Code, Codex, Gemini CLI, Qwen Code, opencode, Cline,
Copilot CLI) and its MCP server, watches the agents and ponder sessions working on
one repository (supervise), runs the verified fixpoint loop, gates
irreversible and outward shell commands, lints workflow methods and checks
test vectors against the Python reference.

Runs live in $LASERBRAIN_HOME (default: the user config directory's
laserbrain/), or in the PostgreSQL database LASERBRAIN_STORE names (one
fleet across machines; see 'laserbrain store'). Every command's help lists
its exit codes; 'laserbrain help exit-codes' prints the table laserbrain
and ponder share.`,
		Example: `  laserbrain check --goal "add a CSV importer" --distance 7
  laserbrain install claude
  laserbrain run -- claude "fix the flaky test"
  laserbrain classify -- git push --force origin main`,
		Args: cli.NoArgs,
		// Without a subcommand, print help (exit 0) rather than guess.
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.AddGroup(
		&cobra.Group{ID: groupDrift, Title: "Drift checks:"},
		&cobra.Group{ID: groupAgents, Title: "Supervising agents:"},
		&cobra.Group{ID: groupGate, Title: "The gate and methods:"},
		&cobra.Group{ID: groupGrammar, Title: "Grammar and test vectors:"},
		&cobra.Group{ID: groupSettings, Title: "Set-up:"},
		&cobra.Group{ID: cli.GroupMore, Title: "More:"},
	)
	cli.AddToGroup(root, groupDrift, newCheckCmd(streams), newHistoryCmd(streams), newJudgeRunCmd(streams), newRunsCmd(streams), newCoverageCmd(streams), newReportCmd(streams), newReadCmd(streams), newDemoCmd(streams))
	cli.AddToGroup(root, groupAgents, newRunCmd(streams), newLoopCmd(streams), newSuperviseCmd(streams), newAuthorizeCmd(streams), newUICmd(streams), newHookCmd(streams), newMCPCmd(streams), newAttentionCmd(streams))
	cli.AddToGroup(root, groupGate, newClassifyCmd(streams), newLintCmd(streams), newShelfCmd(streams))
	cli.AddToGroup(root, groupGrammar, newGrammarCmd(streams), newVectorsCmd(streams))
	cli.AddToGroup(root, groupSettings, newInstallCmd(streams, false), newInstallCmd(streams, true), newDoctorCmd(streams), newStoreCmd(streams))
	cli.AddVersion(root, streams, cli.SnakeCase)
	cli.SetExits(root)
	return root
}
