// Command laserbrain-gate is the operator gate as a Claude Code PreToolUse
// hook, in a binary that links nothing but the gate and the standard
// library. Claude Code starts a hook process for every tool call, so its
// start-up cost is paid on every command an agent runs: the laserbrain
// binary links cobra, the grammar's JSON-schema validator and (soon) the
// MCP SDK and pgx, whose package initialisation alone takes several
// milliseconds; this one starts in about one. `laserbrain hook
// pre-tool-use` answers the same way, through the same code
// (operator/pretooluse), for setups that prefer one binary.
//
// Usage: laserbrain-gate [--format exit|json] < event.json
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/laserkit/laserkit/operator/pretooluse"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: laserbrain-gate [--format exit|json] < event.json

Reads one Claude Code PreToolUse event on standard input and answers it with
the operator gate. deny: exit status 2 and the reason on stderr (--format
exit, the default) or permissionDecision "deny" on stdout (--format json).
ask: permissionDecision "ask" on stdout. allow: no output. An event that
cannot be read exits 2 with "guard error: ...".
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	format := pretooluse.FormatExit
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-h" || a == "--help":
			fmt.Fprint(stdout, usage)
			return 0
		case a == "--format" && i+1 < len(args):
			i++
			format = pretooluse.Format(args[i])
		case len(a) > 9 && a[:9] == "--format=":
			format = pretooluse.Format(a[9:])
		default:
			// Exit 2, not 1: a misconfigured hook must block, not pass.
			fmt.Fprintf(stderr, "guard error: unknown argument %q\n%s", a, usage)
			return 2
		}
	}
	return pretooluse.Run(stdin, stdout, stderr, format)
}
