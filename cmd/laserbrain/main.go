package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/confine"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == confine.HelperArg {
		// The setup step between laserbrain run and its confined agent.
		os.Exit(int(cli.CodeOf(confine.Main(os.Args[2:]))))
	}
	os.Exit(run(os.Args[1:], cli.System()))
}

func run(args []string, streams *cli.IOStreams) int {
	f := newFactory(streams)
	if hc, ok := fastHook(args); ok {
		return hc.run(f)
	}
	code, _ := runCmd(f, args)
	return code
}

// runCmd also returns the command that ran: the tests hold each command to
// the exit codes its help documents.
func runCmd(f *Factory, args []string) (int, *cobra.Command) {
	return cli.Run(newRootCmdFor(f, args), args, f.IOStreams)
}
