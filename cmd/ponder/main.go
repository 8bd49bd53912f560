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
	a := newApp(streams)
	cmd, err := cli.Execute(newRootCmd(a), args, streams)
	// Errors no command reported itself (flag and argument mistakes, the
	// oca subcommands') still reach --json as an error object.
	if err != nil && !a.reported && cli.WantsJSON(args) {
		if cli.Envelope(cmd, err) != nil {
			_ = cli.WriteJSON(streams.Out, map[string]any{"error": errorObject(err)})
		}
	}
	code := int(cli.Code(cmd, err, streams.ErrOut))
	// OCA log lines that never found a session go to stderr on the way out.
	a.close()
	return code, cmd
}
