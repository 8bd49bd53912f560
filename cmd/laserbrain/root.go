package main

import (
	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

func newRootCmd(streams *cli.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "laserbrain",
		Short: "Measure agent drift against a frozen ground, and gate irreversible actions",
		Long: `laserbrain reads an agent's spelled state (goal, progress, distance),
writes its laserscore, measures drift (Φ) against the run's frozen ground
and returns one of nine verdicts. It also gates irreversible shell commands,
lints workflow methods and checks test vectors.`,
		Args: cli.NoArgs,
		// Without a subcommand, print help (exit 0) rather than guess.
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.AddCommand(
		newGrammarCmd(streams),
		newVectorsCmd(streams),
		newCheckCmd(streams),
		newJudgeRunCmd(streams),
		newHistoryCmd(streams),
		newClassifyCmd(streams),
		newHookCmd(streams),
		newMCPCmd(streams),
		newRunCmd(streams),
		newLoopCmd(streams),
		newRunsCmd(streams),
		newAuthorizeCmd(streams),
		newSuperviseCmd(streams),
		newInstallCmd(streams, false),
		newInstallCmd(streams, true),
		newLintCmd(streams),
		newReportCmd(streams),
	)
	return root
}
