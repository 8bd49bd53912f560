package main

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/laserkit/laserkit/internal/cli"
)

// describeCmd writes down everything a user or a script meets of cmd and its
// subcommands: path, texts, annotations (the exit codes), every flag it
// takes (its own, persistent and inherited) with its type, default and
// help.
func describeCmd(b *strings.Builder, cmd *cobra.Command) {
	fmt.Fprintf(b, "== %s\nuse=%q short=%q\nlong=%q\nexample=%q args=%v hidden=%v group=%q\n",
		cmd.CommandPath(), cmd.Use, cmd.Short, cmd.Long, cmd.Example, cmd.Args != nil, cmd.Hidden, cmd.GroupID)
	keys := make([]string, 0, len(cmd.Annotations))
	for k := range cmd.Annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "annotation %s=%q\n", k, cmd.Annotations[k])
	}
	for _, set := range []struct {
		name  string
		flags *pflag.FlagSet
	}{{"local", cmd.LocalFlags()}, {"persistent", cmd.PersistentFlags()}, {"inherited", cmd.InheritedFlags()}} {
		set.flags.VisitAll(func(f *pflag.Flag) {
			fmt.Fprintf(b, "%s flag --%s -%s %s default=%q hidden=%v usage=%q\n", set.name, f.Name, f.Shorthand, f.Value.Type(), f.DefValue, f.Hidden, f.Usage)
		})
	}
	for _, sub := range cmd.Commands() {
		describeCmd(b, sub)
	}
}

// prepared is the tree for args as cli.Run runs it (cobra's help and
// completion commands made, the exit codes set), without running it.
func prepared(t *testing.T, args []string) *cobra.Command {
	t.Helper()
	var out bytes.Buffer
	streams := &cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
	root := newRootCmdFor(newFactory(streams), args)
	// --help runs nothing but the help, after the tree is prepared.
	if _, err := cli.Execute(root, []string{"--help"}, streams); err != nil {
		t.Fatal(err)
	}
	return root
}

func sub(t *testing.T, root *cobra.Command, name string) *cobra.Command {
	t.Helper()
	for _, c := range root.Commands() {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("%s has no command %q", root.Name(), name)
	return nil
}

// TestFastTreeAgreesWithWholeTree: the tree a hook call and --version are
// built (newRootCmdFor) holds the same root and, for a hook, the same hook
// command, subcommands and flags as the whole tree help and completion
// list; and the table the tree is built from names each command by the
// name it answers to.
func TestFastTreeAgreesWithWholeTree(t *testing.T) {
	whole := prepared(t, nil)

	// The table: each entry builds the command it names, and the whole
	// tree is the table's commands (plus cli's: version, exit-codes, help,
	// completion).
	var names []string
	for _, c := range commands {
		if got := c.build(newFactory(cli.System())).Name(); got != c.name {
			t.Errorf("commands: the entry %q builds %q", c.name, got)
		}
		names = append(names, c.name)
	}
	var inTree []string
	for _, c := range whole.Commands() {
		switch c.Name() {
		case "version", "exit-codes", "help", "completion":
			continue
		}
		inTree = append(inTree, c.Name())
	}
	sort.Strings(names)
	sort.Strings(inTree)
	if strings.Join(names, " ") != strings.Join(inTree, " ") {
		t.Errorf("the whole tree's commands\n  %v\nare not the table's\n  %v", inTree, names)
	}

	for _, args := range [][]string{{"hook", "pre-tool-use"}, {"hook", "post-tool-use", "--client", "codex"}, {"hook"}, {"--version"}, {"-V"}} {
		only, fast := fastCommand(args)
		if !fast {
			t.Fatalf("%q: not a fast call", args)
		}
		root := prepared(t, args)
		// The root itself: its texts and flags (--version), not its
		// command list.
		var got, want strings.Builder
		for _, r := range []struct {
			b *strings.Builder
			c *cobra.Command
		}{{&got, root}, {&want, whole}} {
			fmt.Fprintf(r.b, "use=%q short=%q long=%q example=%q\n", r.c.Use, r.c.Short, r.c.Long, r.c.Example)
			r.c.Flags().VisitAll(func(f *pflag.Flag) {
				fmt.Fprintf(r.b, "flag --%s -%s %s default=%q usage=%q\n", f.Name, f.Shorthand, f.Value.Type(), f.DefValue, f.Usage)
			})
		}
		if got.String() != want.String() {
			t.Errorf("%q: the fast root\n%s\nthe whole tree's root\n%s", args, got.String(), want.String())
		}
		for _, name := range []string{only, "version"} {
			if name == "" {
				continue
			}
			var g, w strings.Builder
			describeCmd(&g, sub(t, root, name))
			describeCmd(&w, sub(t, whole, name))
			if g.String() != w.String() {
				t.Errorf("%q: %s in the fast tree\n%s\nin the whole tree\n%s", args, name, g.String(), w.String())
			}
		}
		if name := "check"; len(root.Commands()) > 0 && hasSub(root, name) {
			t.Errorf("%q: the fast tree built %s too", args, name)
		}
	}

	// Everything else is the whole tree.
	for _, args := range [][]string{nil, {"--help"}, {"help", "hook"}, {"__complete", ""}, {"completion", "bash"}, {"--version", "x"}, {"version"}, {"check"}, {"-V", "--help"}} {
		if _, fast := fastCommand(args); fast {
			t.Errorf("%q: a fast call; want the whole tree", args)
		}
	}
}

func hasSub(root *cobra.Command, name string) bool {
	for _, c := range root.Commands() {
		if c.Name() == name {
			return true
		}
	}
	return false
}

// TestCompletionListsEveryCommand: completion, run as a shell runs it,
// offers every command of the table a person may type (a hidden one,
// the run's own, is not offered).
func TestCompletionListsEveryCommand(t *testing.T) {
	whole := prepared(t, nil)
	var out, errOut bytes.Buffer
	streams := &cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}
	if code := run([]string{"__complete", ""}, streams); code != 0 {
		t.Fatalf("__complete: exit %d\n%s", code, errOut.String())
	}
	offered := map[string]bool{}
	for _, line := range strings.Split(out.String(), "\n") {
		name, _, _ := strings.Cut(line, "\t")
		offered[name] = true
	}
	if offered["ponder"] {
		t.Errorf("completion offers the hidden ponder command:\n%s", out.String())
	}
	for _, c := range commands {
		if !offered[c.name] && !sub(t, whole, c.name).Hidden {
			t.Errorf("completion does not offer %q:\n%s", c.name, out.String())
		}
	}
}
