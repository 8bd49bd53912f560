package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
)

// demoSteps are the reference demo's script: an agent on one goal takes a
// step onto another, is told to return, returns, and finishes.
var demoSteps = []struct {
	goal     string
	distance int
}{
	{"build the JSON parser", 6},
	{"build the JSON parser", 4},
	{"also add a caching layer and logging", 4},
	{"build the JSON parser", 2},
	{"build the JSON parser", 0},
}

type demoOptions struct {
	IO *cli.IOStreams
}

func newDemoCmd(f *Factory, runF func(*demoOptions) error) *cobra.Command {
	opts := &demoOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch a scripted agent drift off its goal, be told to return, and finish",
		Long: `demo runs five scripted checks through the instrument, in memory (nothing is
stored): an agent grounds on its goal, advances, wanders onto another goal
for one step — goal-drift, and the advice it would be given — returns, and
finishes. It is what check does, one step at a time.`,
		Example: `  laserbrain demo`,
		Args:    cli.NoArgs,
		RunE:    cli.RunWith(opts, runF, runDemo),
	}
	cli.SetExits(cmd)
	return cmd
}

func runDemo(opts *demoOptions) error {
	run := laserbrain.NewRun(laserbrain.RunOptions{ID: "demo"})
	fmt.Fprintf(opts.IO.Out, "%-38s %4s %6s  %s\n", "the agent is working on", "dist", "Φ", "verdict")
	for _, s := range demoSteps {
		v, err := run.Step(laserbrain.StepInput{Goal: s.goal, Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(s.distance)})
		if err != nil {
			return cli.Failure(err)
		}
		mark := ""
		switch {
		case s.distance == 0:
			mark = "done"
		case v.Drifting:
			mark = "DRIFT: return"
		}
		fmt.Fprintf(opts.IO.Out, "%-38s %4d %6.2f  %-12s %s\n", s.goal, s.distance, v.Phi, v.Reason, mark)
		if v.Drifting {
			fmt.Fprintf(opts.IO.Out, "%-38s %4s %6s  -> %s\n", "", "", "", v.Advice)
		}
	}
	fmt.Fprintln(opts.IO.Out, "\nOne step off its goal. Each step looked fine next to the last; measured against")
	fmt.Fprintln(opts.IO.Out, "the ground it froze at the start, it was not, and it was sent back.")
	return nil
}
