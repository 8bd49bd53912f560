package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/confine"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == confine.HelperArg {
		// The setup step between laserbrain run and its confined agent.
		os.Exit(confine.Main(os.Args[2:]))
	}
	os.Exit(run(os.Args[1:], cli.System()))
}

func run(args []string, streams *cli.IOStreams) int {
	if hc, ok := fastHook(args); ok {
		agentrun.OpenStores = openBackend
		return hc.run(streams)
	}
	code, _ := runCmd(args, streams)
	return code
}

// runCmd also returns the command that ran: the tests hold each command to
// the exit codes its help documents.
func runCmd(args []string, streams *cli.IOStreams) (int, *cobra.Command) {
	// Every supervisor this binary makes (hooks, run, mcp, authorize,
	// supervise) opens its stores on the backend LASERBRAIN_STORE names.
	agentrun.OpenStores = openBackend
	return cli.Run(newRootCmdFor(streams, args), args, streams)
}

func openBackend() (agentrun.Stores, error) {
	cfg, err := backend.FromEnv()
	if err != nil {
		return nil, err
	}
	return backend.New(cfg), nil
}
