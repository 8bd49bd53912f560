package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/backend"
)

func main() {
	os.Exit(run(os.Args[1:], cli.System()))
}

func run(args []string, streams *cli.IOStreams) int {
	code, _ := runCmd(args, streams)
	return code
}

// runCmd also returns the command that ran: the tests hold each command to
// the exit codes its help documents.
func runCmd(args []string, streams *cli.IOStreams) (int, *cobra.Command) {
	// Every supervisor this binary makes (hooks, run, mcp, authorize,
	// supervise) opens its stores on the backend LASERBRAIN_STORE names.
	agentrun.OpenStores = openBackend
	return cli.Run(newRootCmd(streams), args, streams)
}

func openBackend() (agentrun.Stores, error) {
	cfg, err := backend.FromEnv()
	if err != nil {
		return nil, err
	}
	return backend.New(cfg), nil
}
