package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/ponder"
)

func newRepairCmd(a *app, runF func(*appOptions) error) *cobra.Command {
	opts := &appOptions{App: a}
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Recover a ledger whose last batch was torn by a crash",
		Long: `repair cuts an unfinished last batch off ledger.jsonl, in place (so it works
on a full disk), then keeps the cut bytes in ledger.torn-<time>.jsonl — or,
when even that cannot be written, prints them (base64). Only an append that
was never acknowledged can be torn, so the hash chain of what remains is
whole. units.json is rebuilt if it differs. A ledger damaged in any other way
(corrupt, or tampered with) is refused and left alone.`,
		Example: `  ponder repair
  ponder repair --slug ui-2026-08-24 --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runRepair),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no session, or a ledger damaged otherwise than torn (stateError)"}, localWriteFailed)
	return cmd
}

func runRepair(opts *appOptions) error {
	return call(opts.App, (*ponder.Engine).Repair, func(w io.Writer, res *ponder.RepairResult) {
		if !res.Repaired {
			fmt.Fprintf(w, "%s: the ledger is sound (%d records); nothing to repair\n", res.Slug, res.Records)
			return
		}
		if res.MovedTo == nil {
			fmt.Fprintf(w, "%s: cut the torn tail (%s, %s); the ledger keeps %s\n", res.Slug, text.Plural(int64(res.RemovedBytes), "byte"), text.Plural(int64(res.RemovedRecords), "whole line"), text.Plural(int64(res.Records), "record"))
			fmt.Fprintf(w, "the cut bytes could not be kept in a file; here they are (base64):\n%s\n", *res.TailBase64)
			return
		}
		fmt.Fprintf(w, "%s: moved the torn tail (%s, %s) to %s; the ledger keeps %s\n",
			res.Slug, text.Plural(int64(res.RemovedBytes), "byte"), text.Plural(int64(res.RemovedRecords), "whole line"), *res.MovedTo, text.Plural(int64(res.Records), "record"))
	})
}
