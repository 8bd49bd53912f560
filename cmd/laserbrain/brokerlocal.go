package main

import (
	"context"
	"os"
	"runtime/debug"
	"sync"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/hook"
)

// brokerLocal is how laserbrain run's (and laserbrain loop's) broker answers
// in its own process what a confined agent hands it for its run: its
// hooks, as the installed commands run them, and its checks, a stream
// included, each as the command would in a process of its own with the
// operation's environment and streams (the same handler; for a check, the
// same command and the same cli.Run mapping its errors). It saves the agent
// a laserbrain start per tool call and per check. The hooks share one
// backend, opened at the first and held until close: a tool call's hooks
// then open no store, and on PostgreSQL start no connection. Anything else
// (the MCP server) runs as a process.
//
// Its acts are answered here too: a pass the agent's hooks gave an outward
// call the person approved in their client (hook.Act) lives in this
// process's memory alone, and is spent here.
func brokerLocal(storeConfig func() (backend.Config, error), run string, act *hook.Act) (local func(context.Context, broker.Op) (int, bool), close func()) {
	collectLessOften()
	held := &heldStores{config: storeConfig}
	return func(ctx context.Context, op broker.Op) (int, bool) {
		if code, ok := held.hook(ctx, op, hook.Env{Getenv: op.Getenv, Dir: op.Dir, InSupervisor: true, Act: act}); ok {
			return code, true
		}
		if len(op.Argv) == 0 || (op.Argv[0] != "check" && op.Argv[0] != "act") {
			return 0, false
		}
		lf := &Factory{
			IOStreams:   &cli.IOStreams{In: op.Stdin, Out: op.Stdout, ErrOut: op.Stderr},
			StoreConfig: storeConfig,
			Getenv:      op.Getenv,
			AgentRun:    run,
			Dir:         op.Dir,
			Environ:     op.Env,
		}
		if act != nil {
			lf.Passes = act.Passes
		}
		// The root with the one command: what runCmd would run it in.
		root := &cobra.Command{Use: "laserbrain", SilenceUsage: true}
		root.AddCommand(newCheckCmd(lf, nil), newActCmd(lf, nil))
		cli.SetExits(root)
		code, _ := cli.Run(root, op.Argv, lf.IOStreams)
		return code, true
	}, held.close
}

// collectLessOften sets the garbage collector of the process that answers
// an agent's hooks and checks. It holds little (a few MB) and lives as
// long as the agent, and at Go's default it collects each time about 4 MB
// were allocated: several times in a stream of a thousand checks, each on
// the agent's clock. Collecting when the heap is four times what is live
// (at least 12 MB) costs it a few MB more at its peak. GOGC, when set, is
// left as it says.
func collectLessOften() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(300)
	}
}

// heldStores is the backend the broker's hooks share: opened on the first
// hook that needs it, closed with the broker. A hook's Tracker closing it
// closes nothing (keptStores).
type heldStores struct {
	config func() (backend.Config, error)
	mu     sync.Mutex
	b      *backend.Backend
}

func (h *heldStores) stores() (agentrun.Stores, error) {
	if h.b == nil {
		cfg, err := h.config()
		if err != nil {
			return nil, err
		}
		cfg.LongLived = true
		h.b = backend.New(cfg)
	}
	return keptStores{h.b}, nil
}

func (h *heldStores) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.b != nil {
		_ = h.b.Close()
		h.b = nil
	}
}

// keptStores is the held backend as one hook sees it: its Close leaves it
// open for the next hook, and waits on nothing.
type keptStores struct{ *backend.Backend }

func (keptStores) Close() error { return nil }
func (keptStores) Remote() bool { return false }
