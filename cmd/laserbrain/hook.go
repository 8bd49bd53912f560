package main

import (
	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/operator/pretooluse"
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
cannot be read exits 2 with "guard error: ...". Dry runs and help requests
(npm publish --dry-run, git clean -n, --help) ask. laserbrain-gate answers
the same way from a binary that starts in about a millisecond.`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.format != "exit" && opts.format != "json" {
				return cli.Usagef("--format must be exit or json, not %q", opts.format)
			}
			return preToolUse(streams, opts.format)
		},
	}
	cmd.Flags().StringVar(&opts.format, "format", "exit", "how to answer a denial: exit (status 2, reason on stderr) or json (permissionDecision)")
	return cmd
}

// preToolUse answers through operator/pretooluse, the code laserbrain-gate
// runs too: one answer, whichever binary the settings name.
func preToolUse(streams *cli.IOStreams, format string) error {
	if code := pretooluse.Run(streams.In, streams.Out, streams.ErrOut, pretooluse.Format(format)); code != 0 {
		return cli.SilentExit(code)
	}
	return nil
}
