package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator/method"
)

type shelfOptions struct {
	IO *cli.IOStreams
	// args are the positional arguments.
	args []string

	kind   string
	top    int
	asJSON bool
	local  string
}

// newShelfCmd is the reference's `laserbrain store list|find|vend` (the
// methods and team presets an agent can be handed). Here `store` is where
// runs are kept, so the shelf has its own name; the MCP tools keep the
// reference's (store_list, store_find, store_vend) and read the same shelf.
func newShelfCmd(f *Factory, runF func(*shelfOptions) error) *cobra.Command {
	opts := &shelfOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "shelf [list | find TASK | vend NAME] [--kind workflow|team]",
		Short: "The methods and team presets an agent can be handed: list, find for a task, vend one",
		Long: `shelf lists the workflow methods laserbrain ships and your own — NAME.json
files in ~/.laserbrain/workflows (--local DIR for another directory), a file
there shadowing a shipped method of its name — or, with --kind team, the
recursion-team presets. find ranks them for a task in your words (0.7 × its
overlap with a method's goal + 0.3 × with its steps' goals and names), best
first, --top of them; vend prints one spec, as stored. Nothing on the shelf
runs. The MCP server's store_list, store_find and store_vend read the same
shelf.`,
		Example: `  laserbrain shelf
  laserbrain shelf find "publish a release to PyPI"
  laserbrain shelf vend full-release
  laserbrain shelf find "debate toward an answer" --kind team --json`,
		Args: cli.RangeArgs(0, 2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return []string{"list", "find", "vend"}, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: cli.RunArgs(opts, &opts.args, runF, runShelf),
	}
	cmd.Flags().StringVar(&opts.kind, "kind", "workflow", "workflow or team")
	cmd.Flags().IntVar(&opts.top, "top", 3, "find: how many matches")
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print JSON: {\"kind\", \"names\"}, {\"kind\", \"matches\"} or {\"kind\", \"spec\"}")
	cmd.Flags().StringVar(&opts.local, "local", "", "your methods' directory (default ~/.laserbrain/workflows)")
	cli.CompleteFlag(cmd, "kind", cli.Values("workflow", "team"))
	cli.CompleteFlag(cmd, "local", cli.Dirs)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "an unknown action or --kind, find without a task, vend without a name or of a name the shelf does not hold"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "a method file on the shelf could not be read"})
	return cmd
}

func runShelf(opts *shelfOptions) error {
	action, query := "list", ""
	if len(opts.args) > 0 {
		action = opts.args[0]
	}
	if len(opts.args) > 1 {
		query = opts.args[1]
	}
	return shelf(opts.IO, opts, action, query)
}

func shelf(streams *cli.IOStreams, opts *shelfOptions, action, query string) error {
	if opts.kind != "workflow" && opts.kind != "team" {
		return cli.Usagef("--kind %q: workflow or team", opts.kind)
	}
	if opts.top < 0 {
		return cli.Usagef("--top %d: give a number of matches", opts.top)
	}
	sh := method.Shelf{Local: opts.local}
	if sh.Local == "" {
		if home, err := os.UserHomeDir(); err == nil {
			sh.Local = method.LocalDir(home)
		}
	}
	out := func(v any, text func()) error {
		if opts.asJSON {
			return cli.WriteJSON(streams.Out, v)
		}
		text()
		return nil
	}
	query = strings.TrimSpace(query)
	switch action {
	case "list":
		if query != "" {
			return cli.Usagef("list takes no argument (find TASK, vend NAME)")
		}
		names := laserbrain.Presets()
		sort.Strings(names)
		if opts.kind == "workflow" {
			var err error
			if names, err = sh.Names(); err != nil {
				return cli.Failure(err)
			}
		}
		return out(map[string]any{"kind": opts.kind, "names": names}, func() {
			for _, n := range names {
				fmt.Fprintln(streams.Out, n)
			}
		})
	case "find":
		if query == "" {
			return cli.Usagef("find needs a task, in words, to match against")
		}
		if opts.kind == "team" {
			rows := laserbrain.FindTeams(query)
			rows = rows[:min(opts.top, len(rows))]
			return out(map[string]any{"kind": "team", "matches": rows}, func() {
				for _, r := range rows {
					fmt.Fprintf(streams.Out, "%-26s %.3f  %s (roles: %s)\n", r.Name, r.Score, r.Task, strings.Join(r.Roles, ", "))
				}
			})
		}
		rows, err := sh.Find(query)
		if err != nil {
			return cli.Failure(err)
		}
		rows = rows[:min(opts.top, len(rows))]
		return out(map[string]any{"kind": "workflow", "matches": rows}, func() {
			for _, r := range rows {
				var goal string
				_ = json.Unmarshal(r.Goal, &goal)
				where := ""
				if !r.Shipped {
					where = "  (yours)"
				}
				fmt.Fprintf(streams.Out, "%-18s %.3f  %s%s\n", r.Name, r.Score, goal, where)
			}
		})
	case "vend":
		if query == "" {
			return cli.Usagef("vend needs a name: see shelf list or shelf find")
		}
		var spec any
		if opts.kind == "team" {
			p, err := laserbrain.VendTeam(query)
			if err != nil {
				return cli.Usagef("%v", err)
			}
			spec = p
		} else {
			raw, err := sh.Vend(query)
			var ns *method.NotShelvedError
			if errors.As(err, &ns) {
				return cli.Usagef("%v", err)
			}
			if err != nil {
				return cli.Failure(err)
			}
			spec = raw
		}
		if opts.asJSON {
			return cli.WriteJSON(streams.Out, map[string]any{"kind": opts.kind, "spec": spec})
		}
		return cli.WriteJSON(streams.Out, spec)
	}
	return cli.Usagef("unknown action %q: list, find TASK or vend NAME", action)
}
