package broker

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/supercode/client"
)

// Ops says what a confined agent's broker accepts.
type Ops struct {
	// Run is the agent's own run (LASERBRAIN_RUN): check may record only on
	// it.
	Run string
	// LoopCall and LoopRole are the loop session's call directory and
	// role, when a loop started the agent: its MCP server serves that
	// call and no other ("" for laserbrain run: no loop call at all).
	LoopCall, LoopRole string
	// Streams: check --stream is accepted, because the supervisor answers
	// it in its own process (Server.Local), holding every line to Run. A
	// stream's lines name their runs: handed to a process of laserbrain,
	// they would not be held to it.
	Streams bool
}

// OpPonder is the operation a confined agent's ponder hands over: its
// whole command, which laserbrain ponder runs confined as the agent is but
// for ponder's own directory (.ponder), after handing out what the
// supervisor said to the session.
const OpPonder = "ponder"

// EnvPonderTold carries, to the ponder a ponder operation runs, what the
// supervisor said to its session, handed out already (a JSON array of
// strings): ponder shows it instead of asking the fleet's store, which is
// read-only to it as to the agent.
const EnvPonderTold = "LASERBRAIN_PONDER_TOLD"

// Allow is the operations a confined agent's hooks, MCP server and
// checks hand over, and nothing else:
//
//	hook SUBCOMMAND [--client NAME] [--format exit|json]
//	mcp                                  (laserbrain run)
//	mcp --loop-call DIR --loop-role ROLE  (laserbrain loop: its own call only)
//	check [flags]                        (on the agent's own run; no --new-run)
//	check --stream [--run RUN]           (with Streams: each line on the agent's own run)
//	act [--pass PASS] -- COMMAND [ARGS...] (carried out only as the policy, a person's
//	                                      authorization or a pass the supervisor gave allows)
//	ponder [ARGS]                        (any: ponder runs confined as the agent
//	                                      is, its session directory writable)
func (o Ops) Allow(argv []string) error {
	if len(argv) == 0 {
		return errors.New("no operation")
	}
	switch argv[0] {
	case "hook":
		return allowHook(argv[1:])
	case "mcp":
		return o.allowMCP(argv[1:])
	case "check":
		return o.allowCheck(argv[1:])
	case "act":
		// act decides itself, outside, by the policy and a person's
		// authorizations of exactly this command on this run.
		rest := argv[1:]
		if len(rest) > 2 && rest[0] == "--pass" {
			rest = rest[2:]
		}
		if len(rest) < 2 || rest[0] != "--" {
			return errors.New("act: give the command after --")
		}
		return nil
	case OpPonder:
		return nil
	}
	return fmt.Errorf("%q is not an operation an agent's hooks hand over (hook, mcp, check, ponder, act)", argv[0])
}

func allowHook(args []string) error {
	if len(args) == 0 {
		return errors.New("hook: no event")
	}
	if _, ok := client.EventOf(args[0]); !ok {
		return fmt.Errorf("hook: %q is not an event", args[0])
	}
	rest := args[1:]
	for len(rest) > 0 {
		flag, val, inline := strings.Cut(rest[0], "=")
		if !inline {
			if len(rest) < 2 {
				return fmt.Errorf("hook: %s needs a value", flag)
			}
			val, rest = rest[1], rest[2:]
		} else {
			rest = rest[1:]
		}
		switch flag {
		case "--client":
			if !slices.Contains(client.Names, client.Name(val)) {
				return fmt.Errorf("hook: --client %q is not a client", val)
			}
		case "--format":
			if val != "exit" && val != "json" {
				return fmt.Errorf("hook: --format %q", val)
			}
		default:
			return fmt.Errorf("hook: %q is not a hook flag", flag)
		}
	}
	return nil
}

func (o Ops) allowMCP(args []string) error {
	if len(args) == 0 {
		return nil
	}
	got := map[string]string{}
	for i := 0; i < len(args); i++ {
		flag, val, inline := strings.Cut(args[i], "=")
		if !inline && i+1 < len(args) {
			i++
			val = args[i]
		}
		got[flag] = val
	}
	if o.LoopCall != "" && len(got) == 2 && got["--loop-call"] == o.LoopCall && got["--loop-role"] == o.LoopRole {
		return nil
	}
	return fmt.Errorf("mcp %s: only this session's own server is served", strings.Join(args, " "))
}

// checkValued are check's flags that take a value.
var checkValued = []string{"--goal", "--progress", "--distance", "--parent-goal", "--doing", "--next", "--blocked", "--run"}

func (o Ops) allowCheck(args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return errors.New("check takes no arguments")
		}
		if !strings.HasPrefix(a, "-") {
			return errors.New("check takes no arguments")
		}
		flag, val, inline := strings.Cut(a, "=")
		if strings.HasPrefix(flag, "--") && slices.Contains(checkValued, flag) && !inline {
			if i+1 >= len(args) {
				return fmt.Errorf("check: %s needs a value", flag)
			}
			i++
			val = args[i]
		}
		switch flag {
		case "--run":
			if o.Run == "" || val != o.Run {
				return fmt.Errorf("check --run %s: an agent checks only its own run (%s)", val, o.Run)
			}
		case "--new-run":
			return errors.New("check --new-run: an agent checks only its own run")
		case "--stream":
			if !o.Streams {
				return errors.New("check --stream: this supervisor answers single checks only")
			}
		case "--goal", "--progress", "--distance", "--parent-goal", "--doing", "--next", "--blocked",
			"--user-turn", "--json":
		default:
			return fmt.Errorf("check: %q is not a flag an agent's check hands over", flag)
		}
	}
	return nil
}
