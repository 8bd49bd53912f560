package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/loop"
)

// The loops of this laserbrain home: list, status, cancel.

type loopListOptions struct {
	IO *cli.IOStreams

	all, json bool
}

func newLoopListCmd(f *Factory, runF func(*loopListOptions) error) *cobra.Command {
	opts := &loopListOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "list [--all] [--json]",
		Short: "List the loops of this laserbrain home that are running or can be resumed",
		Long: `list shows the loop runs journaled in this laserbrain home
($LASERBRAIN_HOME/loop) that are running now or can go on with --resume:
run id, state, SCRIPT, the repository it runs in, the iteration, the soak
count of its last judge call, when it started, its last step and, while it
runs, the loop's process id. A loop is running while it holds its run's
lock, whatever process ids say; --all lists the finished runs too.`,
		Example: `  laserbrain loop list
  laserbrain loop list --all --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runLoopList),
	}
	cmd.Flags().BoolVar(&opts.all, "all", false, "list the finished runs too")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the runs as JSON")
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitFailure, When: "the laserbrain home or a run's journal cannot be read"})
	return cmd
}

func runLoopList(opts *loopListOptions) error {
	runs, err := loop.List(loop.ListOptions{All: opts.all})
	if err != nil {
		return loopError(err)
	}
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "no loop is running or resumable in this laserbrain home")
		return nil
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATE\tPID\tITER\tSOAK\tSTARTED\tLAST STEP\tSCRIPT\tREPOSITORY")
	for _, r := range runs {
		pid, soak := "-", "-"
		if r.PID > 0 {
			pid = fmt.Sprint(r.PID)
		}
		if r.SoakOf > 0 {
			soak = fmt.Sprintf("%d/%d", r.Soak, r.SoakOf)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Run, r.State, pid, r.Iteration, soak,
			r.Started.Local().Format("2006-01-02 15:04:05"), lastStepText(r.LastStep), r.Script, r.Repo)
	}
	return tw.Flush()
}

// lastStepText is a step as one short cell: "7 judge judge --soak 2 → 1".
func lastStepText(s *loop.StepInfo) string {
	if s == nil {
		return "-"
	}
	t := fmt.Sprintf("%d %s", s.Step, s.Kind)
	if s.What != "" && s.Kind != "run" {
		w := s.What
		if len(w) > 40 {
			w = w[:37] + "..."
		}
		t = fmt.Sprintf("%d %s", s.Step, w)
	}
	switch {
	case s.Phase == "start":
		t += " (in flight)"
	case s.Status != nil:
		t += fmt.Sprintf(" → %d", *s.Status)
	}
	return t
}

type loopStatusOptions struct {
	IO     *cli.IOStreams
	Reader func() *agentrun.Tracker
	// args are the positional arguments.
	args []string

	steps int
	json  bool
}

func newLoopStatusCmd(f *Factory, runF func(*loopStatusOptions) error) *cobra.Command {
	opts := &loopStatusOptions{IO: f.IOStreams, Reader: f.Reader}
	cmd := &cobra.Command{
		Use:   "status RUN [--steps N] [--json]",
		Short: "Show a loop's last steps, its current verdict and the budgets it has left",
		Long: `status reads one loop run of this laserbrain home: whether it is running
(and its process id), the last steps of its journal (steps.jsonl), the
current verdict (the last judge call: its status, soak count and summary)
and what is left of its budgets: iterations before --max-iters, tokens
before --budget, time before --timeout (counted from the start of the
invocation running now), and the no-op streak.`,
		Example: `  laserbrain loop status 2f9c0a1d7e3b
  laserbrain loop status 2f9c0a1d7e3b --steps 30 --json`,
		Args:              cli.ExactArgs(1),
		ValidArgsFunction: completeLoopRuns,
		RunE:              cli.RunArgs(opts, &opts.args, runF, runLoopStatus),
	}
	cmd.Flags().IntVar(&opts.steps, "steps", 10, "how many of the journal's last records to show")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the status as JSON")
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitUsage, When: "RUN is not a run id, or no loop of this home (one of another home is named as such)"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the run's journal cannot be read"})
	return cmd
}

func runLoopStatus(opts *loopStatusOptions) error {
	ctx := context.Background()
	st, done := fleetForLoops(opts.Reader)
	defer done()
	si, err := loop.Status(ctx, loop.StatusOptions{Run: opts.args[0], Steps: opts.steps, Fleet: st})
	if err != nil {
		return loopError(err)
	}
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, si)
	}
	printLoopStatus(opts.IO, si)
	return nil
}

func printLoopStatus(streams *cli.IOStreams, si loop.StatusInfo) {
	w := streams.Out
	state := si.State
	if si.PID > 0 {
		state += fmt.Sprintf(" (pid %d)", si.PID)
	}
	if si.ExitCode != nil && si.State != loop.RunBusy {
		state += fmt.Sprintf(", exit %d", *si.ExitCode)
	}
	if si.Reason != "" {
		state += ": " + si.Reason
	}
	fmt.Fprintf(w, "run %s: %s\n", si.Run, state)
	fmt.Fprintf(w, "script:     %s in %s\n", si.Script, si.Repo)
	fmt.Fprintf(w, "started:    %s\n", si.Started.Local().Format(time.RFC3339))
	fmt.Fprintf(w, "journal:    %s/\n", si.Journal)
	it := fmt.Sprintf("%d", si.Iteration)
	if si.SoakOf > 0 {
		it += fmt.Sprintf(", soak %d/%d", si.Soak, si.SoakOf)
	}
	fmt.Fprintf(w, "iteration:  %s\n", it)
	if v := si.Verdict; v != nil {
		what := fmt.Sprintf("judge %s, step %d: exit %d", v.Judge, v.Step, v.Status)
		if v.Soak != nil {
			what += fmt.Sprintf(", soak %d of %d", *v.Soak, v.SoakOf)
		}
		if v.Summary != "" {
			what += fmt.Sprintf(": %q", v.Summary)
		} else if v.Reason != "" {
			what += ": " + v.Reason
		}
		fmt.Fprintf(w, "verdict:    %s\n", what)
	} else {
		fmt.Fprintf(w, "verdict:    none yet\n")
	}
	b := si.Budgets
	parts := []string{fmt.Sprintf("%d of %d iterations", b.ItersLeft, b.MaxIters)}
	if b.TokensLeft != nil {
		parts = append(parts, fmt.Sprintf("%d of %d tokens", *b.TokensLeft, b.Budget))
	} else {
		parts = append(parts, fmt.Sprintf("tokens unlimited (%d used)", b.TokensUsed))
	}
	switch {
	case b.TimeLeft != "":
		parts = append(parts, fmt.Sprintf("%s of --timeout %s", b.TimeLeft, b.Timeout))
	case b.Timeout != "":
		parts = append(parts, fmt.Sprintf("--timeout %s per invocation", b.Timeout))
	}
	parts = append(parts, fmt.Sprintf("no-op streak %d of %d", b.NoopStreak, b.NoopLimit))
	fmt.Fprintf(w, "left:       %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(w, "last %d steps:\n", len(si.Steps))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range si.Steps {
		status := "-"
		switch {
		case s.Phase == "start":
			status = "in flight"
		case s.Status != nil:
			status = fmt.Sprint(*s.Status)
		}
		what := s.What
		if s.Reason != "" {
			what = strings.TrimSpace(what + " — " + s.Reason)
		}
		if len(what) > 100 {
			what = what[:97] + "..."
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\n", s.Step, s.At.Local().Format("15:04:05"), s.Kind, status, what)
	}
	tw.Flush()
}

type loopCancelOptions struct {
	IO     *cli.IOStreams
	Reader func() *agentrun.Tracker
	// args are the positional arguments.
	args []string

	wait time.Duration
	json bool
}

func newLoopCancelCmd(f *Factory, runF func(*loopCancelOptions) error) *cobra.Command {
	opts := &loopCancelOptions{IO: f.IOStreams, Reader: f.Reader}
	cmd := &cobra.Command{
		Use:   "cancel RUN [--wait D] [--json]",
		Short: "Stop a running loop as Ctrl-C would: the step in flight killed, the journal kept, resumable",
		Long: `cancel sends SIGINT to the process running loop RUN of this laserbrain
home and waits for it to stop: the step in flight is killed, the journal
is left intact, the loop exits 130, and laserbrain loop --resume RUN goes
on from the last completed step. The process is the one holding the run's
lock, checked by its pid and the time it started, so a process that got a
reused pid is never signalled. A run that is not running, and a loop of
another home, are refused. It is a person's command: the gate refuses it
to an agent, as it refuses laserbrain authorize, and it refuses itself
inside a supervised agent's process tree however it was started.`,
		Example: `  laserbrain loop cancel 2f9c0a1d7e3b
  laserbrain loop cancel 2f9c0a1d7e3b --wait 2m`,
		Args:              cli.ExactArgs(1),
		ValidArgsFunction: completeLoopRuns,
		RunE:              cli.RunArgs(opts, &opts.args, runF, runLoopCancel),
	}
	cmd.Flags().DurationVar(&opts.wait, "wait", loop.DefaultCancelWait, "how long to wait for the loop to stop")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the result as JSON")
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitUsage, When: "RUN is not a run id, not a loop of this home, or not running, or this runs inside a supervised agent's tree; nothing was signalled"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the loop could not be signalled, or did not stop within --wait"})
	return cmd
}

func runLoopCancel(opts *loopCancelOptions) error {
	if err := personOnly("laserbrain loop cancel"); err != nil {
		return err
	}
	ctx := context.Background()
	st, done := fleetForLoops(opts.Reader)
	defer done()
	res, err := loop.Cancel(ctx, loop.CancelOptions{Run: opts.args[0], Wait: opts.wait, Fleet: st})
	if err != nil {
		return loopError(err)
	}
	if opts.json {
		return cli.WriteJSON(opts.IO.Out, res)
	}
	code := "its status unknown"
	if res.ExitCode != nil {
		code = fmt.Sprintf("exit %d", *res.ExitCode)
	}
	fmt.Fprintf(opts.IO.Out, "cancelled loop %s (pid %d): %s", res.Run, res.PID, code)
	if res.Reason != "" {
		fmt.Fprintf(opts.IO.Out, ", %s", res.Reason)
	}
	fmt.Fprintln(opts.IO.Out)
	if res.Resume != "" {
		fmt.Fprintf(opts.IO.Out, "resume: %s\n", res.Resume)
	}
	return nil
}

// fleetForLoops opens the fleet store, to tell a loop of another home from
// no loop at all; nil when it cannot be opened (then such a loop is
// reported as unknown here).
func fleetForLoops(reader func() *agentrun.Tracker) (fleet.Store, func()) {
	sup := reader()
	done := func() { _ = sup.Close() }
	st, err := sup.Fleet()
	if err != nil {
		done()
		return nil, func() {}
	}
	return st, done
}
