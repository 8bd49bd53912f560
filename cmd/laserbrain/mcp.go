package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/mcpserver"
)

type mcpOptions struct {
	IO                 *cli.IOStreams
	loopCall, loopRole string
	Tracker            func() *agentrun.Tracker
}

func newMCPCmd(f *Factory, runF func(*mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{IO: f.IOStreams, Tracker: f.Tracker}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the drift instrument to an agent over MCP (stdio)",
		Long: `mcp speaks the Model Context Protocol (2024-11-05, newline-delimited JSON-RPC)
on standard input and output (server name "laserbrain"), one message at a
time in the order read, until the client closes its end; every request read
by then is answered. Tools: check_state, modulate, reset_task, get_history,
similarity, laserscore, capabilities, store_list, store_find, store_vend,
read_text (the reference's, answering as it does: laserbrain vectors check
holds them to its recorded sessions), judge_run, classify, lint, link_read,
link_write and supervision. The method shelf adds your own methods from
~/.laserbrain/workflows/NAME.json, a file there shadowing a shipped method
of its name.

Checks go to the caller's run: LASERBRAIN_RUN (laserbrain run sets it), else
the Claude Code session (CLAUDE_CODE_SESSION_ID), else a run opened for this
connection. Nothing but protocol is written to standard output.

laserbrain loop starts it with --loop-call DIR --loop-role agent|judge for
each session it runs: the session then also gets escalate, and a judge gets
verdict (validated against the verdict schema), both answering into DIR.`,
		Example: `  claude mcp add laserbrain -- /usr/local/bin/laserbrain mcp
  laserbrain install claude   # adds it to .mcp.json with the hooks`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if handled, err := relayed(cmd, opts.IO, "mcp"); handled {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runMCP(opts)
		},
	}
	cmd.Flags().StringVar(&opts.loopCall, "loop-call", "", "serve a laserbrain loop session answering into this call directory")
	cmd.Flags().StringVar(&opts.loopRole, "loop-role", "", "the loop session's role: agent or judge")
	_ = cmd.Flags().MarkHidden("loop-call")
	_ = cmd.Flags().MarkHidden("loop-role")
	cli.CompleteFlag(cmd, "loop-role", cli.Values("agent", "judge"))
	cli.CompleteFlag(cmd, "loop-call", cli.Dirs)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "a bad --loop-call or --loop-role"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the session failed other than by the client hanging up"})
	return cmd
}

func runMCP(opts *mcpOptions) error {
	var so mcpserver.Options
	if opts.loopCall != "" || opts.loopRole != "" {
		so.Loop = &mcpserver.LoopCall{Dir: opts.loopCall, Role: opts.loopRole}
	}
	sup := opts.Tracker()
	defer sup.Close()
	srv, err := mcpserver.NewWithOptions(sup, so)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	ctx := context.Background()
	if err := srv.Serve(ctx, opts.IO.In, opts.IO.Out); err != nil && ctx.Err() == nil && !isClosed(err) {
		return cli.Failure(err)
	}
	return nil
}

// isClosed: the client hanging up is the normal end of a session.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) || strings.Contains(err.Error(), "closed")
}
