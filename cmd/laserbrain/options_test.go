package main

import (
	"bytes"
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

// parse runs a command built with runF on args, and returns the error the
// command returned: what it parsed is what runF was handed.
func parse(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	var out bytes.Buffer
	streams := &cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
	_, err := cli.Execute(cmd, args, streams)
	return err
}

func testFactory() *Factory {
	var out bytes.Buffer
	return newFactory(&cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out})
}

// The options each command's flags set, as its help describes them.
func TestCheckOptions(t *testing.T) {
	var got *checkOptions
	capture := func(o *checkOptions) error { got = o; return nil }

	t.Setenv("LASERBRAIN_RUN", "agent-run-7")
	if err := parse(t, newCheckCmd(testFactory(), capture), "--goal", "ship it", "--distance", "3", "--progress", "stuck"); err != nil {
		t.Fatal(err)
	}
	if got.run != "agent-run-7" || !got.runFromEnv || got.runSource() != "LASERBRAIN_RUN" {
		t.Errorf("without --run, under LASERBRAIN_RUN: run %q from env %v (%s); want agent-run-7 from LASERBRAIN_RUN", got.run, got.runFromEnv, got.runSource())
	}
	if got.goal != "ship it" || got.distance != "3" || got.progress != "stuck" || !got.goalSet {
		t.Errorf("the state: %+v", got)
	}

	if err := parse(t, newCheckCmd(testFactory(), capture), "--new-run", "--goal", ""); err != nil {
		t.Fatal(err)
	}
	if got.run != "" || got.runFromEnv || !got.newRun || !got.goalSet {
		t.Errorf("--new-run ignores LASERBRAIN_RUN, and an empty --goal is given: %+v", got)
	}

	if err := parse(t, newCheckCmd(testFactory(), capture), "--stream", "--run", "r1", "--doing", "x", "--goal", "g"); err != nil {
		t.Fatal(err)
	}
	if !got.stream || got.run != "r1" || got.runFromEnv || !slices.Equal(got.stateFlags, []string{"goal", "doing"}) {
		t.Errorf("--stream --run r1 with two state flags: stream %v run %q state flags %q", got.stream, got.run, got.stateFlags)
	}
	if err := runCheckStream(got); cli.CodeOf(err) != cli.ExitUsage || err.Error() != "--goal cannot be used with --stream: each line carries its own state" {
		t.Errorf("a stream given a state flag: %v (exit %d)", err, cli.CodeOf(err))
	}
}

func TestRunOptions(t *testing.T) {
	var got *runOptions
	capture := func(o *runOptions) error { got = o; return nil }
	err := parse(t, newRunCmd(testFactory(), capture),
		"--agent", "reviewer", "--max-tool-calls", "7", "--coverage-floor", "0.5", "--", "claude", "-p", "--agent", "x")
	if err != nil {
		t.Fatal(err)
	}
	if got.agent != "reviewer" || got.limits.MaxToolCalls != 7 || !got.dashed {
		t.Errorf("run's own flags: agent %q, max tool calls %d, dashed %v", got.agent, got.limits.MaxToolCalls, got.dashed)
	}
	if !slices.Equal(got.command, []string{"claude", "-p", "--agent", "x"}) {
		t.Errorf("the agent's command keeps its own flags: %q", got.command)
	}
	if !slices.Equal(got.coverageSet, []string{"coverage-floor"}) || got.floor != "0.5" {
		t.Errorf("coverage flags given: %q (floor %q)", got.coverageSet, got.floor)
	}

	// Flags stop at the first word that is not one (SetInterspersed), so a
	// command given without -- is read as the command, and refused.
	if err := parse(t, newRunCmd(testFactory(), capture), "claude", "--agent", "x"); err != nil {
		t.Fatal(err)
	}
	if got.dashed || got.agent != "" || !slices.Equal(got.command, []string{"claude", "--agent", "x"}) {
		t.Errorf("without --: dashed %v, agent %q, command %q", got.dashed, got.agent, got.command)
	}
	if err := runRun(got); cli.CodeOf(err) != cli.ExitUsage {
		t.Errorf("a command without --: %v, want a usage error", err)
	}
}

func TestRunsOptions(t *testing.T) {
	var got *runsOptions
	capture := func(o *runsOptions) error { got = o; return nil }
	if err := parse(t, newRunsCmd(testFactory(), capture), "--all", "--json"); err != nil {
		t.Fatal(err)
	}
	if !got.all || !got.json || got.fleetDir != "" {
		t.Errorf("--all --json: %+v", got)
	}
}
