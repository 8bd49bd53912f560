package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/internal/tty"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
)

type superviseOptions struct {
	IO *cli.IOStreams
	// Opened opens the stores.
	Opened func(readOnly bool) (*backend.Backend, fleet.Store, laserbrain.Store, error)
	// watchSet: --watch was given.
	watchSet bool

	repo            string
	once            bool
	watch           time.Duration
	rounds          int
	json            bool
	publish         bool
	onEscalate      string
	escalateAfter   int
	escalateTimeout time.Duration
	escalateWaiting bool
	goal            string
	budget          supervise.Budget
}

func newSuperviseCmd(f *Factory, runF func(*superviseOptions) error) *cobra.Command {
	opts := &superviseOptions{IO: f.IOStreams, Opened: f.Opened}
	cmd := &cobra.Command{
		Use:   "supervise [--repo DIR] [--once | --watch INTERVAL] [--json] [--publish] [--on-escalate CMD]",
		Short: "Supervise the ponder sessions and agents working on one repository",
		Long: `supervise watches every ponder session (.ponder/) and every agent run of the
repository's fleet (laserbrain run, or a Claude Code session with the hooks)
in rounds. Each round takes in what is new — the passes sessions decided,
the checks and tool calls agents made — and reports per agent its verdict,
Φ, steps and catches, the collisions (two agents on one ground) with the
files both touched beside them as evidence, the fleet catches, the route and
the supervisor's own self-check.

It takes three decisions, and no more:
  halt      the yielding agent of a colliding pair, when the route names one:
            the gate then denies its every tool call and ponder its every
            writing command, with the reason, until a person runs
            laserbrain supervise release AGENT
  advice    each drifting agent gets its own verdict's advice
  escalate  a drift streak (--escalate-after, default 3) or a collision with
            no basis to choose goes to a person: --on-escalate CMD runs
            with the question as JSON on standard input; its exit status is
            journaled; the first line it prints, when it names one agent of
            a collision, halts that agent, and for a drift is delivered to
            the agent instead of its advice; with --escalate-waiting, an
            agent that starts waiting for a person (its client's
            Notification hook: a permission or an idle prompt) is asked
            about too, once per wait, its answer told to the agent
With --max-tokens N or --max-cost USD the fleet holds a budget: once its
agent runs together have spent past it (their tokens and cost as their
clients recorded them: laserbrain runs --json lists each run's), every
live agent is halted with the figures, and halted again each round until
the budget is raised.
It never regrounds, never sets a ground and never routes execution. Every
decision, halt, release and escalation is journaled, hash-chained
(laserbrain supervise log, laserbrain supervise verify); a supervisor that
was killed resumes from the journal.

A session is ponder:<slug>; an agent run is <agent>:<run id>.

--once (the default) runs one round; --watch INTERVAL runs one every
INTERVAL until interrupted, redrawing a table on a terminal and printing
plain lines otherwise. --json prints one JSON object per round, one a line,
with the keys round, agents, collisions, fleet_catches, route, halts,
escalations, self (a stream: compact, one a line). --publish writes the
reading into the link.

With OTEL_EXPORTER_OTLP_ENDPOINT (or LASERBRAIN_OTEL=on) set, what each
round journaled is sent to that OpenTelemetry endpoint as one span, a
record an event (laserbrain-otel beside this binary sends it, within 4s).`,
		Example: `  laserbrain supervise
  laserbrain supervise --watch 5s --on-escalate 'notify-send "laserbrain" "$(cat)"'
  laserbrain supervise --repo ~/src/shop --json --rounds 3 --watch 10s`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.watchSet = cmd.Flags().Changed("watch")
			if runF != nil {
				return runF(opts)
			}
			return runSupervise(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.repo, "repo", "", "the repository (default: the one containing the current directory)")
	fl.BoolVar(&opts.once, "once", false, "run one round and exit (the default)")
	fl.DurationVar(&opts.watch, "watch", 0, "run a round every INTERVAL until interrupted")
	fl.IntVar(&opts.rounds, "rounds", 0, "with --watch, stop after this many rounds (0: no limit)")
	fl.BoolVar(&opts.json, "json", false, "print one JSON object per round")
	fl.BoolVar(&opts.publish, "publish", false, "write each round's reading into the link")
	fl.StringVar(&opts.onEscalate, "on-escalate", "", "a shell command to ask a person; the escalation is JSON on its standard input")
	fl.IntVar(&opts.escalateAfter, "escalate-after", supervise.DefaultEscalateAfter, "escalate after this many drifting verdicts in a row (0: never)")
	fl.DurationVar(&opts.escalateTimeout, "escalate-timeout", time.Minute, "how long --on-escalate may take before it is killed")
	fl.BoolVar(&opts.escalateWaiting, "escalate-waiting", false, "also escalate each agent that starts waiting for a person (its client's permission or idle prompt), once per wait")
	fl.StringVar(&opts.goal, "goal", "", "the supervisor's own goal (its self-check's ground)")
	fl.Int64Var(&opts.budget.MaxTokens, "max-tokens", 0, "halt every live agent once the fleet's agent runs have spent more than N model tokens, as their clients recorded them (0: no limit)")
	fl.Float64Var(&opts.budget.MaxCostUSD, "max-cost", 0, "halt every live agent once what the fleet's agent runs spent is past USD, as their clients reported it (0: no limit)")
	cmd.AddCommand(newSuperviseReleaseCmd(f, nil), newSuperviseLogCmd(f, nil), newSuperviseVerifyCmd(f, nil), newSuperviseAcceptJournalCmd(f, nil))
	cli.CompleteFlag(cmd, "repo", cli.Dirs)
	cli.CompleteFlags(cmd, cli.NoValue, "on-escalate", "goal", "watch", "rounds", "escalate-after", "escalate-timeout")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitFinding, When: "the journal's chain does not hold (named on stderr; the rounds were reported read-only: no decision taken, nothing journaled), or an --on-escalate command did not exit 0 and its question is still waiting (it is asked again next round)"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "bad usage, or --repo is not a directory"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the stores could not be read or the journal written"})
	return cmd
}

// repoRoot is supervise.RepoRoot, with a missing directory a usage error.
func repoRoot(dir string) (string, error) {
	root, err := supervise.RepoRoot(dir)
	if errors.Is(err, supervise.ErrNotDir) {
		return "", cli.Usagef("%v", err)
	}
	return root, err
}

func runSupervise(opts *superviseOptions) error {
	if opts.once && opts.watchSet {
		return cli.Usagef("give --once or --watch, not both")
	}
	if opts.watchSet && opts.watch <= 0 {
		return cli.Usagef("--watch needs an interval above zero, like 5s")
	}
	if opts.rounds < 0 {
		return cli.Usagef("--rounds must be 0 (no limit) or more")
	}
	if opts.budget.MaxTokens < 0 || opts.budget.MaxCostUSD < 0 {
		return cli.Usagef("--max-tokens and --max-cost cannot be negative (0: no limit)")
	}
	streams := opts.IO
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	repo, err := repoRoot(opts.repo)
	if err != nil {
		return err
	}
	b, st, runs, err := opts.Opened(false)
	if err != nil {
		return err
	}
	defer b.Close()
	o, err := superviseSetup(ctx, opts, b, repo, st, runs)
	if err != nil {
		return err
	}
	noteDirFleet(streams.ErrOut, "supervise", fidOf(ctx, repo))
	tel, err := runTelemetry(os.Getenv, repo)
	if err != nil {
		return err
	}
	jx, err := newJournalExport(ctx, tel, st, fidOf(ctx, repo))
	if err != nil {
		return cli.Failure(err)
	}
	// Sent last: what this supervisor journaled, its stop included.
	defer jx.send(context.WithoutCancel(ctx), streams.ErrOut)
	// A journal whose chain does not hold gets nothing more: the rounds are
	// reported read-only (no decision, nothing journaled or published),
	// the reason is on stderr, and supervise exits 1.
	var broken error
	readOnly := func(err error) (*supervise.Supervisor, error) {
		broken = err
		fmt.Fprintf(streams.ErrOut, "laserbrain supervise: %v\nlaserbrain supervise: reporting read-only: no halt, no question, nothing journaled until the journal holds\n", err)
		ro := o
		ro.ReadOnly, ro.Publish, ro.OnEscalate = true, nil, nil
		return supervise.Open(ctx, ro)
	}
	sup, err := supervise.Open(ctx, o)
	if errors.Is(err, fleet.ErrJournalBroken) {
		sup, err = readOnly(err)
	}
	if err != nil {
		return cli.Failure(err)
	}
	// Journal where this supervisor stopped, even when interrupted.
	defer func() { _ = sup.Close(context.WithoutCancel(ctx)) }()
	redraw := !opts.json && opts.watch > 0 && tty.Is(streams.Out)
	for n := 1; ; n++ {
		r, err := sup.Round(ctx)
		if errors.Is(err, fleet.ErrJournalBroken) && broken == nil {
			if sup, err = readOnly(err); err == nil {
				r, err = sup.Round(ctx)
			}
		}
		if err != nil {
			if ctx.Err() != nil && opts.watch > 0 {
				return nil // interrupted, perhaps while waiting for another supervisor's round
			}
			return cli.Failure(err)
		}
		if err := writeRound(streams, r, n, opts.json, redraw); err != nil {
			return err
		}
		jx.send(ctx, streams.ErrOut)
		if opts.watch <= 0 || (opts.rounds > 0 && n >= opts.rounds) {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(opts.watch):
			continue
		}
	}
	if broken != nil || sup.Undelivered() > 0 {
		return cli.SilentExit(cli.ExitFinding)
	}
	return nil
}

// superviseSetup is what the supervisor is opened with: the stores, the
// escalation command, and the link a --publish writes to.
func superviseSetup(ctx context.Context, opts *superviseOptions, b *backend.Backend, repo string, st fleet.Store, runs laserbrain.Store) (supervise.Options, error) {
	o := supervise.Options{Repo: repo, Fleet: st, Runs: runs, Goal: opts.goal, EscalateAfter: opts.escalateAfter, EscalateWaiting: opts.escalateWaiting,
		Budget: opts.budget, Usage: storeUsage(st)}
	if opts.escalateAfter == 0 {
		o.EscalateAfter = -1
	}
	if opts.onEscalate != "" {
		o.OnEscalate = escalationCommand(opts.onEscalate, repo, opts.escalateTimeout, opts.IO.ErrOut)
	}
	if opts.publish {
		fid, err := fleet.ID(ctx, repo)
		if err != nil {
			return o, cli.Failure(err)
		}
		l, err := b.Link(fid)
		if err != nil {
			return o, cli.Failure(err)
		}
		l.Agent = "supercode"
		o.Publish = l
	}
	return o, nil
}

// writeRound prints round n: a JSON line, a table redrawn on a terminal,
// or the text; and on stderr each escalation that was not delivered.
func writeRound(streams *cli.IOStreams, r *supervise.Round, n int, asJSON, redraw bool) error {
	switch {
	case asJSON:
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		fmt.Fprintf(streams.Out, "%s\n", b)
	case redraw:
		io.WriteString(streams.Out, "\x1b[H\x1b[2J")
		_ = r.WriteText(streams.Out)
	default:
		if n > 1 {
			io.WriteString(streams.Out, "\n")
		}
		_ = r.WriteText(streams.Out)
	}
	for _, e := range r.Escalations {
		if e.Undelivered {
			status := e.Error
			if e.Exit != nil {
				status = fmt.Sprintf("exited %d", *e.Exit)
			}
			fmt.Fprintf(streams.ErrOut, "laserbrain supervise: --on-escalate %s for %s (%s): the question was not delivered; it is asked again next round\n", status, e.ID, ponder.Printable(e.Who))
		}
	}
	return nil
}

// fidOf is the repository's fleet, "" when it cannot be told.
func fidOf(ctx context.Context, repo string) string {
	fid, _ := fleet.ID(ctx, repo)
	return fid
}

// escalationCommand runs CMD with sh -c, the escalation as JSON on its
// standard input, in the repository; the first line it prints is the
// person's decision. Its standard error goes to ours.
func escalationCommand(command, dir string, timeout time.Duration, stderr io.Writer) func(context.Context, supervise.Escalation) supervise.Resolution {
	return func(ctx context.Context, e supervise.Escalation) supervise.Resolution {
		in, err := json.Marshal(e)
		if err != nil {
			return supervise.Resolution{Error: err.Error()}
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(append(in, '\n'))
		cmd.Stderr = stderr
		cmd.Env = append(os.Environ(), "LASERBRAIN_ESCALATION="+e.ID, "LASERBRAIN_ESCALATION_KIND="+e.Kind)
		cmd.WaitDelay = 2 * time.Second
		out, err := cmd.Output()
		var ans supervise.Resolution
		line, _, _ := strings.Cut(string(out), "\n")
		ans.Decision = strings.TrimSpace(line)
		var ee *exec.ExitError
		switch {
		case err == nil:
			zero := 0
			ans.Exit = &zero
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			code := ee.ExitCode()
			ans.Exit = &code
		case ctx.Err() == context.DeadlineExceeded:
			ans.Error = fmt.Sprintf("killed after %s", timeout)
		default:
			ans.Error = err.Error()
		}
		return ans
	}
}

// personOnFleet is what a person's command on a fleet's journal
// (release, accept-journal) shares: its streams, the fleet it opens, and
// --repo, --reason and --by.
type personOnFleet struct {
	IO      *cli.IOStreams
	FleetOf fleetOpener

	repo, reason, by string
}

// flags adds --repo, --reason and --by, with reason and by their usage.
func (p *personOnFleet) flags(cmd *cobra.Command, reason, by string) {
	cmd.Flags().StringVar(&p.repo, "repo", "", "the repository (default: the one containing the current directory)")
	cmd.Flags().StringVar(&p.reason, "reason", "", reason)
	cmd.Flags().StringVar(&p.by, "by", "", by)
	cli.CompleteFlag(cmd, "repo", cli.Dirs)
	cli.CompleteFlags(cmd, cli.NoValue, "reason", "by")
}

// open opens the fleet of the repository: its store (the caller closes
// it), its id, and who acts (--by, else the current user).
func (p *personOnFleet) open(ctx context.Context) (st fleet.Store, fid, by string, err error) {
	repo, err := repoRoot(p.repo)
	if err != nil {
		return nil, "", "", err
	}
	st, fid, err = p.FleetOf(ctx, repo, false)
	if err != nil {
		return nil, "", "", err
	}
	by = p.by
	if by == "" {
		by = currentUser()
	}
	return st, fid, by, nil
}

type releaseOptions struct {
	personOnFleet
	// args are the positional arguments.
	args []string
}

func newSuperviseReleaseCmd(f *Factory, runF func(*releaseOptions) error) *cobra.Command {
	opts := &releaseOptions{personOnFleet: personOnFleet{IO: f.IOStreams, FleetOf: f.FleetOf}}
	cmd := &cobra.Command{
		Use:   "release AGENT [--reason TEXT]",
		Short: "Lift a halt: the person's way back",
		Long: `release lifts the halt in force on AGENT (as supervise names it: ponder:<slug>,
<agent>:<run id>; a session's slug or a run's id alone work too), so the gate
and ponder let it go on, and journals who released it and why.`,
		Example: `  laserbrain supervise release ponder:ui-2026-08-24 --reason "they split the work"
  laserbrain supervise release claude:9d14c2e07a11`,
		Args: cli.ExactArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeHalted(f, cmd, opts.repo, toComplete)
		},
		RunE: cli.RunArgs(opts, &opts.args, runF, runSuperviseRelease),
	}
	opts.flags(cmd, "why it may go on", "who releases it (default: the current user)")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitOK, When: "released"},
		cli.ExitDoc{Code: cli.ExitFinding, When: "nothing released: the journal's chain does not hold, and the gate lifts only a journaled release"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "AGENT is not halted (1 before the shared exit-code table), or bad usage"},
		cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runSuperviseRelease(opts *releaseOptions) error {
	if err := personOnly("laserbrain supervise release"); err != nil {
		return err
	}
	ctx := context.Background()
	st, fid, by, err := opts.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	h, err := supervise.Release(ctx, st, fid, opts.args[0], by, opts.reason, time.Now())
	if errors.Is(err, fleet.ErrNotFound) {
		// Nothing to release: the halt named is not in force.
		return cli.Usagef("%v (laserbrain supervise log shows the halts)", err)
	}
	if errors.Is(err, fleet.ErrJournalBroken) {
		fmt.Fprintf(opts.IO.ErrOut, "laserbrain supervise release: nothing was released: the gate lifts only a journaled release, and the journal cannot take one: %v\n", err)
		return cli.SilentExit(cli.ExitFinding)
	}
	if err != nil {
		return cli.Failure(err)
	}
	fmt.Fprintf(opts.IO.Out, "released %s (halted %s by %s: %s)\n", h.Agent, h.At.Format(time.RFC3339), h.By, h.Reason)
	return nil
}

type acceptJournalOptions struct{ personOnFleet }

func newSuperviseAcceptJournalCmd(f *Factory, runF func(*acceptJournalOptions) error) *cobra.Command {
	opts := &acceptJournalOptions{personOnFleet{IO: f.IOStreams, FleetOf: f.FleetOf}}
	cmd := &cobra.Command{
		Use:   "accept-journal --reason TEXT",
		Short: "Go on from a journal that broke or lost records: the person's way on",
		Long: `accept-journal is what a person runs once laserbrain supervise verify showed
the fleet's journal broken, or short of what this machine verified of it
(deleted, emptied, cut short or rewritten, its halts gone from the store),
and the journal cannot be restored. Until then the gate honours no release
and no authorization the journal does not witness, and every halt this
machine knew holds.

It sets the old journal aside whole (its records, head and round counter,
kept as evidence, and named), starts a new chain with a record of who
accepted it and why, and journals again every halt that held — the store's
in force, the journal's that no release lifted, and those this machine
knew — putting each in force in the store. Nothing is released: lift each
halt with laserbrain supervise release. A machine.json that cannot be read
is set aside too.`,
		Example: `  laserbrain supervise verify
  laserbrain supervise accept-journal --reason "an agent emptied the journal; its halt stays"
  laserbrain supervise release claude:9d14c2e07a11 --reason "reviewed"`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runSuperviseAcceptJournal),
	}
	opts.flags(cmd, "why the journal is accepted as it stands (required)", "who accepts it (default: the current user)")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitOK, When: "accepted, or nothing to accept (the journal holds)"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "no --reason, or bad usage"},
		cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runSuperviseAcceptJournal(opts *acceptJournalOptions) error {
	if err := personOnly("laserbrain supervise accept-journal"); err != nil {
		return err
	}
	if strings.TrimSpace(opts.reason) == "" {
		return cli.Usagef("--reason is required: say why the journal is accepted as it stands")
	}
	ctx := context.Background()
	st, fid, by, err := opts.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	a, err := supervise.AcceptJournal(ctx, st, fid, by, opts.reason, time.Now())
	if errors.Is(err, supervise.ErrNothingToAccept) {
		fmt.Fprintf(opts.IO.Out, "nothing to accept: %v\n", err)
		return nil
	}
	if err != nil {
		return cli.Failure(err)
	}
	if a.MachineSetAside != "" {
		fmt.Fprintf(opts.IO.Out, "set aside machine.json, which could not be read: %s\n", a.MachineSetAside)
	}
	if a.SetAside != "" {
		fmt.Fprintf(opts.IO.Out, "set aside the journal (%v): %s\n", a.Problem, a.SetAside)
	}
	fmt.Fprintf(opts.IO.Out, "journal accepted by %s: %s\n", by, fleet.JournalLocation(st, fid))
	for _, h := range a.Halts {
		fmt.Fprintf(opts.IO.Out, "still halted: %s (%s) — %s\n", h.Agent, h.Reason, fleet.ReleaseCommand(h.Agent))
	}
	return nil
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "a person"
}

// journalOf reads the supervisor's journal of the repository's fleet (the
// one containing repo, default the current directory), the store opened
// for reading; the caller closes it.
func journalOf(ctx context.Context, fleetOf fleetOpener, repo string) (fleet.Store, string, []fleet.JournalRecord, error) {
	root, err := repoRoot(repo)
	if err != nil {
		return nil, "", nil, err
	}
	st, fid, err := fleetOf(ctx, root, true)
	if err != nil {
		return nil, "", nil, err
	}
	recs, gone, err := fleet.ReadJournal(ctx, st, fid)
	if err != nil {
		_ = st.Close()
		return nil, "", nil, cli.Failure(err)
	}
	if gone != nil {
		// The records after it are still the journal's: log prints them.
		fmt.Fprintf(os.Stderr, "laserbrain supervise: %v; the records before seq %d are not shown (laserbrain supervise verify)\n", gone, fleet.JournalFrom(recs))
	}
	return st, fid, recs, nil
}

type journalOptions struct {
	IO      *cli.IOStreams
	FleetOf fleetOpener

	repo string
	json bool
}

func newSuperviseLogCmd(f *Factory, runF func(*journalOptions) error) *cobra.Command {
	opts := &journalOptions{IO: f.IOStreams, FleetOf: f.FleetOf}
	cmd := &cobra.Command{
		Use:   "log [--json]",
		Short: "Print the supervisor's journal of this repository's fleet",
		Long: `log prints where the journal is kept, then the journal: every round's
decisions, halts, releases and escalations with their answers, oldest
first. --json prints only the records, exactly as stored, one a line: the
reference's audit format, which its verify_audit accepts as a list.`,
		Example: `  laserbrain supervise log
  laserbrain supervise log --json --repo ~/src/shop`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runSuperviseLog),
	}
	cmd.Flags().StringVar(&opts.repo, "repo", "", "the repository (default: the one containing the current directory)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "the records as stored, one a line")
	cli.CompleteFlag(cmd, "repo", cli.Dirs)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runSuperviseLog(opts *journalOptions) error {
	ctx := context.Background()
	st, fid, recs, err := journalOf(ctx, opts.FleetOf, opts.repo)
	if err != nil {
		return err
	}
	defer st.Close()
	w := bufio.NewWriter(opts.IO.Out)
	defer func() { _ = w.Flush() }()
	if !opts.json {
		fmt.Fprintf(w, "journal: %s\n", fleet.JournalLocation(st, fid))
	}
	for _, r := range recs {
		if opts.json {
			_, _ = w.Write(r.Raw)
			_ = w.WriteByte('\n')
			continue
		}
		agent := r.Agent
		if agent == "" {
			agent = "-"
		}
		fmt.Fprintf(w, "%5d  %s  round %-4d %-10s %s  %s\n", r.Seq, r.At, r.Round, r.Kind, ponder.Printable(agent), ponder.Printable(r.Text))
	}
	return nil
}

func newSuperviseVerifyCmd(f *Factory, runF func(*journalOptions) error) *cobra.Command {
	opts := &journalOptions{IO: f.IOStreams, FleetOf: f.FleetOf}
	cmd := &cobra.Command{
		Use:   "verify [--json]",
		Short: "Check the journal's hash chain",
		Long: `verify checks the journal of this repository's fleet: each record's hash over
its content, each record's prev against the record before it, the seq
without a gap, the head the store keeps apart from the records, and the
fleet's round counter, which records where the head stood at the end of
each round (and after a supervisor's stop or a release). After any edit,
deletion, insertion or reordering it names the first bad record (its
position, its seq and what was done) and exits 1. It prints where the
journal is kept.

It also holds the fleet's records to the journal, which witnesses a
person's: an authorization no journal record witnesses (a file written by
hand, or one whose terms changed since laserbrain authorize journaled it)
and a halt lifted in the store without a journaled release (a "released"
added by hand, an index removed) are named, with their files, and verify
exits 1 — the gate ignores them (it honours only journaled authorizations,
and lifts a halt only on a journaled release). A halt in force that was
never journaled is named too; it holds.

It holds the journal to what this machine verified of it (machine.json,
kept beside the fleet store, not in it): a journal deleted, emptied, cut
short or rewritten since — with its head and round counter, or the whole
fleet directory — is named, and so is each halt this machine knew in force
that the store no longer holds (the gate still holds it). A person then
restores the journal, or goes on with laserbrain supervise accept-journal.

What it can and cannot show, without a key: a journal deleted, or cut
short with its head rewritten to match, does not verify while the round
counter or machine.json stands; a record edited in place does not, nor one
rewritten with its hash. Records appended by a writer that died before
ending its round are beyond the counter, and whoever can rewrite the
journal, its head, the counter and machine.json together can forge a
consistent history: the chain makes a change evident, it does not stop
one.`,
		Example: `  laserbrain supervise verify
  laserbrain supervise verify --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runSuperviseVerify),
	}
	cmd.Flags().StringVar(&opts.repo, "repo", "", "the repository (default: the one containing the current directory)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the result as JSON")
	cli.CompleteFlag(cmd, "repo", cli.Dirs)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitOK, When: "the chain holds"},
		cli.ExitDoc{Code: cli.ExitFinding, When: "it does not: the first bad record is named"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the journal cannot be read"})
	return cmd
}

func runSuperviseVerify(opts *journalOptions) error {
	ctx := context.Background()
	root, err := repoRoot(opts.repo)
	if err != nil {
		return err
	}
	st, fid, err := opts.FleetOf(ctx, root, true)
	if err != nil {
		return err
	}
	defer st.Close()
	c, err := fleet.CheckJournal(ctx, st, fid)
	if err != nil {
		return cli.Failure(err)
	}
	// The records a rotation archived: they must chain, from seq 1, into
	// the journal's first record.
	archived, archiveProblem, err := fleet.CheckArchive(ctx, st, fid, c.Records)
	if err != nil {
		return cli.Failure(err)
	}
	if c.Problem == nil {
		c.Problem = archiveProblem
	}
	// What this machine verified before, held against the store now: a
	// journal deleted, emptied or rewritten, and halts gone from it.
	mc, err := fleet.CheckMachine(ctx, st, fid)
	if err != nil {
		return cli.Failure(err)
	}
	// Records changed outside a person's command: the gate ignores
	// them; verify names them and fails.
	unwitnessed, err := fleet.Unwitnessed(ctx, st, fid)
	if err != nil {
		return cli.Failure(err)
	}
	loc := fleet.JournalLocation(st, fid)
	problem := c.Problem
	if problem != nil {
		mc.Problem = nil // the chain's own problem says it
	} else if mc.Verified != nil {
		problem = mc.Problem
	}
	lost := mc.Lines(loc)
	ok := problem == nil && len(unwitnessed) == 0 && len(lost) == 0
	if opts.json {
		var round any
		if c.Mark != nil {
			round = c.Mark.Round
		}
		if err := cli.WriteJSON(opts.IO.Out, map[string]any{"fleet": fid, "location": loc, "records": int64(len(c.Records)) + archived, "archived": archived, "head": c.Head,
			"round": round, "unacknowledged": c.Unacknowledged, "ok": ok, "problem": problem,
			"unwitnessed": unwitnessed, "machine": lost}); err != nil {
			return cli.Failure(err)
		}
	}
	if !ok {
		if !opts.json {
			printVerifyFindings(opts.IO.ErrOut, c.Problem, loc, unwitnessed, lost, c.Head.Records)
		}
		return cli.SilentExit(cli.ExitFinding)
	}
	if !opts.json {
		fmt.Fprintf(opts.IO.Out, "journal verified: %s, head %s", text.Plural(c.Head.Records, "record"), shortHash(c.Head.Hash))
		if c.Mark != nil && c.Mark.Round > 0 {
			fmt.Fprintf(opts.IO.Out, ", %s counted", text.Plural(c.Mark.Round, "round"))
		}
		fmt.Fprintf(opts.IO.Out, "\njournal: %s\n", loc)
		if archived > 0 {
			fmt.Fprintf(opts.IO.Out, "archive: records 1–%d, rotated out of the journal, chain into it\n", archived)
		}
		if c.Unacknowledged > 0 {
			fmt.Fprintf(opts.IO.Out, "%s past the head chain correctly: a writer died before acknowledging them\n", text.Plural(int64(c.Unacknowledged), "record"))
		}
	}
	return nil
}

// printVerifyFindings says what verify found: the chain's first problem,
// the records changed outside a person's command, what the store lost of
// what this machine verified, and what a person does.
func printVerifyFindings(w io.Writer, problem *fleet.JournalProblem, loc string, unwitnessed, lost []string, records int64) {
	if p := problem; p != nil {
		fmt.Fprintf(w, "laserbrain supervise verify: the journal is broken at record %d (seq %d): %s — %s\njournal: %s\n", p.Index, p.Seq, p.Kind, p.Detail, loc)
	}
	for _, u := range unwitnessed {
		fmt.Fprintf(w, "laserbrain supervise verify: %s\n", u)
	}
	if len(unwitnessed) > 0 && problem == nil {
		fmt.Fprintf(w, "laserbrain supervise verify: %s changed outside laserbrain authorize and supervise release; the gate ignores them (the journal holds, %s)\n",
			text.Plural(int64(len(unwitnessed)), "record"), text.Plural(records, "record"))
	}
	for _, l := range lost {
		fmt.Fprintf(w, "laserbrain supervise verify: %s\n", l)
	}
	if problem != nil || len(lost) > 0 {
		fmt.Fprintf(w, "laserbrain supervise verify: no release or authorization the journal does not witness is honoured, and the halts this machine knew hold; restore the journal, or go on from it as it stands: %s (the halts are journaled again and hold until released)\n",
			fleet.AcceptJournalCommand)
	}
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "(empty)"
	}
	return h
}

// completeHalted offers the agents halted in the repository's fleet, each
// with its halt's reason, read without creating anything.
func completeHalted(f *Factory, cmd *cobra.Command, repo, toComplete string) ([]string, cobra.ShellCompDirective) {
	ctx := context.Background()
	root, err := repoRoot(repo)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	st, fid, err := f.FleetOf(ctx, root, true)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer st.Close()
	halts, err := st.ListHalts(ctx, fid)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, h := range halts {
		if h.InForce() {
			out = append(out, h.Agent+"\t"+h.Reason)
		}
	}
	return cli.Values(out...)(cmd, nil, toComplete)
}
