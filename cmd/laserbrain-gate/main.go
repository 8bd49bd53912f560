package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/internal/version"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/hook"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: laserbrain-gate [--event EVENT] [--client CLIENT] [--format exit|json] [--ok-status N] < event.json
       laserbrain-gate --version

Answers one PreToolUse event exactly as laserbrain hook pre-tool-use does
(see its help); with --event post-tool-use or post-tool-use-failure, that
event as laserbrain hook EVENT does: the hooks a client runs on every tool
call start here, in a binary smaller than laserbrain. --client names the agent client whose payload it reads and
whose answer it writes: claude (the default), codex, gemini, qwen,
opencode, cline or copilot. For Claude Code: deny is exit status 2 and the
reason on stderr (--format exit, the default) or permissionDecision "deny"
on stdout (--format json); ask, an authorized allow, or (with nobody
attending) a note for the model: JSON on stdout; nothing found: no output.
Other clients get the form they obey (Gemini CLI {"decision":"deny"},
Cline {"cancel":true}, Copilot CLI permissionDecisionReason, …). An event
that cannot be read is denied with "guard error: ...". It exits only 0 or
2: Claude Code treats any other status as not blocking (laserbrain help
exit-codes). With --ok-status N (1 to 125, what the installed hook command
gives) it exits N where it would exit 0, and the command takes only N for
an answer: a program put in the gate's place does not exit N, and the call
is denied.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	format, name, event, ok := "exit", "claude", hook.PreToolUse, ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == client.OKStatusFlag && i+1 < len(args):
			i++
			ok = args[i]
		case strings.HasPrefix(a, client.OKStatusFlag+"="):
			ok = strings.TrimPrefix(a, client.OKStatusFlag+"=")
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
		case a == "--event" && i+1 < len(args), strings.HasPrefix(a, "--event="):
			sub, inline := strings.CutPrefix(a, "--event=")
			if !inline {
				i++
				sub = args[i]
			}
			if event = gateEvent(sub); event == "" {
				fmt.Fprintf(stderr, "guard error: --event %q: the gate answers pre-tool-use, post-tool-use and post-tool-use-failure\n", sub)
				return 2
			}
		case a == "--client" && i+1 < len(args):
			i++
			name = args[i]
		case strings.HasPrefix(a, "--client="):
			name = strings.TrimPrefix(a, "--client=")
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
	if _, err := client.For(client.Name(name), format); err != nil {
		fmt.Fprintf(stderr, "guard error: --client: %v\n", err)
		return 2
	}
	okStatus, err := hook.ParseOKStatus(ok)
	if err != nil {
		fmt.Fprintf(stderr, "guard error: %v\n", err)
		return 2
	}
	return hook.Answered(hook.Run(context.Background(), event, client.Name(name), format, hook.Binary{}, stdin, stdout, stderr), okStatus)
}

// gateEvent is the event a gate's --event names ("" for one it does not
// answer): the ones a client runs on every tool call.
func gateEvent(sub string) client.EventName {
	ev, _ := client.EventOf(sub)
	if !slices.Contains(client.GateEvents, ev) {
		return ""
	}
	return ev
}
