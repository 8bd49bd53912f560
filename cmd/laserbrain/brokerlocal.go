package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/hook"
)

// brokerLocal is how laserbrain run's (and laserbrain loop's) broker answers
// in its own process what a confined agent hands it for its run: its
// hooks, as the installed commands run them, and its checks, a stream
// included, each as the command would in a process of its own with the
// operation's environment and streams (the same command, the same
// cli.Run mapping its errors). It saves the agent a laserbrain start per
// tool call and per check. Anything else (the MCP server) runs as a
// process.
func brokerLocal(storeConfig func() (backend.Config, error), run string) func(context.Context, broker.Op) (int, bool) {
	return func(ctx context.Context, op broker.Op) (int, bool) {
		lf := &Factory{
			IOStreams:   &cli.IOStreams{In: op.Stdin, Out: op.Stdout, ErrOut: op.Stderr},
			StoreConfig: storeConfig,
			Getenv:      op.Getenv,
			AgentRun:    run,
		}
		if hc, ok := fastHook(op.Argv); ok {
			return hook.Serve(ctx, hc.event, hc.client, hc.format, lf.Hook(), hook.Env{Getenv: op.Getenv, Dir: op.Dir}, op.Stdin, op.Stdout, op.Stderr), true
		}
		if len(op.Argv) == 0 || op.Argv[0] != "check" {
			return 0, false
		}
		// The root with check alone: what runCmd would run it in.
		root := &cobra.Command{Use: "laserbrain", SilenceUsage: true}
		root.AddCommand(newCheckCmd(lf, nil))
		cli.SetExits(root)
		code, _ := cli.Run(root, op.Argv, lf.IOStreams)
		return code, true
	}
}
