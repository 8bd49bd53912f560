package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

type unitsOptions struct {
	scan        string
	from        string
	strictScope bool
}

func newUnitsCmd(a *app) *cobra.Command {
	var o unitsOptions
	cmd := &cobra.Command{
		Use:   "units (--scan <dir> | --from FILE|- [--scan <dir> --strict-scope])",
		Short: "Seed the session's inventory of units, once",
		Long: `units seeds units.json and appends one unit-seed record per unit.
--scan <dir> enumerates git ls-files -z inside a work tree, else walks the
directory (skipping .git, .ponder, node_modules). --from takes the agent's
own list (JSON array of paths or {path, kind}, a units.json, or one path per
line); with --strict-scope it is refused (exit 2) if it omits any scanned
file. Seeding happens once; later changes go through unit-* deltas.`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.eng()
			if err != nil {
				return a.finish(nil, err, nil)
			}
			opts := ponder.UnitsOptions{Scan: o.scan, FromName: o.from, StrictScope: o.strictScope}
			if o.from != "" {
				if opts.From, err = a.readInput(o.from); err != nil {
					return a.finish(nil, err, nil)
				}
			}
			res, err := e.Units(a.slug, opts)
			return a.finish(res, err, func(w io.Writer) {
				how := "the list " + o.from
				if res.Source == "scan" {
					how = "a " + *res.Method + " scan of " + *res.ScanRoot
				}
				fmt.Fprintf(w, "seeded %d units from %s\n", res.Units, how)
			})
		},
	}
	cmd.Flags().StringVar(&o.scan, "scan", "", "directory whose files are the units (and the scan root for paths)")
	cmd.Flags().StringVar(&o.from, "from", "", "the agent's unit list (FILE, or - for stdin)")
	cmd.Flags().BoolVar(&o.strictScope, "strict-scope", false, "refuse a --from list that omits any scanned file")
	return cmd
}
