package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/loop"
)

type loopOptions struct {
	IO      *cli.IOStreams
	Tracker func() *agentrun.Tracker
	// StoreConfig names the stores, where the broker answers the
	// confined sessions' hooks and checks.
	StoreConfig func() (backend.Config, error)
	// args are SCRIPT and its arguments; dashAt is where -- was among
	// them (-1: nowhere); set are the settings given as flags.
	args   []string
	dashAt int
	set    []string

	loop.Settings
	resume string
	inline string
	json   bool
}

// loopSettings are the flags of a run's settings: given with --resume,
// they override the run's own.
var loopSettings = []string{"goal", "max-iters", "budget", "timeout", "soak", "jury", "goldfish", "pedantic", "seed", "thread", "agents"}

func newLoopCmd(f *Factory, runF func(*loopOptions) error) *cobra.Command {
	opts := &loopOptions{IO: f.IOStreams, Tracker: f.Tracker, StoreConfig: f.StoreConfig}
	cmd := &cobra.Command{
		Use:   "loop SCRIPT [flags] [-- ARGS...] | loop -c TEXT [flags] | loop --resume RUN [flags]",
		Short: "Run a verified fixpoint loop: SCRIPT owns control flow, ./ci verifies, a judge gives the work order",
		Long: `loop runs SCRIPT, a POSIX shell script, in an embedded interpreter with two
builtins: ` + "`agent NAME [INSTR]`" + ` (a fresh session per call; stdin is its context)
and ` + "`judge NAME [--soak N [--soak-pending S] | --jury N] [--goldfish] [--pedantic] [INSTR]`" + `
(one session pinned per run, answering through a schema-checked verdict;
the rendered verdict on stdout). agent exits 0 completed (which says
nothing about the task), 3 escalated, 5 transport failure, 7 config; judge
exits 0 the verdict passes (after --soak/--jury), 1 it does not (a work
order) or it passes short of --soak N (rendered as "no work to do; the
judge looks again"; --soak-pending S makes that S instead), 3 escalated,
5 transport, 6 no valid verdict after one bounce, 7 config: seed 002's
protocol, so its scripts run unchanged. Before anything
runs, the loop refuses (7) a service SCRIPT names whose program (claude, or
_COMMAND's first word) is not on PATH, and a SCRIPT that runs ./ci when ./ci
is missing or not executable. Every other
command SCRIPT runs passes the operator gate: a refused one gets its reason
on stderr and status 126.
Services come from agents.conf (--agents, else ./agents.conf, over the
starter fix, task and judge Claude Code services).

The journal is $LASERBRAIN_HOME/loop/RUN/ ($RUN_DIR in SCRIPT): steps.jsonl,
suggestions.md, ci-NNN.log, checkpoints refs/laserkit/loop/RUN/STEP before each
agent and judge call. One summary is printed on standard error at the end.
With --json the summary is the one JSON document on standard output, and
SCRIPT's standard output (./ci, the rendered verdicts, anything it echoes)
goes to standard error instead.

A loop started inside a confined agent (laserbrain run's or a loop's own
session) is refused (2) before anything is written: the laserbrain home,
where its journal and its sessions' runs go, is read-only there. Start it
from your own terminal.

With OTEL_EXPORTER_OTLP_ENDPOINT (or LASERBRAIN_OTEL=on) set, once the loop
ends its runs — its own and each session's — are sent to that OpenTelemetry
endpoint as laserbrain run sends its one (docs/telemetry.md).

The loop exits with SCRIPT's own status unless it stopped SCRIPT itself.
After a signal the step in flight is killed and the journal left intact:
--resume RUN goes on from the last completed step.`,
		Example: `  laserbrain loop examples/loop/ci-until-green.sh --max-iters 5
  laserbrain loop -c 'judge judge --soak 2 "Is PLAN.md done?" && echo done'
  laserbrain loop ci-until-green.sh --agents agents.conf --budget 2000000 -- --branch main
  laserbrain loop --resume 2f9c0a1d7e3b`,
		Args:              cli.ArbitraryArgs,
		ValidArgsFunction: cli.Files("sh"),
		RunE: cli.RunAfter(opts, func(cmd *cobra.Command, args []string) error {
			opts.args, opts.dashAt = args, cmd.ArgsLenAtDash()
			opts.set = changedFlags(cmd, loopSettings...)
			return nil
		}, runF, runLoop),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Goal, "goal", "", "the loop's goal, the ground of its own drift run (default: SCRIPT to a verified fixpoint)")
	fl.IntVar(&opts.MaxIters, "max-iters", loop.DefaultMaxIters, "the judge looks at most N times (iteration N+1 never starts; a pass on look N is a success); repairs before the first look are iteration 0, and at most N agent calls run between two looks")
	fl.Int64Var(&opts.Budget, "budget", 0, "stop once the sessions have used this many tokens: input, output and cache, a Claude Code session's from its transcript (0: no limit)")
	fl.DurationVar(&opts.Timeout, "timeout", loop.DefaultTimeout, "stop after this much wall-clock time")
	fl.StringVar(&opts.resume, "resume", "", "go on with run RUN from its last completed step")
	fl.StringVarP(&opts.inline, "command", "c", "", "run TEXT as SCRIPT, as sh -c does (the run keeps a copy, for --resume)")
	fl.IntVar(&opts.Soak, "soak", 0, "judge default: pass only after N consecutive passing verdicts")
	fl.IntVar(&opts.Jury, "jury", 0, "judge default: N independent verdicts, all must pass")
	fl.BoolVar(&opts.Goldfish, "goldfish", false, "judge default: a fresh session (seed only) for every call")
	fl.BoolVar(&opts.Pedantic, "pedantic", false, "judge default: a suggestion fails the verdict too")
	fl.StringVar(&opts.Seed, "seed", "", "the judge's seed from the launching thread: full, compact or none (default: full if it fits, else compact)")
	fl.StringVar(&opts.Thread, "thread", "", "the launching thread (a Claude Code transcript .jsonl or text); default: the Claude Code session this runs in")
	fl.StringVar(&opts.Agents, "agents", "", "the agents.conf to use (default: ./agents.conf when there is one)")
	fl.BoolVar(&opts.json, "json", false, "print the summary as JSON on standard output (SCRIPT's standard output then goes to standard error)")
	cli.CompleteFlag(cmd, "seed", cli.Values("full\tthe whole launching thread", "compact\ta summary of it", "none\tno seed"))
	cli.CompleteFlag(cmd, "resume", completeLoopRuns)
	cli.CompleteFlag(cmd, "agents", cli.Files("conf"))
	cli.CompleteFlag(cmd, "thread", cli.Files("jsonl", "md", "txt"))
	cli.CompleteFlag(cmd, "goal", cli.NoValue)
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitPassThrough, When: "SCRIPT's own status (the reference loop: 3 escalated; 5, 6 or 7 a builtin's failure, passed on)"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "bad usage, an input file (SCRIPT, --agents, --thread) missing or unreadable, a --resume of a run that does not exist, is over or is being run, or a loop started inside a confined agent; nothing ran"},
		cli.ExitDoc{Code: cli.ExitExhausted}, cli.ExitDoc{Code: cli.ExitConfig},
		cli.ExitDoc{Code: cli.ExitFailure, When: "internal: the journal, the run directory, the store or a checkpoint failed"},
		cli.ExitDoc{Code: cli.ExitSignal, When: "a signal N stopped the loop (130 SIGINT)"})
	cmd.AddCommand(newLoopPruneCmd(f, nil), newLoopListCmd(f, nil), newLoopStatusCmd(f, nil), newLoopCancelCmd(f, nil))
	return cmd
}

func runLoop(opts *loopOptions) error {
	o := loop.Options{Settings: opts.Settings, Resume: opts.resume, Set: map[string]bool{}}
	for _, name := range loopSettings {
		o.Set[name] = slices.Contains(opts.set, name)
	}
	args, dash := opts.args, opts.dashAt
	switch {
	case opts.inline != "" && opts.resume != "":
		return cli.Usagef("-c TEXT starts a run; --resume %s goes on with one: give one of them", opts.resume)
	case opts.inline != "" && (dash > 0 || dash < 0 && len(args) > 0):
		return cli.Usagef("-c TEXT is SCRIPT: put its arguments after -- (laserbrain loop -c TEXT -- ARGS...)")
	case opts.inline != "":
		o.Inline, o.Args = opts.inline, args
	case opts.resume != "" && (dash >= 0 || len(args) > 1):
		return cli.Usagef("--resume %s goes on with the run's own arguments: give SCRIPT alone (laserbrain loop [SCRIPT] --resume %s)", opts.resume, opts.resume)
	case opts.resume != "" && len(args) == 1:
		// The seed's form, /run SCRIPT --resume ID: SCRIPT must be
		// the run's own copy.
		o.Script = args[0]
	case opts.resume == "" && (len(args) == 0 || dash == 0):
		return cli.Usagef("no SCRIPT given (laserbrain loop SCRIPT [flags] [-- ARGS...])")
	case opts.resume == "" && dash < 0 && len(args) > 1:
		return cli.Usagef("put SCRIPT's arguments after --: laserbrain loop %s -- %v", args[0], args[1:])
	case opts.resume == "":
		o.Script, o.Args = args[0], args[1:]
	}
	if err := loopInsideAgent(); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return cli.Failure(fmt.Errorf("cannot find this binary's path for the hooks: %w", err))
	}
	o.Self = self
	o.Stdin, o.Stdout, o.Stderr = opts.IO.In, opts.IO.Out, opts.IO.ErrOut
	if opts.json {
		// Standard output holds one JSON document, the summary:
		// what SCRIPT writes there goes to standard error.
		o.Stdout = opts.IO.ErrOut
	}
	o.HandleSignals = true
	// Each session behind the kernel's boundary, as laserbrain
	// run's agent: its hooks, its MCP server (its own call only)
	// and its checks handed to the loop's broker for it.
	sup := opts.Tracker()
	defer sup.Close()
	if fn, why := agentConfinement(self, opts.StoreConfig); fn != nil {
		o.Confine = func(cmd *exec.Cmd, s loop.Session) (string, func(), error) {
			return fn(cmd, runBoundary(sup, broker.Ops{Run: s.Run, LoopCall: s.CallDir, LoopRole: s.Role}, passThrough{}), s.Dir)
		}
	} else {
		o.Unconfined = "not confined by the kernel: " + why + "; the gate alone supervises the loop's sessions (laserbrain doctor)"
		fmt.Fprintf(opts.IO.ErrOut, "laserbrain loop: %s\n", o.Unconfined)
	}
	o.Tracker = sup
	cwd, _ := os.Getwd()
	tel, err := runTelemetry(os.Getenv, cwd)
	if err != nil {
		return err
	}
	ctx := context.Background()
	res, err := loop.Run(ctx, o)
	exportLoop(ctx, opts.IO.ErrOut, self, tel, sup, res.RunID)
	if err != nil {
		return loopError(err)
	}
	if opts.json {
		if err := cli.WriteJSON(opts.IO.Out, res); err != nil {
			return cli.Failure(err)
		}
	} else {
		printLoopAccount(ctx, opts, sup, res)
	}
	if res.ExitCode != 0 {
		return cli.PassThrough(res.ExitCode)
	}
	return nil
}

type loopPruneOptions struct {
	IO *cli.IOStreams

	all, dryRun, json bool
}

func newLoopPruneCmd(f *Factory, runF func(*loopPruneOptions) error) *cobra.Command {
	opts := &loopPruneOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "prune [--all] [--dry-run]",
		Short: "Remove the checkpoint refs of finished loop runs from this repository",
		Long: `prune removes the checkpoints laserbrain loop committed before every agent
and judge call (refs/laserkit/loop/RUN/STEP) of runs that are over: SCRIPT
ended on its own, so nothing will resume them. It keeps, unless --all, the
checkpoints of a run that can still go on with --resume (the loop stopped it:
a budget, a timeout, a signal; or it was killed) and of a run whose journal
is not in this laserbrain home. A run a process is running now keeps its
checkpoints even with --all. The refs go in one git transaction; the
journals are left as they are. --dry-run says what would go.`,
		Example: `  laserbrain loop prune --dry-run
  laserbrain loop prune
  laserbrain loop prune --all --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runLoopPrune),
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.all, "all", false, "remove the checkpoints of resumable runs and of runs with no journal here too (never a running one's)")
	fl.BoolVar(&opts.dryRun, "dry-run", false, "say what would be removed, and remove nothing")
	fl.BoolVar(&opts.json, "json", false, "print the result as JSON")
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitUsage, When: "bad usage, or not in a git repository"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "git could not remove the refs (nothing was removed), or the laserbrain home cannot be found"})
	return cmd
}

func runLoopPrune(opts *loopPruneOptions) error {
	ctx := context.Background()
	res, err := loop.Prune(ctx, loop.PruneOptions{All: opts.all, DryRun: opts.dryRun})
	if err != nil {
		return loopError(err)
	}
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, res)
	}
	printPrune(opts.IO, res)
	return nil
}

func printPrune(streams *cli.IOStreams, res loop.PruneResult) {
	removed := "removed"
	if res.DryRun {
		removed = "would remove"
	}
	for _, r := range res.Runs {
		what := "kept"
		if r.Removed {
			what = removed
		}
		why := r.State
		if r.Reason != "" {
			why += ": " + r.Reason
		}
		hint := ""
		if !r.Removed && r.State != loop.RunBusy {
			hint = "; --all removes them"
		}
		fmt.Fprintf(streams.Out, "%s %s of run %s (%s%s)\n", what, text.Plural(int64(r.Refs), "checkpoint"), r.Run, why, hint)
	}
	fmt.Fprintf(streams.Out, "%s %s, kept %d, in %s\n", removed, text.Plural(int64(res.Removed), "checkpoint"), res.Kept, res.Repo)
}

// loopError is a loop error as the command returns it: the loop's own,
// whose kind is its exit code's, or a failure.
func loopError(err error) error {
	var le *loop.Error
	if errors.As(err, &le) {
		return le
	}
	return cli.Failure(err)
}

// loopInsideAgent refuses a loop inside the kernel's confinement of an
// agent, before anything is written. The loop's journal, its drift run and
// its sessions' runs are the supervisor's records, which the confinement
// holds read-only to the agent's tree; the run's broker opens on the
// agent's own hooks and checks alone, and a loop that could write through
// it would be an agent starting agents that record for themselves. So it
// is refused whole, with what to do instead.
func loopInsideAgent() error {
	m := confine.Confined()
	if m == "" {
		return nil
	}
	return cli.Exit(cli.ExitUsage, fmt.Errorf("a loop started inside a supervised agent cannot keep its journal: the laserbrain home is read-only to the agent's "+
		"process tree (the kernel's confinement; %s is mounted read-only here), so nothing was started. Start it from your own terminal; an agent: ask the user to", m))
}

// printLoopAccount hands the run's account to whoever started the loop.
// From a supervised client session it goes into that session once, as a
// turn of its own at its next event (loop.TellParent), and here only a
// line says so — the account is not printed too, so the session reads it
// once. From a terminal it is printed.
func printLoopAccount(ctx context.Context, opts *loopOptions, tr *agentrun.Tracker, res loop.Result) {
	p, ok := loop.ParentOf(os.Getenv)
	if !ok {
		fmt.Fprint(opts.IO.ErrOut, res.Summary())
		return
	}
	if err := loop.TellParent(ctx, tr, p, res, time.Now()); err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "laserbrain loop: the account could not be queued for the session that started the loop (%v); here it is:\n", err)
		fmt.Fprint(opts.IO.ErrOut, res.Summary())
		return
	}
	fmt.Fprintf(opts.IO.ErrOut, "laserbrain loop: run %s exited %d; its account goes to the session that started it (%s, run %s) as its next turn. Journal: %s/\n",
		res.RunID, res.ExitCode, p.Agent, p.Run, res.Dir)
}
