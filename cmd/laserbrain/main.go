// Command laserbrain is the drift instrument's front end: grammar tools,
// drift checks, the operator gate and hook, method lint and test vectors.
package main

import (
	"os"

	"github.com/laserkit/laserkit/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], cli.System()))
}

// usageExit is laserbrain's code for bad input, flags included.
const usageExit = 2

func run(args []string, streams *cli.IOStreams) int {
	return cli.Run(newRootCmd(streams), args, streams, usageExit)
}
