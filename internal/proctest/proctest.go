// Package proctest runs a program the way a test of a command-line program
// needs it run: what it printed and how it ended kept for the test to
// judge, and a program that could not start at all failing the test, since
// then there is no answer to judge.
package proctest

import (
	"bytes"
	"errors"
	"os/exec"
	"testing"
)

// Run runs cmd, which must have neither Stdout nor Stderr set, and returns
// what it wrote to each and its exit status (-1: a signal ended it). A
// program that could not be run fails t.
func Run(t testing.TB, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("%v: %v\nstderr: %s", cmd.Args, err, errb.String())
	}
	return out.String(), errb.String(), code
}
