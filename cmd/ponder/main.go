// Command ponder is the deliberation engine's front end: agents drive a
// codebase audit through it one command at a time.
package main

import (
	"os"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

func main() {
	os.Exit(run(os.Args[1:], cli.System()))
}

func run(args []string, streams *cli.IOStreams) int {
	a := newApp(streams)
	code := cli.Run(newRootCmd(a), args, streams, ponder.ExitUsage)
	// OCA log lines that never found a session go to stderr on the way out.
	a.close()
	return code
}
