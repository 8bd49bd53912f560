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
		Long: `Test vectors are JSON files of inputs and the outputs the Python reference
produced for them (drift steps, whole runs, supercode sequences, workflows).
vectors check runs them against this implementation; vectors emit writes
ours for inputs a port in another language can compare with.`,
		Example: `  laserbrain vectors check
  laserbrain vectors kinds
  laserbrain vectors emit --kind drift --in inputs.json > ours.json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newVectorsCheckCmd(streams), newVectorsEmitCmd(streams), newVectorsKindsCmd(streams))
	return cmd
}

// vectorsFileReport is one file of vectors check --json.
type vectorsFileReport struct {
	File     string           `json:"file"`
	Kind     *string          `json:"kind"`
	Passed   int              `json:"passed"`
	Failures []vectorsFailure `json:"failures"`
	Error    *string          `json:"error"`
}

// vectorsFailure is one failed case: its label, input, and the expected
// and actual outputs (as the text report prints them).
type vectorsFailure struct {
	Case     string `json:"case"`
	In       string `json:"in"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

func newVectorsCheckCmd(streams *cli.IOStreams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check [FILE...]",
		Short: "Run every case of the vector files; exit 1 if any fails",
		Long: `check runs every case of each vector file (without FILE, the vectors built
into this binary) and prints each failure with the case, the expected and the
actual output, then a line "N passed, M failed". --json prints one object a
file: {"file", "kind", "passed", "failures": [{"case", "in", "expected",
"actual"}], "error"}.`,
		Example: `  laserbrain vectors check
  laserbrain vectors check --json upstream/drift.json`,
		Args:              cli.ArbitraryArgs,
		ValidArgsFunction: cli.Files("json"),
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
			reports := []vectorsFileReport{}
			for _, in := range inputs {
				path, data, err := in.name, in.data, in.err
				rep := vectorsFileReport{File: path, Failures: []vectorsFailure{}}
				if err == nil {
					var r *vectors.Report
					if r, err = vectors.Check(data); err == nil {
						if !asJSON {
							vectors.WriteReport(streams.Out, path, r)
						}
						passed += r.Passed
						failed += len(r.Failures)
						rep.Passed, rep.Kind = r.Passed, &r.Kind
						for _, f := range r.Failures {
							rep.Failures = append(rep.Failures, vectorsFailure{f.Label, f.In, f.Expected, f.Actual})
						}
						reports = append(reports, rep)
						continue
					}
				}
				msg := err.Error()
				rep.Error = &msg
				reports = append(reports, rep)
				if !asJSON {
					fmt.Fprintf(streams.Out, "ERROR %s: %v\n", path, err)
				}
				broken++
			}
			if asJSON {
				if err := cli.WriteJSON(streams.Out, reports); err != nil {
					return cli.Failure(err)
				}
			} else {
				fmt.Fprintf(streams.Out, "%d passed, %d failed\n", passed, failed)
			}
			switch {
			case broken > 0:
				return cli.SilentExit(cli.ExitUsage)
			case failed > 0:
				return cli.SilentExit(cli.ExitFinding)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one result object a file")
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitFinding, When: "a case failed"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "a file could not be read or is not a vector file (reported on its line)"})
	return cmd
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
		Example: `  laserbrain vectors emit --kind drift --in inputs.json > ours.json
  laserbrain vectors emit --kind supercode < upstream/supercode.json`,
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
				return cli.FileError(err)
			}
			out, err := vectors.Emit(opts.kind, data)
			if err != nil {
				return cli.Usagef("%v", err)
			}
			if _, err = streams.Out.Write(out); err != nil {
				return cli.Failure(err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.kind, "kind", "", "vector kind (see 'laserbrain vectors kinds')")
	cmd.Flags().StringVar(&opts.in, "in", "", "input file (default: standard input)")
	_ = cmd.MarkFlagRequired("kind")
	cmd.Flags().Bool("json", false, "accepted for symmetry: emit prints JSON anyway")
	cli.CompleteFlag(cmd, "kind", cli.Dynamic(func(*cobra.Command) ([]string, error) { return vectorKinds(), nil }))
	cli.CompleteFlag(cmd, "in", cli.Files("json"))
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "an unknown --kind, or input that is missing, unreadable or not of the kind"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

// vectorKinds are the kinds' names with their one-line docs, for completion.
func vectorKinds() []string {
	var out []string
	for _, k := range vectors.Kinds() {
		out = append(out, k.Name+"\t"+k.Doc)
	}
	return out
}

func newVectorsKindsCmd(streams *cli.IOStreams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "kinds",
		Short: "List the vector kinds this implementation can check",
		Long: `kinds lists each vector kind with what its cases hold; emit --kind takes
these names.`,
		Example: `  laserbrain vectors kinds
  laserbrain vectors kinds --json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				type kind struct {
					Name string `json:"name"`
					Doc  string `json:"doc"`
				}
				out := []kind{}
				for _, k := range vectors.Kinds() {
					out = append(out, kind{k.Name, k.Doc})
				}
				return cli.WriteJSON(streams.Out, out)
			}
			for _, k := range vectors.Kinds() {
				fmt.Fprintf(streams.Out, "%-12s %s\n", k.Name, k.Doc)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print [{"name", "doc"}]`)
	cli.SetExits(cmd)
	return cmd
}
