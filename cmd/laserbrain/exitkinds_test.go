package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/confine"
	"github.com/laserkit/laserkit/supercode/loop"
)

// Every kind of error the libraries return exits with the code the
// exit-code table documents for it (`laserbrain help exit-codes`, the
// README's table): the libraries name kinds, internal/cli alone chooses
// the number. Wrapping keeps the kind.
func TestErrorKindsExitWithTheirCodes(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		err  error
		want int
	}{
		{&agentrun.SpawnError{Kind: agentrun.SpawnUsage, Err: boom}, 2},
		{&agentrun.SpawnError{Kind: agentrun.SpawnSetup, Err: boom}, 125},
		{&agentrun.SpawnError{Kind: agentrun.SpawnNotRunnable, Err: boom}, 126},
		{&agentrun.SpawnError{Kind: agentrun.SpawnNotFound, Err: boom}, 127},
		{&confine.HelperError{Kind: "setup", Err: boom}, 125},
		{&confine.HelperError{Kind: "not-runnable", Err: boom}, 126},
		{&confine.HelperError{Kind: "not-found", Err: boom}, 127},
		{&loop.Error{Kind: loop.KindUsage, Err: boom}, 2},
		{&loop.Error{Kind: loop.KindConfig, Err: boom}, 7},
		{&loop.Error{Kind: loop.KindFailure, Err: boom}, 8},
		{&ponder.Error{Kind: ponder.KindUsage}, 2},
		{&ponder.Error{Kind: ponder.KindState}, 2},
		{&ponder.Error{Kind: ponder.KindOCA}, 3},
		{&ponder.Error{Kind: ponder.KindProblems}, 1},
		{&ponder.Error{Kind: ponder.KindFailure}, 8},
	}
	for _, c := range cases {
		for _, err := range []error{c.err, fmt.Errorf("context: %w", c.err)} {
			if got := int(cli.CodeOf(err)); got != c.want {
				t.Errorf("%T %v: exit %d, want %d", c.err, err, got, c.want)
			}
		}
	}
	if got := cli.CodeOf(runError(&agentrun.RunError{ID: "r1"}, flagRunWords)); got != cli.ExitUsage {
		t.Errorf("a check on a run that does not exist: exit %d, want 2", got)
	}
}
