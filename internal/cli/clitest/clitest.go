package clitest

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

// LogEnv names the file the binaries under test append "PATH\tCODE" to.
const LogEnv = "LASERKIT_EXIT_LOG"

// Record appends the command that ran and its exit code to $LASERKIT_EXIT_LOG
// (a test binary acting as laserbrain or ponder calls it before exiting).
func Record(cmd *cobra.Command, code int) {
	path := os.Getenv(LogEnv)
	if path == "" || cmd == nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	// One write, under PIPE_BUF: processes running at once do not interleave.
	_, _ = fmt.Fprintf(f, "%s\t%d\n", cmd.CommandPath(), code)
}

// Walk calls fn for root and every command below it, cobra's hidden
// __complete commands excepted.
func Walk(root *cobra.Command, fn func(*cobra.Command)) {
	fn(root)
	for _, c := range root.Commands() {
		if strings.HasPrefix(c.Name(), "__") {
			continue
		}
		Walk(c, fn)
	}
}

// CheckExits reads the log the testscripts wrote and holds the tree to
// it: every code a command returned is one it documents, and every code a
// command documents was seen, except those unobserved lists with the reason
// no script provokes it ("PATH CODE" → reason), failures (8: a store or the
// file system failing), signals and pass-through statuses.
func CheckExits(t *testing.T, root *cobra.Command, logPath string, unobserved map[string]string) {
	t.Helper()
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatalf("no exit log: %v", err)
	}
	defer func() { _ = f.Close() }()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		path, code, ok := strings.Cut(sc.Text(), "\t")
		n, err := strconv.Atoi(code)
		if !ok || err != nil {
			t.Errorf("exit log line %q", sc.Text())
			continue
		}
		seen[path+" "+code] = true
		cmd, _, err := root.Find(strings.Fields(path)[1:])
		if err != nil || cmd.CommandPath() != path {
			continue // cobra's hidden commands
		}
		if !cli.Documents(cmd, n) {
			t.Errorf("%s exited %d, which its help does not document", path, n)
		}
	}
	var missing []string
	Walk(root, func(c *cobra.Command) {
		docs := cli.Exits(c)
		if docs == nil {
			t.Errorf("%s documents no exit codes (cli.SetExits)", c.CommandPath())
			return
		}
		for _, d := range docs {
			key := c.CommandPath() + " " + strconv.Itoa(int(d.Code))
			if cli.ExitName(d.Code, c.CommandPath()) == "" && d.Code != cli.ExitPassThrough {
				t.Errorf("%s documents %d, which the exit-code table lacks", c.CommandPath(), d.Code)
			}
			switch {
			case seen[key], d.Code == cli.ExitFailure, d.Code == cli.ExitSignal, d.Code == cli.ExitPassThrough:
			case unobserved[key] != "":
				delete(unobserved, key)
			default:
				missing = append(missing, key)
			}
		}
	})
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("%s: documented, but no testscript saw it (provoke it, or list why not)", m)
	}
	for k := range unobserved {
		t.Errorf("%s: listed as unobserved, but it is not documented or was seen: drop it from the list", k)
	}
}

// CheckHelp holds every command's help to the house style: examples,
// a long help that says more than the one-liner, and the root's commands
// in groups.
func CheckHelp(t *testing.T, root *cobra.Command) {
	t.Helper()
	Walk(root, func(c *cobra.Command) {
		if c.Hidden || !c.IsAvailableCommand() && c != root {
			return
		}
		cobraOwn := c.Name() == "help" || c.Name() == "completion" || c.HasParent() && c.Parent().Name() == "completion"
		if !cobraOwn && strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		}
		if !cobraOwn && c.Long == "" {
			t.Errorf("%s has no long help", c.CommandPath())
		}
		if !cobraOwn && c.Long != "" && strings.HasPrefix(norm(c.Long), norm(c.Short)) {
			t.Errorf("%s: the long help starts by repeating the short one", c.CommandPath())
		}
		if c.HasParent() && !c.Parent().HasParent() && c.GroupID == "" {
			t.Errorf("%s is in no group of the root help", c.CommandPath())
		}
	})
}

func norm(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.TrimRight(s, ".")), " "))
}

// Prepared is a command tree as it runs (cobra's help and completion
// commands included): newRoot's tree on streams of its own, after --help.
func Prepared(t *testing.T, newRoot func(*cli.IOStreams) *cobra.Command) *cobra.Command {
	t.Helper()
	var out bytes.Buffer
	streams := &cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
	root := newRoot(streams)
	if _, err := cli.Execute(root, []string{"--help"}, streams); err != nil {
		t.Fatal(err)
	}
	return root
}

// JSONAt walks a decoded JSON document along a dotted path: a.b.0.c ("."
// is the document itself). A step into an array is an index, or KEY=VALUE
// for the first element whose KEY is the string VALUE.
func JSONAt(doc any, path string) (any, bool) {
	v := doc
	for _, seg := range strings.Split(strings.Trim(path, "."), ".") {
		if seg == "" {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[seg]; !ok {
				return nil, false
			}
		case []any:
			if k, val, sel := strings.Cut(seg, "="); sel {
				i := slices.IndexFunc(x, func(el any) bool {
					m, ok := el.(map[string]any)
					return ok && m[k] == val
				})
				if i < 0 {
					return nil, false
				}
				v = x[i]
				continue
			}
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// SameKeys compares an object's keys with want, in any order: both sorted
// and space-joined, for a message, and whether they are the same.
func SameKeys(obj map[string]any, want []string) (got, wanted string, same bool) {
	keys := slices.Sorted(maps.Keys(obj))
	w := slices.Sorted(slices.Values(want))
	got, wanted = strings.Join(keys, " "), strings.Join(w, " ")
	return got, wanted, got == wanted
}
