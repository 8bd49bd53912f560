package main

import (
	"context"
	"strings"

	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/hook"
)

// hookCall is one `laserbrain hook EVENT` invocation in the forms install
// writes (client.Argv): the event, then --client and (pre-tool-use only)
// --format, each at most once, with a value that is valid.
type hookCall struct {
	event  client.EventName
	client client.Name
	format string
	// okStatus is --ok-status (pre-tool-use only; 0: none).
	okStatus int
}

// fastHook reads args as a hookCall. Anything else — help, a flag it does
// not know, a repeated or invalid value, a stray word — is not one (ok
// false), and goes through the command tree, which then gives the answer or
// the usage error the help documents. A client runs a hook on every tool
// call; building the tree (help, completion, exit-code tables) for it would
// cost more than the call's decision.
func fastHook(args []string) (hc hookCall, ok bool) {
	if len(args) < 2 || args[0] != "hook" {
		return hookCall{}, false
	}
	for _, c := range hook.Commands {
		if c.Name == args[1] {
			hc.event, ok = c.Event, true
		}
	}
	if !ok {
		return hookCall{}, false
	}
	hc.client, hc.format = client.Claude, "exit"
	var sawClient, sawFormat, sawOK bool
	for rest := args[2:]; len(rest) > 0; {
		name, value, inline := strings.Cut(rest[0], "=")
		if !inline {
			if len(rest) < 2 {
				return hookCall{}, false
			}
			value, rest = rest[1], rest[2:]
		} else {
			rest = rest[1:]
		}
		switch {
		case name == "--client" && !sawClient:
			hc.client, sawClient = client.Name(value), true
		case name == "--format" && !sawFormat && hc.event == hook.PreToolUse:
			hc.format, sawFormat = value, true
		case name == client.OKStatusFlag && !sawOK && hc.event == hook.PreToolUse:
			n, err := hook.ParseOKStatus(value)
			if err != nil || n == 0 {
				return hookCall{}, false
			}
			hc.okStatus, sawOK = n, true
		default:
			return hookCall{}, false
		}
	}
	if hc.format != "exit" && hc.format != "json" {
		return hookCall{}, false
	}
	if _, err := client.For(hc.client, hc.format); err != nil {
		return hookCall{}, false
	}
	return hc, true
}

// run answers the event exactly as the hook command's own RunE does.
func (hc hookCall) run(f *Factory) int {
	s := f.IOStreams
	return hook.Answered(hook.Run(context.Background(), hc.event, hc.client, hc.format, f.Hook(), s.In, s.Out, s.ErrOut), hc.okStatus)
}
