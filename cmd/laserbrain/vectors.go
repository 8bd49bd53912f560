package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/vectors"
)

func newVectorsCmd(streams *cli.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vectors",
		Short: "Check test vectors against this implementation, or emit ours",
		Args:  cli.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newVectorsCheckCmd(streams), newVectorsEmitCmd(streams), newVectorsKindsCmd(streams))
	return cmd
}

func newVectorsCheckCmd(streams *cli.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "check [FILE...]",
		Short: "Run every case of the vector files; exit 1 if any fails",
		Long: `check runs every case of each vector file (without FILE, the vectors built
into this binary) and prints each failure with the case, the expected and the
actual output, then a line "N passed, M failed".
It exits 0 when everything passed, 1 when a case failed, and 2 when a file
could not be read or is not a vector file.`,
		Args: cli.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			type input struct {
				name string
				data []byte
				err  error
			}
			var inputs []input
			if len(args) == 0 {
				for _, f := range vectors.Shipped() {
					inputs = append(inputs, input{name: "(built-in) " + f.Name, data: f.Data})
				}
			}
			for _, path := range args {
				data, err := os.ReadFile(path)
				inputs = append(inputs, input{name: path, data: data, err: err})
			}
			passed, failed, broken := 0, 0, 0
			for _, in := range inputs {
				path, data, err := in.name, in.data, in.err
				if err == nil {
					var r *vectors.Report
					if r, err = vectors.Check(data); err == nil {
						vectors.WriteReport(streams.Out, path, r)
						passed += r.Passed
						failed += len(r.Failures)
						continue
					}
				}
				fmt.Fprintf(streams.Out, "ERROR %s: %v\n", path, err)
				broken++
			}
			fmt.Fprintf(streams.Out, "%d passed, %d failed\n", passed, failed)
			switch {
			case broken > 0:
				return cli.SilentExit(usageExit)
			case failed > 0:
				return cli.SilentExit(1)
			}
			return nil
		},
	}
}

type vectorsEmitOptions struct {
	kind string
	in   string
}

func newVectorsEmitCmd(streams *cli.IOStreams) *cobra.Command {
	opts := &vectorsEmitOptions{}
	cmd := &cobra.Command{
		Use:   "emit --kind KIND [--in FILE]",
		Short: "Write our outputs for the given inputs, in the vector format",
		Long: `emit reads inputs (a vector file of the kind, or {"cases":[{"in":...}]}, or for
drift {"vectors":[{"steps":[{"in":...}]}]}, or for supercode and drift-full
{"vectors":[{"seq":N,"in":...}]}) from --in or standard input and writes the
same file with our outputs, so a port in another language can be compared
with this implementation.`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var data []byte
			var err error
			if opts.in == "" || opts.in == "-" {
				data, err = io.ReadAll(streams.In)
			} else {
				data, err = os.ReadFile(opts.in)
			}
			if err != nil {
				return cli.Exit(usageExit, err)
			}
			out, err := vectors.Emit(opts.kind, data)
			if err != nil {
				return cli.Exit(usageExit, err)
			}
			_, err = streams.Out.Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&opts.kind, "kind", "", "vector kind (see 'laserbrain vectors kinds')")
	cmd.Flags().StringVar(&opts.in, "in", "", "input file (default: standard input)")
	_ = cmd.MarkFlagRequired("kind")
	return cmd
}

func newVectorsKindsCmd(streams *cli.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "kinds",
		Short: "List the vector kinds this implementation can check",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, k := range vectors.Kinds() {
				fmt.Fprintf(streams.Out, "%-12s %s\n", k.Name, k.Doc)
			}
			return nil
		},
	}
}
