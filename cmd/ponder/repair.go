package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

func newRepairCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "repair",
		Short: "Recover a ledger whose last batch was torn by a crash",
		Long: `repair moves an unfinished last batch of ledger.jsonl, byte for byte, to
ledger.torn-<time>.jsonl and cuts the ledger back to its last whole batch,
then rebuilds units.json. Nothing is dropped silently: the moved bytes stay
in the session directory. A ledger damaged in any other way is refused.`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.eng()
			if err != nil {
				return a.finish(nil, err, nil)
			}
			res, err := e.Repair(a.slug)
			return a.finish(res, err, func(w io.Writer) {
				if !res.Repaired {
					fmt.Fprintf(w, "%s: the ledger is sound (%d records); nothing to repair\n", res.Slug, res.Records)
					return
				}
				fmt.Fprintf(w, "%s: moved the torn tail (%d bytes, %d whole line(s)) to %s; the ledger keeps %d records\n",
					res.Slug, res.RemovedBytes, res.RemovedRecords, *res.MovedTo, res.Records)
			})
		},
	}
}
