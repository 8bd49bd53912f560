package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/laserbrain"
)

type verifyOptions struct {
	IO   *cli.IOStreams
	file string
}

func newVerifyCmd(f *Factory, runF func(*verifyOptions) error) *cobra.Command {
	opts := &verifyOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Verify an exported audit chain: no record altered, none missing",
		Long: `verify checks an audit chain (laserbrain history --run ID --audit, or the
Python reference's Harness.export_audit): every record names the hash of the
one before it, and its own hash is the SHA-256 of that and the record. It
says the chain is intact (0), or at which link it breaks (1): a record was
altered, removed or put in, or the file is corrupt.`,
		Example: `  laserbrain history --run 9d14c2e07a11 --audit > run.audit.json
  laserbrain verify run.audit.json`,
		Args: cli.ExactArgs(1),
		RunE: cli.RunAfter(opts, func(cmd *cobra.Command, args []string) error {
			opts.file = args[0]
			return nil
		}, runF, runVerify),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitOK, When: "the chain is intact"},
		cli.ExitDoc{Code: cli.ExitFinding, When: "the chain breaks at a link (named)"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "FILE cannot be read, or is not a JSON list of records"})
	return cmd
}

func runVerify(opts *verifyOptions) error {
	data, err := os.ReadFile(opts.file)
	if err != nil {
		return cli.Usagef("could not read %s: %v", opts.file, err)
	}
	bad, n, err := laserbrain.VerifyAudit(data)
	if err != nil {
		return cli.Usagef("%s: %v", opts.file, err)
	}
	if bad < 0 {
		fmt.Fprintf(opts.IO.Out, "✓ audit intact — %d records, hash chain verified end to end\n", n)
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "✗ audit BROKEN at link %d — a record was altered, or the file is corrupt\n", bad)
	return cli.SilentExit(cli.ExitFinding)
}
