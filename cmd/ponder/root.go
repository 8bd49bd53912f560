package main

import (
	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

func newRootCmd(streams *cli.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "ponder",
		Short: "A deterministic deliberation state machine for codebase audits",
		Args:  cli.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.AddCommand(newOCACmd(streams))
	return root
}
