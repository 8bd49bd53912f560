// Command laserbrain is the drift instrument's front end: grammar tools,
// drift checks, the operator gate and hook, method lint and test vectors.
package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
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
	return cli.Run(newRootCmd(streams), args, streams)
}
