package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/broker"
)

func main() {
	os.Exit(run(os.Args[1:], cli.System()))
}

func run(args []string, streams *cli.IOStreams) int {
	if sock := os.Getenv(broker.EnvSocket); sock != "" {
		return relay(sock, args, streams)
	}
	code, _ := runCmd(args, streams)
	return code
}

// relay hands the whole command to the supervisor's broker when ponder
// runs inside an agent laserbrain run confines: the session's directory
// (.ponder) is read-only in here, as the laserbrain home is, and the
// broker runs this command confined as the agent is but for .ponder, after
// handing out what the supervisor said to the session. Without an answer
// nothing was done, and ponder says so.
func relay(sock string, args []string, streams *cli.IOStreams) int {
	dir, _ := os.Getwd()
	argv := append([]string{broker.OpPonder}, args...)
	code, err := broker.Relay(context.Background(), sock, argv, os.Getenv, dir, streams.In, streams.Out, streams.ErrOut)
	if err != nil {
		fmt.Fprintf(streams.ErrOut, "ponder: %v: this agent is confined by laserbrain run, and its ponder commands run through the supervisor; nothing was done\n", err)
		return int(cli.ExitFailure)
	}
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
