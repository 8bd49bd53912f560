// Command laserbrain is the drift instrument's front end: grammar tools,
// drift checks, the operator gate and hook, method lint and test vectors.
package main

import (
	"os"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/backend"
)

func main() {
	os.Exit(run(os.Args[1:], cli.System()))
}

// usageExit is laserbrain's code for bad input, flags included.
const usageExit = 2

func run(args []string, streams *cli.IOStreams) int {
	// Every supervisor this binary makes (hooks, run, mcp, authorize) opens
	// its stores on the backend LASERBRAIN_STORE names.
	agentrun.OpenStores = openBackend
	return cli.Run(newRootCmd(streams), args, streams, usageExit)
}

func openBackend() (agentrun.Stores, error) {
	cfg, err := backend.FromEnv()
	if err != nil {
		return nil, err
	}
	return backend.New(cfg), nil
}
