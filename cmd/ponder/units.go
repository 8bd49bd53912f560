package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/ponder"
)

type unitsOptions struct {
	// App is what every ponder command shares.
	App *app

	scan        string
	from        string
	strictScope bool
	list        bool
}

func newUnitsCmd(a *app, runF func(*unitsOptions) error) *cobra.Command {
	o := &unitsOptions{App: a}
	cmd := &cobra.Command{
		Use:   "units (--scan <dir> [--strict-scope] | --from FILE|- [--scan <dir> [--strict-scope]] | --list)",
		Short: "Seed the session's inventory of units, once; or list it",
		Long: `units seeds units.json and appends one unit-seed record per unit. The scope
is what is on disk under --scan <dir>: inside a git work tree every file git
does not ignore, tracked or not (git ls-files --cached --others
--exclude-standard), else a walk of the directory (skipping .git, .ponder,
node_modules). A <dir> that is a symlink to a directory is followed, once.

The agent's own list comes from --from (a JSON array of paths or {path,
kind}, a units.json, or one path per line) or, as in the paper, from a
units.json the agent wrote into the unseeded session. With a list and a scan,
the files the list omits are reported ("missing"); --strict-scope refuses
such a list instead (exit 2). Seeding happens once; later changes go through
unit-* deltas.

--list prints the inventory: each unit's id, path, and whether it is graded,
deleted or a phantom. Names that are not UTF-8 are shown and given in
ponder's quoted form ("caf\xe9.go", see ponder/SPEC.md).`,
		Example: `  ponder units --scan src
  ponder units --from my-units.json --scan src --strict-scope
  git ls-files '*.go' | ponder units --from -
  ponder units --list --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(o, runF, runUnits),
	}
	cmd.Flags().StringVar(&o.scan, "scan", "", "directory whose files are the units (and the scan root for paths)")
	cmd.Flags().StringVar(&o.from, "from", "", "the agent's unit list (FILE, or - for stdin)")
	cmd.Flags().BoolVar(&o.strictScope, "strict-scope", false, "refuse an inventory that omits any file on disk under --scan")
	cmd.Flags().BoolVar(&o.list, "list", false, "list the inventory: unit ids and paths")
	cli.CompleteFlag(cmd, "scan", cli.Dirs)
	cli.CompleteFlag(cmd, "from", cli.Files("json", "txt"))
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no source or an unusable list (usage); already seeded, an empty scope, or a --strict-scope omission (stateError)"}, localWriteFailed)
	return cmd
}

func runUnits(o *unitsOptions) error {
	e, err := o.App.eng()
	if err != nil {
		return o.App.finish(nil, err, nil)
	}
	if o.list {
		if o.scan != "" || o.from != "" || o.strictScope {
			return o.App.finish(nil, cli.Usagef("--list only reads the inventory: give it alone"), nil)
		}
		res, err := e.UnitList(o.App.slug)
		return o.App.finish(res, err, func(w io.Writer) { printUnitList(w, res) })
	}
	opts := ponder.UnitsOptions{Scan: o.App.rootRelative(o.scan), FromName: o.from, StrictScope: o.strictScope}
	if o.from != "" {
		if opts.From, err = o.App.readInput(o.from); err != nil {
			return o.App.finish(nil, err, nil)
		}
	}
	res, err := e.Units(o.App.slug, opts)
	return o.App.finish(res, err, func(w io.Writer) {
		how := "the list " + term(deref(res.From))
		if res.Source == "scan" {
			how = "a " + *res.Method + " scan of " + term(*res.ScanRoot)
		}
		fmt.Fprintf(w, "seeded %d units from %s\n", res.Units, how)
		if len(res.Missing) > 0 {
			fmt.Fprintf(w, "the list omits %s on disk under %s:\n", text.Plural(int64(len(res.Missing)), "file"), term(*res.ScanRoot))
			for _, m := range capped(res.Missing) {
				fmt.Fprintf(w, "  %s\n", term(m))
			}
		}
	})
}

// rootRelative turns a directory given on the command line (relative to
// the working directory) into one relative to the project root, which may
// be a parent of it.
func (a *app) rootRelative(dir string) string {
	if dir == "" || a.engine == nil || filepath.IsAbs(dir) || a.cwd == a.engine.Root {
		return dir
	}
	rel, err := filepath.Rel(a.engine.Root, filepath.Join(a.cwd, dir))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return filepath.Join(a.cwd, dir)
	}
	if strings.HasSuffix(dir, "/") {
		rel += "/"
	}
	return rel
}

func printUnitList(w io.Writer, r *ponder.UnitListResult) {
	fmt.Fprintf(w, "%s: %d units, coverage %d/%d\n", r.Slug, len(r.Units), r.Grading.Graded, r.Grading.Counted)
	for _, u := range r.Units {
		state := "ungraded"
		if u.Graded {
			state = "graded"
		}
		switch {
		case u.Phantom:
			state += ", phantom"
		case u.Deleted:
			state += ", deleted"
		}
		fmt.Fprintf(w, "%s  %-20s %s\n", u.ID, state, term(u.Path))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
