package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
)

type checkOptions struct {
	IO *cli.IOStreams
	// Supervisor checks a run laserbrain run registered; RunStore opens
	// laserbrain's run store, where every other run is checked.
	Tracker  func() *agentrun.Tracker
	RunStore func() (laserbrain.Store, error)
	// StreamStore is RunStore for --stream (nil: RunStore).
	StreamStore func() (laserbrain.Store, error)
	// Getenv reads LASERBRAIN_RUN.
	Getenv func(string) string
	// onlyRun: the check runs in the supervisor's process for its
	// confined agent, whose lines may name this run alone (the broker
	// holds a single check to it).
	onlyRun string

	goal, progress, distance, parentGoal string
	doing, next, blocked                 string
	userTurn                             bool
	against                              string
	run                                  string
	newRun                               bool
	json                                 bool
	stream                               bool
	// runFromEnv: run came from $LASERBRAIN_RUN, not --run.
	runFromEnv bool
	// goalSet: --goal was given (an empty goal is one); stateFlags are the
	// flags of one state that were given (a stream's lines carry their own).
	goalSet    bool
	stateFlags []string
}

// runSource names where the run id came from.
func (o *checkOptions) runSource() string {
	if o.runFromEnv {
		return "LASERBRAIN_RUN"
	}
	return "--run"
}

// runWords say how to fix the run the check names, in the words of where
// it was named.
func (o *checkOptions) runWords() runWords {
	if o.runFromEnv {
		return envRunWords
	}
	return flagRunWords
}

// checkHelp is check's long help: one state, or a stream of them.
const checkHelp = `check measures one state (goal, progress, distance) against the run's frozen
ground and prints the verdict. The first check of a run sets the ground.
Without --run it continues $LASERBRAIN_RUN when that is set (laserbrain run
exports it to the agent, so an agent's checks reach the run its gate and
its supervisor read), and otherwise starts a new run and prints its id;
--new-run without an id, or --run '', starts a new run even then. --run ID
continues that run, and a run that does not exist is refused (a mistyped id would otherwise
start a new run and hide the drift) unless --new-run asks to start one
under that id. A run laserbrain run registered for an agent exists from the
start, and a check on it goes where its hooks' checks go (its current task,
counted on the run), so laserbrain runs and laserbrain supervise see it.
Runs live in $LASERBRAIN_HOME, else in the user config directory.

--against GOAL first grounds the new run on that prior goal (advancing,
distance 5), so the state is measured against it: the reference's way to
see drift in one command.

--distance is a whole number, 0 (done) to 10 — one past the scale reads as
its end (11 as 10, -1 as 0, as the reference reads it, said on stderr) —
or "unknown", and --progress one of advancing, stuck or circling; anything
else is refused with the accepted values. A stream line and the MCP server's check_state
read them as the Python reference's check_state does (a distance clamped
to 0-10, any other progress ungrammatical): that is the agent's spelled
state, which parity keeps exactly.

With --stream, check reads one JSON object per line from standard input,
{"goal", "progress", "distance", "parent_goal", "user_turn", "doing", "next",
"blocked", "run", "new_run"} (all optional: progress defaults to advancing,
distance to 5, and a null distance means unknown), and writes one JSON
verdict per line, compact, in order, as each line is read. A line that is
not such an object, or that names a run that does not exist (without
"new_run": true), gets {"error": {"code", "kind", "message"}, "line": N} on
its output line and the stream goes on. Lines without "run" continue the
--run run, or one new run for the whole stream. Blank lines are skipped.
The stream holds each run it touches until it ends (a check on the same run
elsewhere waits); a run laserbrain run registered is held a batch at a
time, so its hooks go on between batches.

Checks are made durable in batches (group commit): the lines read since the
last commit are saved together, with one fsync, and only then answered. A
batch is committed when no whole line is waiting in the input, after 4,096
lines, 50 ms after its first line, at the end of the input, and on SIGTERM
or an interrupt (the stream then answers what it read and stops). So a
verdict is never printed before its check is on disk: after a crash, even
kill -9, every step whose verdict was printed is in its run, none is there
twice, and the run goes on after the last step saved. A check that could
not be saved is answered with an error saying so (exit 8), never with a
verdict.`

func newCheckCmd(f *Factory, runF func(*checkOptions) error) *cobra.Command {
	opts := &checkOptions{IO: f.IOStreams, Tracker: f.Tracker, RunStore: f.RunStore, StreamStore: f.StreamStore, Getenv: f.getenv, onlyRun: f.AgentRun}
	cmd := &cobra.Command{
		Use:   "check --goal GOAL [--progress P] [--distance N] [--run ID [--new-run]] | check --stream",
		Short: "Check one spelled state against its run's ground (or a stream of them)",
		Long:  checkHelp,
		Example: `  # A new run: the first check grounds it and prints its id.
  laserbrain check --goal "add a CSV importer to the admin panel" --distance 8
  # Continue it; exit 1 when the state drifts.
  laserbrain check --run 9d14c2e07a11 --goal "refactor the ORM" --distance 6 --json
  # Start a run under an id of your choosing.
  laserbrain check --run release-1.4 --new-run --goal "cut release 1.4" --distance 9
  # One verdict per JSON line.
  printf '%s\n' '{"goal":"ship it","distance":3}' | laserbrain check --stream --run release-1.4`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if handled, err := relayed(cmd, opts.IO, "check"); handled {
				return err
			}
			// Under laserbrain run, checks go to the agent's run, which
			// the gate and the supervisor read.
			if !cmd.Flags().Changed("run") && !opts.newRun {
				opts.run = strings.TrimSpace(opts.Getenv(agentrun.EnvRun))
				opts.runFromEnv = opts.run != ""
			}
			opts.goalSet = cmd.Flags().Changed("goal")
			opts.stateFlags = changedFlags(cmd, "goal", "progress", "distance", "parent-goal", "user-turn", "doing", "next", "blocked")
			if runF != nil {
				return runF(opts)
			}
			return checkRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.goal, "goal", "", "the one goal of the run, as the agent states it now")
	fl.StringVar(&opts.progress, "progress", laserbrain.ProgressAdvancing, "advancing, stuck or circling")
	fl.StringVar(&opts.distance, "distance", "5", "how far from done: a whole number from 0 (done) to 10 (beyond reads as 0 or 10), or unknown")
	fl.StringVar(&opts.parentGoal, "parent-goal", "", "the goal this one serves, when on a sub-task")
	fl.BoolVar(&opts.userTurn, "user-turn", false, "the user spoke since the last check (a new goal is then a new instruction)")
	fl.StringVar(&opts.against, "against", "", "ground a new run on this prior goal first (advancing, distance 5), to see drift from it")
	fl.StringVar(&opts.doing, "doing", "", "what this step does (read for cause-claims and observations)")
	fl.StringVar(&opts.next, "next", "", "the single next action")
	fl.StringVar(&opts.blocked, "blocked", "", "what blocks you")
	fl.StringVar(&opts.run, "run", "", "continue this run (default: $LASERBRAIN_RUN when set, else start a new one)")
	fl.BoolVar(&opts.newRun, "new-run", false, "start a new run (under the --run id, which must not exist yet)")
	fl.BoolVar(&opts.json, "json", false, "print the verdict as JSON (with --stream: the stream is JSON already)")
	fl.BoolVar(&opts.stream, "stream", false, "read JSON lines from standard input, write one JSON verdict per line")
	cli.CompleteFlag(cmd, "progress", cli.Values(laserbrain.ProgressAdvancing, laserbrain.ProgressStuck, laserbrain.ProgressCircling))
	cli.CompleteFlag(cmd, "distance", cli.Values(distanceValues()...))
	cli.CompleteFlag(cmd, "run", completeRunIDs(f))
	cli.CompleteFlags(cmd, cli.NoValue, "goal", "parent-goal", "doing", "next", "blocked")
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitOK, When: "not drifting (with --stream: every line was read)"},
		cli.ExitDoc{Code: cli.ExitFinding, When: "the state drifts (not with --stream: each verdict says so)"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "bad input: a flag, a distance that is not a whole number, a run that does not exist (or exists, with --new-run); with --stream, any bad line"},
		cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

// checkRun checks one state, or a stream of them.
func checkRun(opts *checkOptions) error {
	if !opts.stream {
		return runCheck(opts)
	}
	if opts.against != "" {
		return cli.Usagef("--against goes with one check, not --stream (a stream's first line grounds its run)")
	}
	return runCheckStream(opts)
}

// distanceValues are the values --distance accepts, for completion.
func distanceValues() []string {
	out := []string{"0\tdone"}
	for d := 1; d <= 10; d++ {
		out = append(out, strconv.Itoa(d))
	}
	return append(out, "unknown")
}

// parseDistance reads --distance as the reference's command line does: a
// whole number (any: one past the 0-10 scale is clamped to it, 11 reading
// as 10 and -1 as 0, and note says so), or unknown. Anything else — 3.5,
// "abc" — is refused, as the reference refuses a value that is not an int.
func parseDistance(s string) (d laserbrain.Distance, note string, err error) {
	t := strings.TrimSpace(s)
	if t == "unknown" {
		return laserbrain.NoDistance, "", nil
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return laserbrain.Distance{}, "", cli.Usagef("--distance %q: want a whole number (0 is done, 10 the farthest; one past the scale reads as its end), or unknown", s)
	}
	clamped := int(max(0, min(10, n))) // ErrRange leaves n at the int64 bound of its sign
	if int64(clamped) != n || err != nil {
		note = fmt.Sprintf("--distance %s read as %d: the scale is 0 (done) to 10", t, clamped)
	}
	return laserbrain.Dist(clamped), note, nil
}

// checkProgress refuses a --progress the help does not list: a typo in a
// flag is the caller's, not the agent's spelled state (which --stream and
// the MCP server still read as the reference does: ungrammatical).
func checkProgress(p string) error {
	switch p {
	case laserbrain.ProgressAdvancing, laserbrain.ProgressStuck, laserbrain.ProgressCircling:
		return nil
	}
	return cli.Usagef("--progress %q: want advancing, stuck or circling", p)
}

// runError is a check's run named the wrong way, in the words of the
// place it was named; any other error is a failure.
func runError(err error, how runWords) error {
	var re *agentrun.RunError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re) && re.Exists:
		return cli.Usagef("%v: %s", re, how.exists)
	case errors.As(err, &re):
		return cli.Usagef("%v: %s", re, how.missing)
	}
	return cli.Failure(err)
}

// runWords say how to fix a run that is missing or exists, in the words of
// the place it was named.
type runWords struct{ missing, exists string }

var envRunWords = runWords{
	missing: "$LASERBRAIN_RUN names it; unset LASERBRAIN_RUN, or add --new-run to start a new run (laserbrain runs lists the runs)",
}

var flagRunWords = runWords{
	missing: "to start a new run under this id, add --new-run (laserbrain runs lists the runs)",
	exists:  "drop --new-run to continue it, or choose another id",
}

// completeRunIDs offers the saved runs' ids, newest first, from the
// stores opened for reading.
func completeRunIDs(f *Factory) cli.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		sup := f.Reader()
		defer sup.Close()
		store, err := sup.Runs()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var ids []string
		if rs, ok := store.(interface {
			RecentRunIDs(context.Context) ([]string, error)
		}); ok {
			ids, _ = rs.RecentRunIDs(context.Background())
		}
		return cli.Values(ids...)(cmd, nil, toComplete)
	}
}

func runCheck(opts *checkOptions) error {
	if !opts.goalSet {
		return cli.Usagef("--goal is required (an empty goal is allowed, and is ungrammatical)")
	}
	d, note, err := parseDistance(opts.distance)
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(opts.IO.ErrOut, "laserbrain: %s\n", note)
	}
	if err := checkProgress(opts.progress); err != nil {
		return err
	}
	id := opts.run
	if id == "" {
		id = laserbrain.NewRunID()
		opts.newRun = true
	} else if err := laserbrain.ValidateRunID(id); err != nil {
		return cli.Usagef("%s: %v", opts.runSource(), err)
	}
	if opts.against != "" && !opts.newRun {
		return cli.Usagef("--against grounds a new run, and %s %s continues one that has its ground (add --new-run for a new run under that id)", opts.runSource(), id)
	}
	in := laserbrain.StepInput{
		Goal: opts.goal, Progress: opts.progress, Distance: d, ParentGoal: opts.parentGoal, UserTurn: opts.userTurn,
		Doing: opts.doing, Next: opts.next, Blocked: opts.blocked,
	}
	ctx := context.Background()
	created := false
	if opts.against != "" {
		// The prior goal is the ground the state is measured against.
		if _, created, err = checkOne(ctx, id, opts, laserbrain.StepInput{Goal: opts.against, Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(5)}); err != nil {
			return err
		}
		opts.newRun = false
	}
	v, createdNow, err := checkOne(ctx, id, opts, in)
	if err != nil {
		return err
	}
	created = created || createdNow
	if opts.json {
		if err := cli.WriteJSON(opts.IO.Out, v); err != nil {
			return cli.Failure(err)
		}
	} else {
		writeVerdict(opts.IO.Out, v, created)
	}
	if v.Drifting {
		return cli.SilentExit(cli.ExitFinding)
	}
	return nil
}

// checkOne checks one state on run id: a registered agent run through its
// supervision, any other through laserbrain's run store.
func checkOne(ctx context.Context, id string, opts *checkOptions, in laserbrain.StepInput) (v laserbrain.CheckResult, created bool, err error) {
	if opts.run != "" {
		sup := opts.Tracker()
		checks := agentrun.NewChecks(sup)
		r, err := checks.Registered(ctx, id)
		if err == nil && r != nil {
			v, created, err = checks.Check(ctx, r, in, opts.newRun, agentrun.ViaCLI)
		}
		err = runError(err, opts.runWords())
		if cerr := sup.Close(); err == nil && cerr != nil {
			err = cli.Failure(fmt.Errorf("run %s not saved: %w", id, cerr))
		}
		if err != nil || r != nil {
			return v, created, err
		}
	}
	store, err := opts.RunStore()
	if err != nil {
		return v, false, cli.Failure(err)
	}
	h, err := agentrun.OpenUnregistered(ctx, store, id, opts.newRun)
	if err != nil {
		_ = store.Close()
		return v, false, runError(err, opts.runWords())
	}
	defer func() { _ = h.Close() }()
	if v, err = h.Run().Step(in); err != nil {
		_ = store.Close()
		return v, false, cli.Failure(fmt.Errorf("run %s: %w", id, err))
	}
	if err := h.Save(ctx); err != nil {
		_ = store.Close()
		return v, false, cli.Failure(fmt.Errorf("run %s not saved: %w", id, err))
	}
	if err := store.Close(); err != nil {
		return v, false, cli.Failure(fmt.Errorf("run %s: contexts not saved: %w", id, err))
	}
	return v, h.Created(), nil
}

// writeVerdict prints a verdict for a person.
func writeVerdict(w io.Writer, v laserbrain.CheckResult, newRun bool) {
	mark := "· on track"
	switch {
	case v.Drifting:
		mark = "⚑ drifting"
	case v.Reason == laserbrain.VerdictGrounded.String():
		mark = "✓ ground set"
	default:
		if c, _ := laserbrain.ClassOf(v.Reason); c == laserbrain.ClassWarnThenInterrupt {
			mark = "△ warning"
		}
	}
	fmt.Fprintf(w, "%s: %s  Φ=%.2f  ground=%.2f\n", mark, v.Reason, v.Phi, v.GroundScore)
	ls := "(none: the state is not grammatical)"
	if v.Laserscore != nil {
		ls = *v.Laserscore
	}
	fmt.Fprintf(w, "laserscore: %s\n", ls)
	if v.Ground != "" {
		fmt.Fprintf(w, "ground:     %s\n", v.Ground)
	}
	if v.ParentOverlap != nil {
		fmt.Fprintf(w, "parent:     overlap %.2f, rejected\n", *v.ParentOverlap)
	}
	if v.Claims != nil {
		g := "none"
		if v.Claims.Grounded != nil {
			g = fmt.Sprintf("%.2f", *v.Claims.Grounded)
		}
		fmt.Fprintf(w, "claims:     %d cause, %d observation, grounded %s\n", v.Claims.Cause, v.Claims.Observation, g)
	}
	fmt.Fprintf(w, "advice:     %s\n", v.Advice)
	fmt.Fprintf(w, "why:        %s\n", v.Why)
	fmt.Fprintf(w, "run:        %s step %d", v.Run, v.Step)
	if newRun {
		fmt.Fprintf(w, " (new; continue with --run %s)", v.Run)
	}
	fmt.Fprintln(w)
}
