package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestCodeMapping(t *testing.T) {
	cases := []struct {
		err      error
		usage    int
		want     int
		wantText string
	}{
		{nil, 2, 0, ""},
		{Exitf(3, "database down"), 2, 3, "tool: database down\n"},
		{fmt.Errorf("wrapped: %w", Exit(4, errors.New("x"))), 2, 4, "tool: wrapped: x\n"},
		{SilentExit(1), 2, 1, ""},
		{Usagef("missing --slug"), 1, 1, "tool: missing --slug\nRun 'tool --help' for usage.\n"},
		{errors.New(`unknown command "x" for "tool"`), 2, 2, "tool: unknown command \"x\" for \"tool\"\nRun 'tool --help' for usage.\n"},
		{errors.New("line one\nline two"), 2, 1, "tool: line one; line two\n"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		if got := Code("tool", c.err, &buf, c.usage); got != c.want || buf.String() != c.wantText {
			t.Errorf("Code(%v) = %d, %q; want %d, %q", c.err, got, buf.String(), c.want, c.wantText)
		}
	}
}

func TestRunMapsFlagAndArgErrorsToUsage(t *testing.T) {
	newRoot := func() *cobra.Command {
		root := &cobra.Command{Use: "tool", Args: NoArgs, RunE: func(*cobra.Command, []string) error { return nil }}
		root.AddCommand(&cobra.Command{Use: "one", Args: ExactArgs(1), RunE: func(*cobra.Command, []string) error { return nil }})
		return root
	}
	for args, want := range map[string]int{"": 0, "--nope": 5, "one": 5, "one a": 0, "one a b": 5, "stray": 5} {
		var out, errOut bytes.Buffer
		streams := &IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}
		if got := Run(newRoot(), strings.Fields(args), streams, 5); got != want {
			t.Errorf("tool %s: exit %d, want %d (stderr %q)", args, got, want, errOut.String())
		}
	}
}
