// Command ponder is the deliberation engine's front end: agents drive a
// codebase audit through it one command at a time.
package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

func main() {
	os.Exit(run(os.Args[1:], cli.System()))
}

func run(args []string, streams *cli.IOStreams) int {
	a := newApp(streams)
	err := cli.Execute(newRootCmd(a), args, streams)
	// Errors no command reported itself (flag and argument mistakes, the
	// oca subcommands') still reach --json as an error object.
	if err != nil && !a.reported && wantsJSON(args) {
		_ = emitJSON(streams.Out, map[string]any{"error": errorObject(err)})
	}
	code := cli.Code("ponder", err, streams.ErrOut, ponder.ExitUsage)
	// OCA log lines that never found a session go to stderr on the way out.
	a.close()
	return code
}

// wantsJSON reports whether args ask for --json, read without cobra: a
// flag mistake stops cobra before it sets the flag.
func wantsJSON(args []string) bool {
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if arg == "--json" {
			return true
		}
		if v, ok := strings.CutPrefix(arg, "--json="); ok {
			b, err := strconv.ParseBool(v)
			return err == nil && b
		}
	}
	return false
}
