package main

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/hook"
)

// clientValues completes --client and a client argument: each name with
// its client's title.
func clientValues() []string {
	out := make([]string, len(client.Names))
	for i, n := range client.Names {
		out[i] = string(n) + "\t" + n.Title()
	}
	return out
}

func newHookCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook EVENT",
		Short: "Agent client hooks: gate, observe and judge an agent's run",
		Long: `hook EVENT reads one hook event (JSON) on standard input and answers it,
for the agent client --client names: claude (Claude Code, the default),
codex, gemini, qwen, opencode, cline or copilot. Each client's payload is
read, and the answer written, in that client's own form. laserbrain install
CLIENT puts every one of them in the client's settings; laserbrain run adds
them for one invocation. A payload the hook cannot read as that client's
fails closed, with the setting to fix (usually --client).

The run is found from LASERBRAIN_RUN (set by laserbrain run) or from the
event's session_id. A payload whose hook_event_name is another event is
refused. No hook ever exits 1 (Claude Code would go ahead): an internal
error denies in pre-tool-use ("guard error: ...", in the client's form of a
denial) and is logged and passed over (exit 0) elsewhere. laserbrain-gate
answers pre-tool-use the same way from a binary that starts faster.`,
		Example: `  echo '{"tool_name":"Bash","tool_input":{"command":"git push --force"}}' | laserbrain hook pre-tool-use
  laserbrain install claude   # puts every hook into .claude/settings.json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	for _, c := range hook.Commands {
		cmd.AddCommand(newHookEventCmd(f, c, nil))
	}
	cmd.AddCommand(newHookServeCmd(f, nil))
	return cmd
}

var hookHelp = map[client.EventName]string{
	hook.PreToolUse: `pre-tool-use gates one tool call before it runs.

Shell commands (Claude Code's and Codex's Bash, Codex's exec_command,
Gemini CLI's and Qwen Code's run_shell_command, opencode's and Copilot
CLI's bash, Cline's run_commands — each of its commands — and any other
tool whose input has a "command") are classified by the operator gate, and
the files write tools write (Write, Edit, MultiEdit, NotebookEdit,
write_file, replace, edit, write, write_to_file, create, apply_patch's) are
checked against protected paths (.git/, .ponder/, every client's hook
settings, the laserbrain home). The answers below are Claude Code's; other
clients get the same decision in the form they obey (--client):

  deny   an irreversible or outward command would run, or a protected file
         would be written, and it is refused: while the agent's run drifts
         or its whole-run judgment is abandon, wrong-problem or repeating
         (the reason says so), and otherwise unless a person authorized
         this very action (laserbrain authorize). With --format exit (the
         default) the reason goes to stderr and the exit status is 2, which
         blocks the call and shows the reason to the model; with --format
         json it is printed as hookSpecificOutput (permissionDecision
         "deny") with exit status 0.
  allow  a person's authorization covered it: printed as JSON
         (permissionDecision "allow", with the authorization's id).
  ask    the match is only in data (a commit message, an echo), in code
         given to an interpreter, in a dry run, or the command could not
         be read (fail closed): printed as JSON — when a person is there
         to answer, or nothing says whether one is.
  note   nobody is there (claude -p, CI, laserbrain loop, laserbrain run
         without a terminal) and the match is only in data or a dry run:
         the call goes ahead, the finding is recorded on the run and put
         before the model (hookSpecificOutput.additionalContext, no
         permissionDecision), exit 0. Code and commands that could not be
         read are denied instead, with what to do (split the command, or
         ask the user to run or authorize it); nobody is asked.
  pass   nothing found: no output, exit 0 — the agent's own permission
         rules still apply.

Presence comes from CLAUDE_CODE_SESSION_ATTENDED (Claude Code's own word),
LASERBRAIN_LOOP_RUN, LASERBRAIN_ATTENDED (laserbrain run) and CI; every ask,
note and unattended denial says which it assumed and why
(operator/POLICY.md, "Who is there").`,
	hook.PostToolUse:        `post-tool-use records a completed tool call on the agent's run as an observed event (it worked unless interrupted), so the next check is corroborated. laserbrain's own MCP tools are not recorded. Exit 0.`,
	hook.PostToolUseFailure: `post-tool-use-failure records a failed tool call on the agent's run. Exit 0.`,
	hook.UserPromptSubmit:   `user-prompt-submit marks the run's next check a user turn: a person redirected the agent, so a new goal is a new instruction rather than drift. Exit 0.`,
	hook.Stop:               `stop judges the whole run. When its last check drifted, the stop is blocked once ({"decision":"block","reason":...} with the agent's own advice); a stop after a block (stop_hook_active) goes through. Exit 0.`,
	hook.SessionStart:       `session-start opens the agent's run (or attaches the session to the run laserbrain run made). Exit 0.`,
	hook.SessionEnd:         `session-end records the end of the session, and ends a run the session opened by itself. Exit 0.`,
	client.Notification:     `notification records that the agent waits for a person, when the client's notification says so: Claude Code's (and Qwen Code's) permission_prompt, worker_permission_prompt, idle_prompt, elicitation_dialog and agent_needs_input, Gemini CLI's ToolPermission, opencode's permission.asked (through laserbrain's plugin). The run then shows as waiting for a person (laserbrain report, laserbrain ui, laserbrain supervise --escalate-waiting) until its next event. Other notifications (auth_success, …) are not recorded. Exit 0.`,
}

type hookOptions struct {
	IO *cli.IOStreams
	// Hook is what a hook process takes from this binary.
	Hook func() hook.Binary

	event              client.EventName
	format, clientName string
	okStatus           int
}

func newHookEventCmd(f *Factory, c struct {
	Event client.EventName
	Name  string
}, runF func(*hookOptions) error) *cobra.Command {
	ev := c.Event
	opts := &hookOptions{IO: f.IOStreams, Hook: f.Hook, event: ev}
	cmd := &cobra.Command{
		Use:   c.Name,
		Short: "Answer a " + string(c.Event) + " event",
		Long:  hookHelp[ev],
		Example: "  laserbrain hook " + c.Name + " < event.json\n" +
			"  # in .claude/settings.json (laserbrain install claude writes it, with this binary's absolute path):\n" +
			`  {"hooks": {"` + string(c.Event) + `": [{"hooks": [{"type": "command", "command": "/usr/local/bin/laserbrain hook ` + c.Name + `"}]}]}}` + "\n" +
			"  laserbrain hook " + c.Name + " --client gemini < event.json",
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runHook),
	}
	cmd.Flags().StringVar(&opts.clientName, "client", "claude", "the agent client running this hook: claude, codex, gemini, qwen, opencode, cline or copilot")
	cli.CompleteFlag(cmd, "client", cli.Values(clientValues()...))
	if ev == hook.PreToolUse {
		cmd.Flags().StringVar(&opts.format, "format", "exit", "how to answer a denial: exit (status 2, reason on stderr) or json (permissionDecision)")
		cli.CompleteFlag(cmd, "format", cli.Values("exit\tdeny with status 2, the reason on stderr", "json\tdeny with permissionDecision on stdout"))
		cmd.Flags().IntVar(&opts.okStatus, "ok-status", 0, "exit with this status (1-125) where the answer is 0: the installed command takes only it for an answer, so a program put in the gate's place is a denial")
		cli.CompleteFlags(cmd, cli.NoValue, "ok-status")
		// Claude Code treats any status but 2 as not blocking: a usage
		// mistake blocks too.
		cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "deny: the call is blocked, the reason on stderr (--format exit); also a guard error or a flag mistake, which block too"},
			cli.ExitDoc{Code: cli.ExitAnswered, When: "with --ok-status 86 (the installed command): the call goes on"})
	} else {
		opts.format = "exit"
		cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitOK, When: "always, failures included (logged to hook-errors.log): a hook must not break the session"},
			cli.ExitDoc{Code: cli.ExitUsage, When: "a flag mistake only"})
	}
	return cmd
}

// runHook answers one event as a hook process of this binary.
func runHook(opts *hookOptions) error {
	if opts.format != "exit" && opts.format != "json" {
		return cli.Usagef("--format must be exit or json, not %q", opts.format)
	}
	if _, err := client.For(client.Name(opts.clientName), opts.format); err != nil {
		return cli.Usagef("--client: %v", err)
	}
	if opts.okStatus != 0 {
		if _, err := hook.ParseOKStatus(strconv.Itoa(opts.okStatus)); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	s := opts.IO
	code := hook.Answered(hook.Run(context.Background(), opts.event, client.Name(opts.clientName), opts.format, opts.Hook(), s.In, s.Out, s.ErrOut), opts.okStatus)
	if code != 0 {
		return cli.PassThrough(code)
	}
	return nil
}
