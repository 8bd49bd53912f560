package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/install"
)

type runOptions struct {
	agent, goal string
	ponder      string
	unattended  bool
	// The run's coverage (--coverage, --coverage-floor, …), exported to
	// the agent's hooks as coverage's variables; unset flags leave the
	// project's settings.
	coverage, floor, blockAfter, nudgeEvery string
	limits                                  fleet.Limits
	grace                                   time.Duration
}

// coverageFlags are run's coverage flags and the variable each becomes.
var coverageFlags = []struct{ flag, env string }{
	{"coverage", coverage.ModeEnv},
	{"coverage-floor", coverage.FloorEnv},
	{"coverage-block-after", coverage.BlockAfterEnv},
	{"coverage-nudge-every", coverage.NudgeEveryEnv},
}

// coverageEnv is the environment the run's coverage flags give the agent,
// each checked as the hooks will read it: a value they could not use is
// refused here, naming the flag, before anything starts.
func coverageEnv(cmd *cobra.Command, opts *runOptions) ([]string, error) {
	values := map[string]string{"coverage": opts.coverage, "coverage-floor": opts.floor,
		"coverage-block-after": opts.blockAfter, "coverage-nudge-every": opts.nudgeEvery}
	set := map[string]string{}
	var env []string
	for _, f := range coverageFlags {
		if !cmd.Flags().Changed(f.flag) {
			continue
		}
		v := strings.TrimSpace(values[f.flag])
		one := map[string]string{f.env: v}
		if f.flag != "coverage" {
			one[coverage.ModeEnv] = string(coverage.On)
		}
		if _, err := coverage.Configure(coverage.Settings{}, func(k string) (string, bool) { s, ok := one[k]; return s, ok }); err != nil || v == "" {
			why := "give a value"
			if err != nil {
				why = err.Error()
			}
			return nil, cli.Usagef("--%s %q: %s; nothing was started", f.flag, values[f.flag], why)
		}
		set[f.env] = v
		env = append(env, f.env+"="+v)
	}
	if _, err := coverage.Configure(coverage.Settings{}, func(k string) (string, bool) { s, ok := set[k]; return s, ok }); err != nil {
		return nil, cli.Usagef("the coverage flags: %v; nothing was started", err)
	}
	return env, nil
}

// laserbrain run's limit status is the shared table's "exhausted": this
// fails to compile when they part.
var _ = [1]int{}[agentrun.ExitLimit-cli.ExitExhausted]

func newRunCmd(f *Factory) *cobra.Command {
	streams := f.IOStreams
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run [--agent NAME] [--goal TEXT] [--unattended] [limits] -- COMMAND [ARGS...]",
		Short: "Run an agent command under supervision",
		Long: `run registers a run (agent name, run id, and the fleet: the repository's
first commit, or LASERBRAIN_FLEET, so worktrees and clones of one repository
share a fleet), then runs COMMAND with LASERBRAIN_RUN, LASERBRAIN_AGENT and
LASERBRAIN_FLEET in its environment. The hooks and the MCP server find the run
through them. For an agent client it recognises by its program's name, it
also adds — ahead of your own arguments, which stay as they are — our hooks
(by this binary's absolute path) and MCP server for that one invocation:

  claude    --settings and --mcp-config files (the server's tools allowed)
  codex     -c hooks.EVENT=… and -c mcp_servers.laserbrain=… (a session
            layer), trusted through codex app-server first
  gemini    GEMINI_CLI_SYSTEM_SETTINGS_PATH: a system settings layer
  qwen      QWEN_CODE_SYSTEM_SETTINGS_PATH: a system settings layer
  opencode  OPENCODE_CONFIG_DIR: a config directory with our plugin
  cline     --hooks-dir, and CLINE_MCP_SETTINGS_PATH (your servers and ours)
  copilot   --additional-mcp-config; Copilot CLI takes no hooks for one
            invocation, so run laserbrain install copilot first (without
            it the run is refused rather than started unsupervised)

--goal grounds the run before the agent starts (distance unknown); without
it the agent's first check_state does. At its session's start the agent is
told how to spell its state (the grammar's fields, the name its client
gives check_state) and the run's ground, where its client carries text.

Coverage holds the agent to being measured: by default a reminder after
every 3 steps without a check, calls that change something refused after 5
(reads run, warned), every call after 10, a Stop with 3 or more unchecked
steps held once for a last check; laserbrain's own tools are never refused.
A check counts however it comes: check_state, laserbrain check (--stream
too), a loop step. --coverage on|off|reference, --coverage-floor,
--coverage-block-after and --coverage-nudge-every set it for this run (the
hooks read them as LASERBRAIN_COVERAGE, _FLOOR, _BLOCK_AFTER, _NUDGE_EVERY),
over the project's .laserbrain/policy.json "coverage" (operator/POLICY.md).
laserbrain coverage and runs --json show the figures.

What a supervisor says to the agent (a drifting verdict's advice, a
person's answer, a halt and its release) is handed to it once, on its next
hook event whose answer its client shows the model, and journaled.

--ponder SLUG starts a ponder agent on its own session: the agent gets
PONDER_SLUG=SLUG, so every ponder command it runs works on that session (one
per agent on a repository), and the run records it — the supervisor then sees
the run and ponder:SLUG as one worker, never as a collision. Without --ponder,
a PONDER_SLUG already in run's environment is passed through and recorded the
same way. The session must exist (ponder start prints its slug).

The run says whether a person can answer the agent (LASERBRAIN_ATTENDED=1
or 0, which the hooks read): nobody when standard input is not a terminal,
in a client's headless mode (claude -p, codex exec, gemini -p, qwen -p,
opencode run, cline --json, copilot -p), or with --unattended. With nobody there the gate never asks:
a match only in data goes ahead with a note, code or a command it cannot
read is refused with what to do instead (operator/POLICY.md).

Runaway limits stop the agent, each journaled on the run with its reason
and named in the summary, and run then exits 4: --timeout (wall-clock,
default 6h), --max-tool-calls (default 1000) and --max-checks-off-ground
(drifting checks in a row, default 5); 0 turns one off. Tool calls are
counted by the pre-tool-use hook, which asks run before each one (every
tool, laserbrain's own included; within 2s, or the call is refused) and
past the limit refuses it with the reason for the model; checks are those
of check_state and laserbrain check. An agent past either limit has
--grace (default 10s) to end its turn, every tool call refused, before it
is sent SIGTERM; at --timeout it is sent SIGTERM at once; SIGKILL follows
5s after. An agent without our hooks is held to --timeout alone. A run
inside another run is held to the outer run's limits too.

Signals (INT, TERM, HUP, QUIT, USR1, USR2) are passed to the agent; when
standard input is a terminal, INT and QUIT are not sent again (the terminal
already sent them to the agent). When the agent exits, the whole-run
judgment is printed on standard error.

run exits with the agent's own status, 128+N when a signal N killed it, 4
when a limit stopped it.`,
		Example: `  laserbrain run -- claude "fix the flaky checkout test"
  laserbrain run --agent reviewer --goal "review the billing PR" -- claude -p "review PR 42"
  laserbrain run --timeout 30m --max-tool-calls 200 --max-checks-off-ground 3 -- claude -p "fix the build"
  laserbrain run -- codex exec "fix the importer"
  laserbrain run -- aider --message "add input validation"
  laserbrain run --ponder security-2026-08-24 -- claude "audit the checkout flow with ponder"`,
		Args: cli.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() < 0 && len(args) > 0 {
				return cli.Usagef("put the agent command after --: laserbrain run [flags] -- %s", strings.Join(args, " "))
			}
			if len(args) == 0 {
				return cli.Usagef("no agent command given (laserbrain run [flags] -- COMMAND [ARGS...])")
			}
			self, err := os.Executable()
			if err != nil {
				return cli.Exit(agentrun.ExitSetup, fmt.Errorf("cannot find this binary's path for the hooks: %w", err))
			}
			sup := f.Tracker()
			defer sup.Close()
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if opts.limits.Timeout < 0 || opts.limits.MaxToolCalls < 0 || opts.limits.MaxOffGround < 0 || opts.grace < 0 {
				return cli.Usagef("--timeout, --max-tool-calls, --max-checks-off-ground and --grace cannot be negative (0 turns a limit off)")
			}
			ponderSlug := opts.ponder
			if ponderSlug == "" {
				ponderSlug = strings.TrimSpace(os.Getenv(agentrun.EnvPonder))
			}
			if ponderSlug != "" {
				// The session must exist before an agent starts on it: a
				// PONDER_SLUG that names nothing fails every ponder command.
				cwd, err := os.Getwd()
				if err != nil {
					return cli.Exit(agentrun.ExitSetup, err)
				}
				if _, _, err := ponder.NewReader(cwd).Resolve(ponderSlug); err != nil {
					return cli.Usagef("--ponder %s: %v; nothing was started", ponderSlug, err)
				}
			}
			covEnv, err := coverageEnv(cmd, opts)
			if err != nil {
				return err
			}
			so := agentrun.SpawnOptions{
				Agent: opts.agent, Goal: opts.goal, Command: args, Self: self, Unattended: opts.unattended, Ponder: ponderSlug,
				Stdin: streams.In, Stdout: streams.Out, Stderr: streams.ErrOut, Limits: opts.limits, Grace: opts.grace,
			}
			if len(covEnv) > 0 {
				so.Env = append(os.Environ(), covEnv...)
			}
			confined := false // set below, once the confinement is known
			if c, ok := client.Detect(args[0]); ok {
				so.Headless = client.Headless(c, args[1:])
				dir, _ := os.Getwd()
				home, _ := os.UserHomeDir()
				program, err := exec.LookPath(args[0])
				if err != nil {
					program = args[0] // Spawn reports it
				}
				ro := install.RunOptions{Client: c, Program: program, Args: args[1:], Self: self, Dir: dir, Home: home,
					Getenv: os.Getenv, Environ: os.Environ(), Ctx: ctx}
				// What the kernel holds (or would), the client's own rules
				// deny its file tools too, where it has them.
				ro.Protect = protectedPaths(self, dir)
				so.Prepare = func(tmp string) ([]string, []string, error) {
					ro := ro
					ro.Confined = confined
					ro.Protect = append(ro.Protect[:len(ro.Protect):len(ro.Protect)], tmp)
					return install.Prepare(ro, tmp)
				}
			}
			started, stopTree := superviseTree()
			defer stopTree()
			so.Started = func(_ fleet.Run, p *os.Process) { started(p.Pid) }
			fn, why := agentConfinement(self)
			confined = fn != nil // read when the run's layer is prepared
			if fn != nil {
				so.Confine = func(cmd *exec.Cmd, r fleet.Run, dir string) (string, func(), error) {
					return fn(cmd, broker.Ops{Run: r.ID}, dir)
				}
			} else {
				so.Unconfined = "not confined by the kernel: " + why + "; the gate alone supervises this agent (laserbrain doctor)"
				fmt.Fprintf(streams.ErrOut, "laserbrain run: %s\n", so.Unconfined)
			}
			res, err := sup.Spawn(ctx, so)
			var se *agentrun.SpawnError
			if errors.As(err, &se) {
				if se.Code == 2 {
					return cli.Usagef("%v", se.Err)
				}
				return cli.Exit(se.Code, se)
			}
			w := streams.ErrOut
			if err != nil {
				fmt.Fprintf(w, "laserbrain run: the agent exited %d, but its run could not be closed: %v\n", res.ExitCode, err)
				return cli.SilentExit(res.ExitCode)
			}
			r, j := res.Run, res.Judgment
			var figs coverage.Figures
			var events []fleet.RunEvent
			if st, err := sup.Fleet(); err == nil {
				if events, err = st.Events(ctx, r.ID); err == nil {
					figs = coverage.Measure(events)
				}
			}
			fmt.Fprintf(w, "laserbrain run %s (agent %s): exit %d, %s", r.ID, r.Agent, res.ExitCode, text.Plural(int64(r.Checks), "check"))
			if figs.ToolCalls > 0 {
				fmt.Fprintf(w, ", %s", text.Plural(int64(figs.ToolCalls), "tool call"))
			}
			switch {
			case figs.Unmeasured:
				fmt.Fprintf(w, ", %s", coverage.Unmeasured)
			case r.Last != nil:
				fmt.Fprintf(w, ", last verdict %s", r.Last.Reason)
			}
			if figs.ToolCalls > 0 {
				fmt.Fprintf(w, "\ncoverage: %s", figs.Summary())
			}
			if res.Stopped != nil {
				fmt.Fprintf(w, "\nstopped: %s", res.Stopped.Text())
			}
			if st, err := sup.Fleet(); err == nil {
				if h, ok, err := st.ActiveHalt(ctx, r.Fleet, fleet.RunAgent(r)); err == nil && ok {
					fmt.Fprintf(w, "\nhalted: %s (by %s; release: %s)", h.Reason, h.By, fleet.ReleaseCommand(h.Agent))
				}
			}
			if g := denialLine(events, r.ID); g != "" {
				fmt.Fprintf(w, "\n%s", g)
			}
			fmt.Fprintf(w, "\njudgment: %s — %s", j.Verdict, summaryText(j.Because))
			if d := driftLine(j); d != "" {
				fmt.Fprintf(w, "\n%s", d)
			}
			fmt.Fprintf(w, "\ncounsel:  %s\n", j.Counsel)
			if res.ExitCode != 0 {
				return cli.SilentExit(res.ExitCode)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.agent, "agent", "", "the agent's name (default: the command's name)")
	cmd.Flags().StringVar(&opts.goal, "goal", "", "ground the run on this goal before the agent starts")
	cmd.Flags().StringVar(&opts.ponder, "ponder", "", "the ponder session the agent works on: exported as PONDER_SLUG and recorded on the run")
	cmd.Flags().BoolVar(&opts.unattended, "unattended", false, "nobody will answer the agent's questions (the default without a terminal on standard input)")
	cmd.Flags().DurationVar(&opts.limits.Timeout, "timeout", agentrun.DefaultRunTimeout, "stop the agent after this much wall-clock time (0: no limit)")
	cmd.Flags().IntVar(&opts.limits.MaxToolCalls, "max-tool-calls", agentrun.DefaultMaxToolCalls, "refuse tool call N+1 and stop the agent (0: no limit)")
	cmd.Flags().IntVar(&opts.limits.MaxOffGround, "max-checks-off-ground", agentrun.DefaultMaxOffGround, "stop the agent after N drifting checks in a row (0: no limit)")
	cmd.Flags().DurationVar(&opts.grace, "grace", agentrun.DefaultStopGrace, "how long an agent past --max-tool-calls or --max-checks-off-ground has to end its turn before SIGTERM")
	cmd.Flags().StringVar(&opts.coverage, "coverage", "", "hold the agent to coverage: on (the default), off, or reference (the Python reference's gate)")
	cmd.Flags().StringVar(&opts.floor, "coverage-floor", "", "the share of steps that must be checks, 0 to 1, once the run has 8 steps (default: none)")
	cmd.Flags().StringVar(&opts.blockAfter, "coverage-block-after", "", "refuse calls that change something after this many steps without a check (default 5; every call after twice that)")
	cmd.Flags().StringVar(&opts.nudgeEvery, "coverage-nudge-every", "", "remind the agent after every this many unchecked steps (default 3; 0: never)")
	cmd.Flags().SetInterspersed(false)
	cli.CompleteFlags(cmd, cli.NoValue, "agent", "goal", "ponder", "timeout", "max-tool-calls", "max-checks-off-ground", "grace", "coverage-floor", "coverage-block-after", "coverage-nudge-every")
	cli.CompleteFlag(cmd, "coverage", cli.Values(string(coverage.On), string(coverage.Off), string(coverage.Reference)))
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitPassThrough, When: "the agent's own status"},
		cli.ExitDoc{Code: cli.ExitExhausted, When: "a runaway limit stopped the agent: --timeout, --max-tool-calls or --max-checks-off-ground (the summary names it)"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "bad usage; nothing was started"},
		cli.ExitDoc{Code: cli.ExitSetup}, cli.ExitDoc{Code: cli.ExitNotRunning}, cli.ExitDoc{Code: cli.ExitNotFound},
		cli.ExitDoc{Code: cli.ExitSignal, When: "a signal N killed the agent"})
	return cmd
}

// summaryText is a judgment's reason as the run's summary prints it: the
// reference's words (which the vectors hold, and the agent reads through
// judge_run) without its Python spellings — a distance never spelled is
// "unknown", not None — and "1 check", not "1 checks".
func summaryText(because string) string {
	because = strings.ReplaceAll(because, "Distance None → None", "Distance never spelled")
	because = strings.ReplaceAll(because, "None", "unknown")
	return strings.ReplaceAll(because, " 1 checks", " 1 check")
}
