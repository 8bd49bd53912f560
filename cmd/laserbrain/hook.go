package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/operator"
)

func newHookCmd(streams *cli.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Agent hooks (Claude Code PreToolUse)",
		Args:  cli.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newHookPreToolUseCmd(streams))
	return cmd
}

// maxHookInput bounds what the hook reads; a larger event is refused rather
// than half-read.
const maxHookInput = 8 << 20

type hookOptions struct {
	format string
}

func newHookPreToolUseCmd(streams *cli.IOStreams) *cobra.Command {
	opts := &hookOptions{}
	cmd := &cobra.Command{
		Use:   "pre-tool-use [--format exit|json]",
		Short: "Gate a Claude Code Bash tool call before it runs",
		Long: `pre-tool-use reads one Claude Code PreToolUse event (JSON) on standard input.
Tools other than Bash pass. A Bash command is classified by the operator gate:

  deny   an irreversible or outward command would run. With --format exit
         (the default) the reason goes to stderr and the exit status is 2,
         which blocks the call and shows the reason to the model; with
         --format json the decision is printed as hookSpecificOutput
         (permissionDecision "deny") and the exit status is 0.
  ask    the match is only in data (a commit message, an echo, a heredoc
         nobody runs) or the command could not be read (fail closed): the
         decision "ask" is printed as JSON in both formats, so a person
         confirms.
  allow  nothing found: no output, exit 0 — the agent's own permission rules
         still apply (the hook never answers "allow", which would skip them).

A finding never exits 1 (Claude Code would run the command). An event that
cannot be read exits 2 with "guard error: ...".`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if opts.format != "exit" && opts.format != "json" {
				return cli.Usagef("--format must be exit or json, not %q", opts.format)
			}
			defer func() {
				if p := recover(); p != nil {
					err = guardError(streams, fmt.Errorf("internal: %v", p))
				}
			}()
			return preToolUse(streams, opts.format)
		},
	}
	cmd.Flags().StringVar(&opts.format, "format", "exit", "how to answer a denial: exit (status 2, reason on stderr) or json (permissionDecision)")
	return cmd
}

func guardError(streams *cli.IOStreams, err error) error {
	fmt.Fprintf(streams.ErrOut, "guard error: %v\n", err)
	return cli.SilentExit(2)
}

func preToolUse(streams *cli.IOStreams, format string) error {
	data, err := io.ReadAll(io.LimitReader(streams.In, maxHookInput+1))
	if err != nil {
		return guardError(streams, fmt.Errorf("reading the event: %w", err))
	}
	if len(data) > maxHookInput {
		return guardError(streams, fmt.Errorf("event larger than %d bytes", maxHookInput))
	}
	var ev struct {
		ToolName  *string         `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return guardError(streams, errors.New("no event on standard input"))
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return guardError(streams, fmt.Errorf("the event is not a JSON object: %w", err))
	}
	if ev.ToolName == nil {
		return guardError(streams, errors.New(`the event has no "tool_name"`))
	}
	if *ev.ToolName != "Bash" {
		return nil
	}
	var in struct {
		Command *string `json:"command"`
	}
	if err := json.Unmarshal(ev.ToolInput, &in); err != nil || in.Command == nil {
		return guardError(streams, errors.New(`a Bash event needs tool_input.command as a string`))
	}
	r := operator.Classify(*in.Command, true, false)
	switch r.Decision {
	case operator.Deny:
		reason := "laserbrain operator gate: this command is irreversible or outward and nobody authorized it — " + r.Why +
			". Do not retry it in another form; ask the user to run it or to authorize it."
		if format == "json" {
			return writeDecision(streams, "deny", reason)
		}
		fmt.Fprintln(streams.ErrOut, reason)
		return cli.SilentExit(2)
	case operator.Ask:
		return writeDecision(streams, "ask", "laserbrain operator gate: "+r.Why+" — confirm before it runs.")
	}
	return nil
}

func writeDecision(streams *cli.IOStreams, decision, reason string) error {
	out := map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       decision,
		"permissionDecisionReason": reason,
	}}
	b, err := json.Marshal(out)
	if err != nil {
		return guardError(streams, err)
	}
	fmt.Fprintln(streams.Out, string(b))
	return nil
}
