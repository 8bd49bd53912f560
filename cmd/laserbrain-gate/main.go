package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/laserkit/laserkit/internal/version"
	"github.com/laserkit/laserkit/supercode/hook"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: laserbrain-gate [--format exit|json] < event.json
       laserbrain-gate --version

Answers one Claude Code PreToolUse event exactly as laserbrain hook
pre-tool-use does (see its help). deny: exit status 2 and the reason on
stderr (--format exit, the default) or permissionDecision "deny" on stdout
(--format json); ask, an authorized allow, or (with nobody attending) a
note for the model: JSON on stdout; nothing found: no output. An event that
cannot be read exits 2 with "guard error: ...". It exits only 0 or 2:
Claude Code treats any other status as not blocking (laserbrain help
exit-codes).
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	format := "exit"
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-h" || a == "--help":
			fmt.Fprint(stdout, usage)
			return 0
		case a == "--version":
			fmt.Fprint(stdout, version.Get("laserbrain-gate").Text())
			return 0
		case a == "--format" && i+1 < len(args):
			i++
			format = args[i]
		case strings.HasPrefix(a, "--format="):
			format = strings.TrimPrefix(a, "--format=")
		default:
			// Exit 2, not 1: a misconfigured hook must block, not pass.
			fmt.Fprintf(stderr, "guard error: unknown argument %q\n%s", a, usage)
			return 2
		}
	}
	if format != "exit" && format != "json" {
		fmt.Fprintf(stderr, "guard error: --format must be exit or json, not %q\n", format)
		return 2
	}
	return hook.Run(context.Background(), hook.PreToolUse, format, nil, stdin, stdout, stderr)
}
