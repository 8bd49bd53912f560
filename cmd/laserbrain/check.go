package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/backend"
)

type checkOptions struct {
	goal, progress, distance, parentGoal string
	doing, next, blocked                 string
	userTurn                             bool
	run                                  string
	json                                 bool
	stream                               bool
}

func newCheckCmd(streams *cli.IOStreams) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check --goal GOAL [--progress P] [--distance N] [--run ID] | check --stream",
		Short: "Check one spelled state against its run's ground (or a stream of them)",
		Long: `check measures one state (goal, progress, distance) against the run's frozen
ground and prints the verdict. Without --run it starts a new run and prints
its id; pass --run ID to continue that run (runs live in $LASERBRAIN_HOME,
else in the user config directory).

Exit status: 0 not drifting, 1 drifting, 2 bad input.

With --stream, check reads one JSON object per line from standard input,
{"goal", "progress", "distance", "parent_goal", "user_turn", "doing", "next",
"blocked", "run"} (all optional: progress defaults to advancing, distance to 5,
and a null distance means unknown), and writes one JSON verdict per line, in
order, as each line is read. A line that is not such an object gets
{"error", "line"} on its output line and the stream goes on. Lines without
"run" continue the --run run, or one new run for the whole stream. Blank
lines are skipped. The stream holds each run it touches until it ends (a
check on the same run elsewhere waits), and saves runs and contexts every
second and at the end. Exit status: 0, or 2 if any line was bad.`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.stream {
				return runCheckStream(cmd, opts, streams)
			}
			return runCheck(cmd, opts, streams)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.goal, "goal", "", "the one goal of the run, as the agent states it now")
	f.StringVar(&opts.progress, "progress", laserbrain.ProgressAdvancing, "advancing, stuck or circling")
	f.StringVar(&opts.distance, "distance", "5", "how far from done, 0 (done) to 10")
	f.StringVar(&opts.parentGoal, "parent-goal", "", "the goal this one serves, when on a sub-task")
	f.BoolVar(&opts.userTurn, "user-turn", false, "the user spoke since the last check (a new goal is then a new instruction)")
	f.StringVar(&opts.doing, "doing", "", "what this step does (read for cause-claims and observations)")
	f.StringVar(&opts.next, "next", "", "the single next action")
	f.StringVar(&opts.blocked, "blocked", "", "what blocks you")
	f.StringVar(&opts.run, "run", "", "continue this run (default: start a new one)")
	f.BoolVar(&opts.json, "json", false, "print the verdict as JSON")
	f.BoolVar(&opts.stream, "stream", false, "read JSON lines from standard input, write one JSON verdict per line")
	return cmd
}

// openStore opens laserbrain's run store on the backend LASERBRAIN_STORE
// names (the local home by default).
func openStore() (laserbrain.Store, error) {
	cfg, err := backend.FromEnv()
	if err != nil {
		return nil, err
	}
	return backend.OpenRuns(cfg)
}

func runCheck(cmd *cobra.Command, opts *checkOptions, streams *cli.IOStreams) error {
	if !cmd.Flags().Changed("goal") {
		return cli.Usagef("--goal is required (an empty goal is allowed, and is ungrammatical)")
	}
	d, ok := laserbrain.DistanceFromString(opts.distance)
	if !ok {
		return cli.Usagef("--distance %q is not a number (0 to 10)", opts.distance)
	}
	id := opts.run
	if id == "" {
		id = laserbrain.NewRunID()
	} else if err := laserbrain.ValidateRunID(id); err != nil {
		return cli.Usagef("--run: %v", err)
	}
	store, err := openStore()
	if err != nil {
		return cli.Exit(usageExit, err)
	}
	ctx := context.Background()
	h, err := store.OpenRun(ctx, id)
	if err != nil {
		return cli.Exit(usageExit, err)
	}
	defer h.Close()
	v, err := h.Run().Step(laserbrain.StepInput{
		Goal: opts.goal, Progress: opts.progress, Distance: d, ParentGoal: opts.parentGoal, UserTurn: opts.userTurn,
		Doing: opts.doing, Next: opts.next, Blocked: opts.blocked,
	})
	if err == nil {
		err = h.Save(ctx)
	}
	if err == nil {
		err = store.Close()
	}
	if err != nil {
		return cli.Exit(usageExit, fmt.Errorf("run %s not saved: %w", id, err))
	}
	if opts.json {
		if err := writeJSONLine(streams.Out, v); err != nil {
			return cli.Exit(usageExit, err)
		}
	} else {
		writeVerdict(streams.Out, v, h.Created())
	}
	if v.Drifting {
		return cli.SilentExit(1)
	}
	return nil
}

func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeJSONIndented prints v as indented JSON, with <, > and & left as they
// are: commands are full of them.
func writeJSONIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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
