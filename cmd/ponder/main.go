// Command ponder is the deliberation engine's front end: agents drive a
// codebase audit through it one command at a time.
package main

import (
	"os"

	"github.com/laserkit/laserkit/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], cli.System()))
}

// usageExit is ponder's code for a usage error (bad flag, missing argument).
const usageExit = 1

func run(args []string, streams *cli.IOStreams) int {
	a := newApp(streams)
	code := cli.Run(newRootCmd(a), args, streams, usageExit)
	// OCA log lines that never found a session go to stderr on the way out.
	a.close()
	return code
}
