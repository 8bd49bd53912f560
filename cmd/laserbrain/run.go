package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/install"
	"github.com/laserkit/laserkit/supercode/report"
	"github.com/laserkit/laserkit/supercode/telemetry"
)

type runOptions struct {
	IO *cli.IOStreams
	// Supervisor supervises the agent's run on the stores.
	Tracker func() *agentrun.Tracker
	// StoreConfig names the stores, where the broker answers the
	// confined agent's hooks and checks.
	StoreConfig func() (backend.Config, error)

	// command is the agent's command and arguments; dashed: given after
	// "--", where run's own flags end.
	command []string
	dashed  bool
	// coverageSet are the coverage flags given.
	coverageSet []string
	// budgetSet are the budget flags given (--max-tokens, --max-cost).
	budgetSet []string

	agent, goal string
	ponder      string
	unattended  bool
	// The run's coverage (--coverage, --coverage-floor, …), exported to
	// the agent's hooks as coverage's variables; unset flags leave the
	// project's settings.
	coverage, floor, blockAfter, nudgeEvery string
	limits                                  fleet.Limits
	grace                                   time.Duration
	// passEnv and passPaths are credentials passed into the boundary on
	// purpose (--pass-env, --pass-path).
	passEnv, passPaths []string
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
func coverageEnv(opts *runOptions) ([]string, error) {
	values := map[string]string{"coverage": opts.coverage, "coverage-floor": opts.floor,
		"coverage-block-after": opts.blockAfter, "coverage-nudge-every": opts.nudgeEvery}
	set := map[string]string{}
	var env []string
	for _, f := range coverageFlags {
		if !slices.Contains(opts.coverageSet, f.flag) {
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

// runHelp is run's long help: what it does to the agent and what it prints.
const runHelp = `run registers a run (agent name, run id, and the fleet: the repository's
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

Before every call that may write, whatever the gate answers, the hooks take
an undo checkpoint of the work tree (and run one before the agent starts and
one after it ends): laserbrain undo --run RUN --last goes back to before the
last call that changed something, --list shows what each call changed. A
call that deleted or overwrote more than the project policy's threshold
(undo.loss_files, default 20 files; undo.loss_bytes, default 1 MiB) is
recorded on the run for the supervisor; with --halt-on-loss it stops the
agent there, as a limit does.

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

--max-tokens N and --max-cost USD (Claude Code only, off by default) hold
the agent to its model tokens (input, output and cache) and to what its
requests cost, as Claude Code itself reports them: run points Claude Code's
own OpenTelemetry at a receiver of its own (laserbrain-otel beside this
binary), which also forwards it to your endpoint when you had turned it on
(CLAUDE_CODE_ENABLE_TELEMETRY=1, OTEL_EXPORTER_OTLP_ENDPOINT); tokens
also come from its transcript. The first tool call asked about once they
are past the limit is refused with the figures, and the agent is stopped as
past the other limits. The summary prints the run's tokens and cost.

Signals (INT, TERM, HUP, QUIT, USR1, USR2) are passed to the agent; when
standard input is a terminal, INT and QUIT are not sent again (the terminal
already sent them to the agent). When the agent exits, the whole-run
judgment is printed on standard error.

With OTEL_EXPORTER_OTLP_ENDPOINT (or LASERBRAIN_OTEL=on) set, the ended run
is sent to that OpenTelemetry endpoint as spans — the run, its tool calls,
the gate's decisions, its checks — by laserbrain-otel beside this binary,
waiting at most 3s for the collector; LASERBRAIN_OTEL=off turns it off.

run exits with the agent's own status, 128+N when a signal N killed it, 4
when a limit stopped it.`

func newRunCmd(f *Factory, runF func(*runOptions) error) *cobra.Command {
	opts := &runOptions{IO: f.IOStreams, Tracker: f.Tracker, StoreConfig: f.StoreConfig}
	cmd := &cobra.Command{
		Use:   "run [--agent NAME] [--goal TEXT] [--unattended] [limits] -- COMMAND [ARGS...]",
		Short: "Run an agent command under supervision",
		Long:  runHelp,
		Example: `  laserbrain run -- claude "fix the flaky checkout test"
  laserbrain run --agent reviewer --goal "review the billing PR" -- claude -p "review PR 42"
  laserbrain run --timeout 30m --max-tool-calls 200 --max-checks-off-ground 3 -- claude -p "fix the build"
  laserbrain run -- codex exec "fix the importer"
  laserbrain run -- aider --message "add input validation"
  laserbrain run --ponder security-2026-08-24 -- claude "audit the checkout flow with ponder"`,
		Args: cli.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.command, opts.dashed = args, cmd.ArgsLenAtDash() >= 0
			opts.coverageSet = changedFlags(cmd, "coverage", "coverage-floor", "coverage-block-after", "coverage-nudge-every")
			opts.budgetSet = changedFlags(cmd, "max-tokens", "max-cost")
			if runF != nil {
				return runF(opts)
			}
			return runRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.agent, "agent", "", "the agent's name (default: the command's name)")
	cmd.Flags().StringVar(&opts.goal, "goal", "", "ground the run on this goal before the agent starts")
	cmd.Flags().StringVar(&opts.ponder, "ponder", "", "the ponder session the agent works on: exported as PONDER_SLUG and recorded on the run")
	cmd.Flags().BoolVar(&opts.unattended, "unattended", false, "nobody will answer the agent's questions (the default without a terminal on standard input)")
	cmd.Flags().DurationVar(&opts.limits.Timeout, "timeout", agentrun.DefaultRunTimeout, "stop the agent after this much wall-clock time (0: no limit)")
	cmd.Flags().IntVar(&opts.limits.MaxToolCalls, "max-tool-calls", agentrun.DefaultMaxToolCalls, "refuse tool call N+1 and stop the agent (0: no limit)")
	cmd.Flags().IntVar(&opts.limits.MaxOffGround, "max-checks-off-ground", agentrun.DefaultMaxOffGround, "stop the agent after N drifting checks in a row (0: no limit)")
	cmd.Flags().Int64Var(&opts.limits.MaxTokens, "max-tokens", 0, "refuse the first tool call once the agent's model tokens (input, output and cache, as Claude Code's transcript records them) are past N, and stop the agent (0: no limit)")
	cmd.Flags().Float64Var(&opts.limits.MaxCostUSD, "max-cost", 0, "refuse the first tool call once what the agent's model requests cost, as Claude Code's own telemetry reports it, is past USD, and stop the agent (0: no limit)")
	cmd.Flags().BoolVar(&opts.limits.HaltOnLoss, "halt-on-loss", false, "stop the agent at a call that deleted or overwrote more than the project policy's undo threshold (laserbrain undo takes it back)")
	cmd.Flags().DurationVar(&opts.grace, "grace", agentrun.DefaultStopGrace, "how long an agent past --max-tool-calls or --max-checks-off-ground has to end its turn before SIGTERM")
	cmd.Flags().StringVar(&opts.coverage, "coverage", "", "hold the agent to coverage: on (the default), off, or reference (the Python reference's gate)")
	cmd.Flags().StringVar(&opts.floor, "coverage-floor", "", "the share of steps that must be checks, 0 to 1, once the run has 8 steps (default: none)")
	cmd.Flags().StringVar(&opts.blockAfter, "coverage-block-after", "", "refuse calls that change something after this many steps without a check (default 5; every call after twice that)")
	cmd.Flags().StringVar(&opts.nudgeEvery, "coverage-nudge-every", "", "remind the agent after every this many unchecked steps (default 3; 0: never)")
	cmd.Flags().StringArrayVar(&opts.passEnv, "pass-env", nil, "pass this credential variable into the boundary (repeatable; the run records it)")
	cmd.Flags().StringArrayVar(&opts.passPaths, "pass-path", nil, "let the agent read this place credentials are kept (repeatable; the run records it)")
	cmd.Flags().SetInterspersed(false)
	cli.CompleteFlag(cmd, "pass-path", cli.Files())
	cli.CompleteFlags(cmd, cli.NoValue, "agent", "goal", "ponder", "pass-env", "timeout", "max-tool-calls", "max-checks-off-ground", "grace", "coverage-floor", "coverage-block-after", "coverage-nudge-every")
	cli.CompleteFlag(cmd, "coverage", cli.Values(string(coverage.On), string(coverage.Off), string(coverage.Reference)))
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitPassThrough, When: "the agent's own status"},
		cli.ExitDoc{Code: cli.ExitExhausted, When: "a runaway limit stopped the agent: --timeout, --max-tool-calls, --max-checks-off-ground, --max-tokens, --max-cost or --halt-on-loss (the summary names it)"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "bad usage; nothing was started"},
		cli.ExitDoc{Code: cli.ExitSetup}, cli.ExitDoc{Code: cli.ExitNotRunnable}, cli.ExitDoc{Code: cli.ExitNotFound},
		cli.ExitDoc{Code: cli.ExitSignal, When: "a signal N killed the agent"})
	return cmd
}

// runRun starts the agent under supervision, waits for it, and prints
// the run's summary.
func runRun(opts *runOptions) error {
	args := opts.command
	if !opts.dashed && len(args) > 0 {
		return cli.Usagef("put the agent command after --: laserbrain run [flags] -- %s", strings.Join(args, " "))
	}
	if len(args) == 0 {
		return cli.Usagef("no agent command given (laserbrain run [flags] -- COMMAND [ARGS...])")
	}
	self, err := os.Executable()
	if err != nil {
		return &agentrun.SpawnError{Kind: agentrun.SpawnSetup, Err: fmt.Errorf("cannot find this binary's path for the hooks: %w", err)}
	}
	if opts.limits.Timeout < 0 || opts.limits.MaxToolCalls < 0 || opts.limits.MaxOffGround < 0 || opts.limits.MaxTokens < 0 || opts.limits.MaxCostUSD < 0 || opts.grace < 0 {
		return cli.Usagef("--timeout, --max-tool-calls, --max-checks-off-ground, --max-tokens, --max-cost and --grace cannot be negative (0 turns a limit off)")
	}
	policyBudget(opts, self)
	ponderSlug, err := runPonderSession(opts.ponder)
	if err != nil {
		return err
	}
	covEnv, err := coverageEnv(opts)
	if err != nil {
		return err
	}
	cwd, _ := os.Getwd()
	tel, err := runTelemetry(os.Getenv, cwd)
	if err != nil {
		return err
	}
	ctx := context.Background()
	so := agentrun.SpawnOptions{
		Agent: opts.agent, Goal: opts.goal, Command: args, Self: self, Unattended: opts.unattended, Ponder: ponderSlug,
		Stdin: opts.IO.In, Stdout: opts.IO.Out, Stderr: opts.IO.ErrOut, Limits: opts.limits, Grace: opts.grace,
	}
	if len(covEnv) > 0 {
		so.Env = append(os.Environ(), covEnv...)
	}
	so.Usage, so.Recorded = agentBudgetReads(args[0])
	ing, err := runIngest(opts, self, &so)
	if err != nil {
		return err
	}
	defer func() { _ = ing.stop() }()
	if opts.limits.MaxTokens > 0 && so.Usage == nil {
		return cli.Usagef("--max-tokens: laserbrain reads the tokens of Claude Code's and Codex's runs (from their own records), and of Gemini CLI's as its own telemetry reports them (received by %s beside laserbrain, unless %s=off), not of %s; nothing was started",
			otelName, telemetry.EnvSwitch, args[0])
	}
	sup := opts.Tracker()
	defer sup.Close()
	so.Checkpoint = runCheckpoint(opts.IO.ErrOut, sup)
	confined := false // set below, once the confinement is known
	prepareClient(ctx, &so, self, &confined)
	ing.prepare(&so)
	started, stopTree := superviseTree()
	defer stopTree()
	so.Started = func(r fleet.Run, p *os.Process) {
		started(p.Pid)
		ing.recordOn(sup, r.ID)
	}
	fn, why := agentConfinement(self, opts.StoreConfig)
	confined = fn != nil // read when the run's layer is prepared
	if fn != nil {
		pass := passThrough{env: opts.passEnv, paths: opts.passPaths}
		so.Confine = func(cmd *exec.Cmd, r fleet.Run, dir string) (string, func(), error) {
			b := runBoundary(sup, broker.Ops{Run: r.ID}, pass)
			b.telemetry = ing.endpoint()
			return fn(cmd, b, dir)
		}
	} else {
		so.Unconfined = "not confined by the kernel: " + why + "; the gate alone supervises this agent (laserbrain doctor)"
		fmt.Fprintf(opts.IO.ErrOut, "laserbrain run: %s\n", so.Unconfined)
	}
	res, err := sup.Spawn(ctx, so)
	if ierr := ing.stop(); ierr != nil {
		fmt.Fprintf(opts.IO.ErrOut, "laserbrain run: the client's telemetry: %v\n", ierr)
	}
	if err == nil {
		recordCallTokens(ctx, sup, res.Run)
	}
	var se *agentrun.SpawnError
	if errors.As(err, &se) {
		return se // its kind is its exit code's
	}
	// A limit that stopped the agent is run's own status, whatever the
	// agent's.
	exit := cli.PassThrough(res.ExitCode)
	if res.Stopped != nil {
		exit = cli.SilentExit(cli.ExitExhausted)
	}
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "laserbrain run: the agent exited %d, but its run could not be closed: %v\n", cli.CodeOf(exit), err)
		return exit
	}
	printRunSummary(ctx, opts.IO.ErrOut, sup, res, int(cli.CodeOf(exit)))
	end := telemetry.Ending{ExitCode: int(cli.CodeOf(exit)), Judgment: res.Judgment.Verdict}
	if res.Stopped != nil {
		end.Stopped = res.Stopped.Text()
	}
	exportRun(ctx, opts.IO.ErrOut, self, tel, sup, res, end)
	if cli.CodeOf(exit) != cli.ExitOK {
		return exit
	}
	return nil
}

// runPonderSession is the ponder session the agent works on: --ponder, or
// a PONDER_SLUG already set. It must exist before an agent starts on it: a
// PONDER_SLUG that names nothing fails every ponder command.
func runPonderSession(flag string) (string, error) {
	slug := flag
	if slug == "" {
		slug = strings.TrimSpace(os.Getenv(agentrun.EnvPonder))
	}
	if slug == "" {
		return "", nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", &agentrun.SpawnError{Kind: agentrun.SpawnSetup, Err: err}
	}
	if _, _, err := ponder.NewReader(cwd).Resolve(slug); err != nil {
		return "", cli.Usagef("--ponder %s: %v; nothing was started", slug, err)
	}
	return slug, nil
}

// prepareClient adds our hooks and MCP server to the command of an agent
// client run recognises by its program's name, for this one invocation.
// confined is read when the run's layer is prepared: whether the kernel
// holds the agent then.
func prepareClient(ctx context.Context, so *agentrun.SpawnOptions, self string, confined *bool) {
	args := so.Command
	c, ok := client.Detect(args[0])
	if !ok {
		return
	}
	so.Headless = client.Headless(c, args[1:])
	dir, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	program, err := exec.LookPath(args[0])
	if err != nil {
		program = args[0] // Spawn reports it
	}
	ro := install.RunOptions{Client: c, Program: program, Args: args[1:], Self: self, Dir: dir, Home: home,
		Getenv: os.Getenv, Environ: os.Environ(), Ctx: ctx}
	// What the kernel holds (or would), the client's own rules deny its
	// file tools too, where it has them.
	ro.Protect = protectedPaths(self, dir)
	so.Prepare = func(tmp string) ([]string, []string, error) {
		ro := ro
		ro.Confined = *confined
		ro.Protect = append(ro.Protect[:len(ro.Protect):len(ro.Protect)], tmp)
		return install.Prepare(ro, tmp)
	}
}

// printRunSummary prints, on w, what the run did: its checks and tool
// calls, its coverage, why it stopped, a halt in force and the whole-run
// judgment.
func printRunSummary(ctx context.Context, w io.Writer, sup *agentrun.Tracker, res agentrun.SpawnResult, status int) {
	r, j := res.Run, res.Judgment
	var figs coverage.Figures
	var events []fleet.RunEvent
	if st, err := sup.Fleet(); err == nil {
		if events, err = st.Events(ctx, r.ID); err == nil {
			figs = coverage.Measure(events)
		}
	}
	fmt.Fprintf(w, "laserbrain run %s (agent %s): exit %d, %s", r.ID, r.Agent, status, text.Plural(int64(r.Checks), "check"))
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
	if u, ok := runUsage(ctx, sup, r, events); ok {
		fmt.Fprintf(w, "\ntokens:   %s", u.Text())
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
}

type runsOptions struct {
	IO *cli.IOStreams
	// Reader is a supervisor on the stores opened for reading.
	Reader func() *agentrun.Tracker

	fleetDir string
	all      bool
	json     bool
}

// runRow is one run as `laserbrain runs` lists it.
type runRow struct {
	Run string `json:"run"`
	// Origin is what made the run: "run" (laserbrain run or loop started
	// the agent), "session" (an agent's session, through the hooks
	// installed in its client), "check" (laserbrain check, or an MCP
	// connection with no agent's run: no agent, no fleet).
	Origin      string     `json:"origin"`
	Agent       string     `json:"agent"`
	Client      string     `json:"client,omitempty"`
	Fleet       string     `json:"fleet"`
	Steps       int        `json:"steps"`
	LastVerdict string     `json:"last_verdict"`
	Drifting    bool       `json:"drifting"`
	Judgment    string     `json:"judgment"`
	Created     time.Time  `json:"created"`
	Ended       *time.Time `json:"ended"`
	ExitCode    *int       `json:"exit_code"`
	Sessions    []string   `json:"sessions"`
	Command     []string   `json:"command,omitempty"`
	// Ponder is the ponder session the run works on (laserbrain run
	// --ponder), absent when none.
	Ponder string `json:"ponder,omitempty"`
	// Attended is whether a person could answer the agent: "attended",
	// "unattended", or absent when nothing said.
	Attended string `json:"attended,omitempty"`
	// Coverage is what the run's hooks and checks recorded (an agent's
	// run only); an unmeasured run's last verdict and judgment both read
	// "unmeasured".
	Coverage *coverage.Figures `json:"coverage,omitempty"`
	// Next is what to do about an unmeasured run.
	Next string `json:"next,omitempty"`
	// Limits are the runaway limits laserbrain run held the agent to, the
	// tool calls its hooks asked it about (refused ones included), and the
	// limit that stopped it, if one did.
	Limits         *fleet.Limits `json:"limits,omitempty"`
	ToolCallsAsked int           `json:"tool_calls_asked,omitempty"`
	Stopped        string        `json:"stopped,omitempty"`
	// Network is what the agent's tree tried on the network through the
	// boundary: attempts allowed, refused and asked, their bytes, and
	// each endpoint with the rule that decided.
	Network *confine.NetSummary `json:"network,omitempty"`
	// Tokens are the model tokens the agent's client recorded (Claude
	// Code's transcript), absent when none were read.
	Tokens *fleet.Usage `json:"tokens,omitempty"`
	// CallTokens are what each tool call cost (the tokens of the response
	// that asked for it), where the client's records said.
	CallTokens []report.CallTokens `json:"call_tokens,omitempty"`
}

// The origins of runs.
const (
	originRun     = "run"
	originSession = "session"
	originCheck   = "check"
)

func newRunsCmd(f *Factory, runF func(*runsOptions) error) *cobra.Command {
	opts := &runsOptions{IO: f.IOStreams, Reader: f.Reader}
	cmd := &cobra.Command{
		Use:   "runs [--fleet DIR | --all] [--json]",
		Short: "List runs: what made each, agent, checks, last verdict, judgment",
		Long: `runs lists the agents' runs of one fleet (the repository containing --fleet
DIR, default the current directory), or of every fleet with --all, oldest
first, then the runs laserbrain check made (no agent, no fleet; STATE
"checks"), so a run id any command names can be found here. Each row says
what made the run (ORIGIN): run (laserbrain run or loop started the agent),
session (an agent's client session, through its installed hooks), or check
(laserbrain check, or an MCP connection that had no agent's run); then the
agent, run id, fleet, checks, tool calls and coverage (checks over steps),
last verdict, whole-run judgment, and whether it ended.

A run whose agent made tool calls and spelled no check since its ground is
unmeasured: its last verdict and judgment say so, never grounded or
continue, and a note under the table says why and what to do (--json:
"next"). --json adds each run's coverage figures (laserbrain coverage
explains them).`,
		Example: `  laserbrain runs
  laserbrain runs --all --json
  laserbrain runs --fleet ~/src/shop`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runRuns(opts)
		},
	}
	cmd.Flags().StringVar(&opts.fleetDir, "fleet", "", "list the fleet of the repository containing DIR (default: the current directory)")
	cmd.Flags().BoolVar(&opts.all, "all", false, "list every fleet's runs")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the runs as JSON")
	cli.CompleteFlag(cmd, "fleet", cli.Dirs)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "--fleet is not a directory"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runRuns(opts *runsOptions) error {
	ctx := context.Background()
	sup := opts.Reader()
	defer sup.Close()
	st, err := sup.Fleet()
	if err != nil {
		return cli.Failure(err)
	}
	var filter fleet.RunFilter
	if !opts.all {
		dir := opts.fleetDir
		if dir == "" {
			dir = "."
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return cli.Usagef("--fleet %s: not a directory", dir)
		}
		if filter.Fleet, err = fleet.ID(ctx, dir); err != nil {
			return cli.Usagef("--fleet %s: %v", dir, err)
		}
		noteDirFleet(opts.IO.ErrOut, "runs", filter.Fleet)
	}
	runs, err := st.ListRuns(ctx, filter)
	if err != nil {
		return cli.Failure(err)
	}
	rows := []runRow{}
	for _, r := range runs {
		row, err := agentRunRow(ctx, sup, st, r)
		if err != nil {
			return cli.Failure(err)
		}
		rows = append(rows, row)
	}
	every := runs // the runs a check run is not (every fleet's)
	if !opts.all {
		if every, err = st.ListRuns(ctx, fleet.RunFilter{}); err != nil {
			return cli.Failure(err)
		}
	}
	checks, err := checkRuns(ctx, sup, every)
	if err != nil {
		return cli.Failure(err)
	}
	rows = append(rows, checks...)
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, rows)
	}
	return writeRuns(opts.IO.Out, rows)
}

// agentRunRow is an agent's run as runs lists it.
func agentRunRow(ctx context.Context, sup *agentrun.Tracker, st fleet.Store, r fleet.Run) (runRow, error) {
	row := runRow{Run: r.ID, Origin: originSession, Agent: r.Agent, Client: r.Client, Fleet: r.Fleet, Steps: r.Checks, Created: r.Created,
		ExitCode: r.ExitCode, Sessions: r.Sessions, Command: r.Command, Judgment: r.Judgment, Attended: r.Attended, Ponder: r.Ponder,
		Limits: r.Limits, ToolCallsAsked: r.ToolCallsAsked, Stopped: r.Stopped}
	if len(r.Command) > 0 {
		row.Origin = originRun
	}
	if r.Sessions == nil {
		row.Sessions = []string{}
	}
	if r.IsEnded() {
		e := r.Ended
		row.Ended = &e
	}
	if r.Last != nil {
		row.LastVerdict, row.Drifting = r.Last.Reason, r.Last.Drifting
	}
	if lr, err := sup.TaskState(ctx, r); err == nil && lr != nil {
		row.Judgment = lr.Phronesis().Verdict
	} else if row.Judgment == "" {
		row.Judgment = "ungrounded"
	}
	events, err := st.Events(ctx, r.ID)
	if err != nil {
		return row, err
	}
	if u, ok := runUsage(ctx, sup, r, events); ok {
		row.Tokens = &u
	}
	figs := coverage.Measure(events)
	row.Coverage = &figs
	row.Network = report.NetworkOf(events)
	row.CallTokens = report.CallTokensOf(events)
	if figs.Unmeasured {
		row.LastVerdict, row.Drifting, row.Judgment = coverage.Unmeasured, false, coverage.Unmeasured
		row.Next = unmeasuredNext(r.ID, figs)
	}
	return row, nil
}

// unmeasuredNext is why a run is unmeasured and what measures it.
func unmeasuredNext(id string, f coverage.Figures) string {
	return fmt.Sprintf("%s since the ground and no check after it, so nothing measured that work: "+
		"the agent checks (check_state, or laserbrain check --run %s) with its goal, progress and distance; "+
		"an agent that checks, then acts, stays measured for %d tool calls",
		text.Plural(int64(f.SinceGround), "tool call"), id, coverage.GroundMeasures-1)
}

// writeRuns is the runs as a table, then a note for each unmeasured run.
func writeRuns(w io.Writer, rows []runRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tORIGIN\tAGENT\tSTEPS\tCALLS\tCOVERAGE\tLAST VERDICT\tJUDGMENT\tSTATE\tFLEET")
	for _, r := range rows {
		state := "running"
		if r.Agent == "" {
			state = "checks" // laserbrain check's own run: no process
		}
		if r.Ended != nil {
			state = "ended"
			if r.ExitCode != nil {
				state = fmt.Sprintf("exit %d", *r.ExitCode)
			}
		}
		last := r.LastVerdict
		if last == "" {
			last = "-"
		}
		fl := r.Fleet
		if len(fl) > 12 && !strings.HasPrefix(fl, "dir:") {
			fl = fl[:12]
		}
		agent := r.Agent
		if agent == "" {
			agent, fl = "-", "-"
		}
		calls, cov := "-", "-"
		if c := r.Coverage; c != nil {
			calls = strconv.Itoa(c.ToolCalls)
			if c.ToolCalls+c.Checks > 0 {
				cov = fmt.Sprintf("%.0f%%", c.Coverage*100)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Run, r.Origin, agent, r.Steps, calls, cov, last, r.Judgment, state, fl)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Next != "" {
			fmt.Fprintf(w, "%s (%s) is unmeasured: %s.\n", r.Run, r.Agent, r.Next)
		}
	}
	return nil
}

// checkRuns are the runs in laserbrain's run store that no agent run owns
// (laserbrain check's own), oldest first: every id the store lists except
// the registered runs' tasks (RUN, RUN.2, …).
func checkRuns(ctx context.Context, sup *agentrun.Tracker, registered []fleet.Run) ([]runRow, error) {
	store, err := sup.Runs()
	if err != nil {
		return nil, err
	}
	lister, ok := store.(interface {
		RecentRunIDs(context.Context) ([]string, error)
	})
	if !ok {
		return nil, nil
	}
	ids, err := lister.RecentRunIDs(ctx)
	if err != nil {
		return nil, err
	}
	owned := map[string]bool{}
	for _, r := range registered {
		owned[r.ID] = true
	}
	var rows []runRow
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		if owned[id] {
			continue
		}
		if base, n, dotted := strings.Cut(id, "."); dotted && owned[base] {
			if _, err := strconv.Atoi(n); err == nil {
				continue
			}
		}
		lr, err := store.ReadRun(ctx, id)
		if errors.Is(err, laserbrain.ErrNoRun) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		row := runRow{Run: id, Origin: originCheck, Steps: lr.StepCount(), Judgment: lr.Phronesis().Verdict, Sessions: []string{}}
		if steps := lr.Steps(); len(steps) > 0 {
			row.Created = steps[0].At
		}
		row.Drifting, row.LastVerdict, _ = lr.LastVerdict()
		rows = append(rows, row)
	}
	return rows, nil
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
