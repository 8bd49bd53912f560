package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestCodeMapping(t *testing.T) {
	root := &cobra.Command{Use: "tool"}
	sub := &cobra.Command{Use: "sub", Run: func(*cobra.Command, []string) {}}
	root.AddCommand(sub)
	cases := []struct {
		err      error
		want     exitCode
		wantText string
	}{
		{nil, 0, ""},
		{Exitf(3, "database down"), 3, "tool: database down\n"},
		{fmt.Errorf("wrapped: %w", Exit(4, errors.New("x"))), 4, "tool: wrapped: x\n"},
		{SilentExit(1), 1, ""},
		{Usagef("missing --slug"), 2, "tool: missing --slug\nRun 'tool sub --help' for usage.\n"},
		{errors.New(`unknown command "x" for "tool"`), 2, "tool: unknown command \"x\" for \"tool\"\nRun 'tool sub --help' for usage.\n"},
		{errors.New("line one\nline two"), 8, "tool: line one; line two\n"},
		{FileError(fmt.Errorf("open x: %w", errors.New("disk on fire"))), 8, "tool: open x: disk on fire\n"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		if got := Code(sub, c.err, &buf); got != c.want || buf.String() != c.wantText {
			t.Errorf("Code(%v) = %d, %q; want %d, %q", c.err, got, buf.String(), c.want, c.wantText)
		}
	}
}

func newTestRoot() *cobra.Command {
	root := &cobra.Command{Use: "tool", Args: NoArgs, RunE: func(*cobra.Command, []string) error { return nil }}
	one := &cobra.Command{Use: "one", Args: ExactArgs(1), RunE: func(*cobra.Command, []string) error { return nil }}
	one.Flags().String("goal", "", "")
	one.Flags().Bool("json", false, "")
	root.AddCommand(one)
	loop := &cobra.Command{Use: "loop SCRIPT", Args: ArbitraryArgs, RunE: func(*cobra.Command, []string) error { return nil }}
	loop.Flags().Int("max-iters", 0, "")
	loop.AddCommand(&cobra.Command{Use: "cancel", Args: NoArgs, RunE: func(*cobra.Command, []string) error { return nil }})
	root.AddCommand(loop)
	group := &cobra.Command{Use: "vectors", Args: NoArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	group.AddCommand(&cobra.Command{Use: "check", RunE: func(*cobra.Command, []string) error { return nil }})
	root.AddCommand(group)
	return root
}

func run(args string) (int, string, string) {
	var out, errOut bytes.Buffer
	streams := &IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}
	code, _ := Run(newTestRoot(), strings.Fields(args), streams)
	return code, out.String(), errOut.String()
}

func TestRunMapsFlagAndArgErrorsToUsage(t *testing.T) {
	for args, want := range map[string]int{"": 0, "--nope": 2, "one": 2, "one a": 0, "one a b": 2, "stray": 2, "vectors chek": 2,
		"one --goal --json a": 2, "one --goal=x a": 0, "one --goal -x a": 0, "loop x.sh --max-iters 3": 0} {
		if got, _, stderr := run(args); got != want {
			t.Errorf("tool %s: exit %d, want %d (stderr %q)", args, got, want, stderr)
		}
	}
}

// Mistyped commands and flags get cobra's suggestions (or the closest
// flags) and a pointer to the help of the command the mistake was made in.
func TestSuggestions(t *testing.T) {
	cases := map[string][]string{
		"oen --goal x":   {`unknown command "oen" for "tool" — did you mean "one"?`, "Run 'tool --help' for usage."},
		"one a --gaol x": {`unknown flag --gaol for "tool one" — did you mean --goal?`, "Run 'tool one --help' for usage."},
		"vectors chek":   {`unknown command "chek" for "tool vectors" — did you mean "check"?`, "Run 'tool vectors --help' for usage."},
		// A command with subcommands that takes a word of its own: the
		// word is its argument, the flag is the mistake.
		"loop x.sh --max-iter 3": {`unknown flag --max-iter for "tool loop" — did you mean --max-iters?`, "Run 'tool loop --help' for usage."},
		"loop cancle --now":      {`unknown command "cancle" for "tool loop" — did you mean "cancel"?`},
		// A flag's value forgotten: the next flag is named, not the word
		// left over.
		"one --goal --json a": {`--goal needs a value, and got the flag --json instead: give --goal VALUE`, "Run 'tool one --help' for usage."},
	}
	for args, want := range cases {
		_, _, stderr := run(args)
		for _, w := range want {
			if !strings.Contains(stderr, w) {
				t.Errorf("tool %s: stderr %q lacks %q", args, stderr, w)
			}
		}
	}
}

func TestEnvelopeUnderJSON(t *testing.T) {
	code, stdout, _ := run("one a b --json")
	want := "{\n  \"error\": {\n    \"code\": 2,\n    \"kind\": \"usage\",\n    \"message\": \"accepts 1 arg(s), received 2\"\n  }\n}\n"
	if code != 2 || stdout != want {
		t.Errorf("exit %d, stdout %q; want 2, %q", code, stdout, want)
	}
	if _, stdout, _ := run("one a b"); stdout != "" {
		t.Errorf("without --json stdout is %q", stdout)
	}
}

// The table holds each code once per scope, and every scoped code names
// commands that exist in some binary's path form.
func TestExitCodeTable(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range ExitCodes {
		key := fmt.Sprint(e.Code, e.Scope)
		if seen[key] {
			t.Errorf("code %d twice for scope %q", e.Code, e.Scope)
		}
		seen[key] = true
		if e.Name == "" || e.Meaning == "" {
			t.Errorf("code %d has no name or meaning", e.Code)
		}
	}
	for code, want := range map[exitCode]string{0: "ok", 1: "finding", 2: "usage", 8: "failure", 130: "signal"} {
		if got := ExitName(code, "laserbrain check"); got != want {
			t.Errorf("ExitName(%d) = %q, want %q", code, got, want)
		}
	}
	if got := ExitName(3, "ponder start"); got != "ocaRequired" {
		t.Errorf("ponder's 3 is %q", got)
	}
	if got := ExitName(3, "laserbrain loop"); got != "escalated" {
		t.Errorf("the loop's 3 is %q", got)
	}
	if got := ExitName(2, "laserbrain hook pre-tool-use"); got != "deny" {
		t.Errorf("the gate's 2 is %q", got)
	}
}

// kindError is a library's typed error, as the table sees one.
type kindError string

func (k kindError) Error() string    { return "a " + string(k) + " failure" }
func (k kindError) ExitKind() string { return string(k) }

// A typed error's kind chooses its code from the table; usage kinds print
// the help's pointer as any usage mistake does; a kind the table lacks is a
// failure.
func TestKindsTakeTheTablesCodes(t *testing.T) {
	root := &cobra.Command{Use: "tool"}
	for kind, want := range map[string]exitCode{
		"usage": 2, "stateError": 2, "finding": 1, "problems": 1, "ocaRequired": 3, "escalated": 3,
		"exhausted": 4, "transport": 5, "malformed": 6, "config": 7, "failure": 8,
		"setup": 125, "not-runnable": 126, "refused": 126, "not-found": 127, "no-such-kind": 8,
	} {
		err := fmt.Errorf("wrapped: %w", kindError(kind))
		var buf bytes.Buffer
		if got := Code(root, err, &buf); got != want || CodeOf(err) != want {
			t.Errorf("kind %q: Code %d, CodeOf %d; want %d", kind, got, CodeOf(err), want)
		}
		if usage := strings.Contains(buf.String(), "--help"); usage != (want == ExitUsage) {
			t.Errorf("kind %q: the help's pointer printed %v: %q", kind, usage, buf.String())
		}
	}
}

// TestFinish runs this test binary again as a program that ends through
// Finish, and reads the status and the stderr a real process gets.
func TestFinish(t *testing.T) {
	if give := os.Getenv("CLI_FINISH"); give != "" {
		switch give {
		case "nil":
			Finish("prog", nil)
		case "usage":
			Finish("prog", Usagef("usage: prog IN OUT"))
		default:
			Finish("prog", errors.New(give))
		}
	}
	cases := []struct {
		give, stderr string
		code         int
	}{
		{"nil", "", 0},
		{"usage", "prog: usage: prog IN OUT\n", 2},
		{"disk on fire\nand more", "prog: disk on fire; and more\n", 8},
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFinish$")
		cmd.Env = append(os.Environ(), "CLI_FINISH="+c.give)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || stderr.String() != c.stderr {
			t.Errorf("Finish(%q): status %d, stderr %q; want %d, %q", c.give, code, stderr.String(), c.code, c.stderr)
		}
	}
}

// RunWith and RunArgs run the test's function when one is given (with the
// arguments kept), else the command's own.
func TestRunWith(t *testing.T) {
	type options struct{ args []string }
	var ran []string
	run := func(o *options) error { ran = append(ran, "run "+strings.Join(o.args, ",")); return nil }
	test := func(o *options) error { ran = append(ran, "test "+strings.Join(o.args, ",")); return nil }
	for _, runF := range []func(*options) error{nil, test} {
		o := &options{}
		if err := RunWith(o, runF, run)(nil, []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if err := RunArgs(o, &o.args, runF, run)(nil, []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"run ", "run a,b", "test ", "test a,b"}
	if !slices.Equal(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}
}
