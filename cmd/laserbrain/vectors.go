package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/shell"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/htmlreport"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/internal/version"
	"github.com/laserkit/laserkit/vectors"
)

func newVectorsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vectors",
		Short: "Check test vectors against this implementation, or emit ours",
		Long: `Test vectors are JSON files of inputs and the outputs the Python reference
produced for them (drift steps, whole runs, supercode sequences, workflows,
MCP sessions). vectors check runs them against this implementation; vectors
run sends them, case by case, to any implementation that speaks the runner
protocol (docs/porting.md) and reports what it answered; vectors emit writes
ours for inputs, or the built-in files themselves; vectors schema prints a
kind's JSON Schema.`,
		Example: `  laserbrain vectors check
  laserbrain vectors run --impl 'python3 vectors/adapters/python/laserbrain_vectors.py'
  laserbrain vectors schema drift
  laserbrain vectors emit --builtin --kind drift --dir upstream/`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newVectorsCheckCmd(f, nil), newVectorsRunCmd(f, nil), newVectorsServeCmd(f, nil),
		newVectorsEmitCmd(f, nil), newVectorsKindsCmd(f, nil), newVectorsSchemaCmd(f, nil))
	return cmd
}

// vectorInputs are the files a command reads: those named, or the
// built-in set when none is.
func vectorInputs(paths []string) ([]vectors.VectorFile, error) {
	var out []vectors.VectorFile
	if len(paths) == 0 {
		for _, f := range vectors.Shipped() {
			out = append(out, vectors.VectorFile{Name: "(built-in) " + f.Name, Data: f.Data})
		}
		return out, nil
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, cli.FileError(err)
		}
		out = append(out, vectors.VectorFile{Name: p, Data: data})
	}
	return out, nil
}

type vectorsCheckOptions struct {
	IO *cli.IOStreams

	asJSON bool
	files  []string
}

func newVectorsCheckCmd(f *Factory, runF func(*vectorsCheckOptions) error) *cobra.Command {
	opts := &vectorsCheckOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "check [FILE...]",
		Short: "Run every case of the vector files against this implementation; exit 1 if any fails",
		Long: `check validates each vector file against its kind's schema, runs every case
(without FILE, the vectors built into this binary) and prints each failure
with the case, its input, the expected and the actual output and what
differs (by JSON pointer), then a line "N passed, M failed". --json prints
one object a file: {"impl", "file", "kind", "passed", "failed", "errored",
"skipped", "failures": [{"case", "in", "expected", "actual", "error",
"diff"}], "tally", "error"}, with in, expected and actual as JSON values.`,
		Example: `  laserbrain vectors check
  laserbrain vectors check --json upstream/drift.json`,
		Args:              cli.ArbitraryArgs,
		ValidArgsFunction: cli.Files("json"),
		RunE:              cli.RunArgs(opts, &opts.files, runF, runVectorsCheck),
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one result object a file")
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitFinding, When: "a case failed"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "a file could not be read, is not a vector file or does not follow its kind's schema (reported on its line)"})
	return cmd
}

// maxVectorsFile caps what vectors check and emit read of one file: ten
// times the largest the reference produces (its coverage vectors, 6.5 MB),
// so a /dev/zero or a runaway writer ends with a clear error.
const maxVectorsFile = 64 << 20

func runVectorsCheck(opts *vectorsCheckOptions) error {
	streams := opts.IO
	type input struct {
		name string
		data []byte
		err  error
	}
	var inputs []input
	if len(opts.files) == 0 {
		for _, f := range vectors.Shipped() {
			inputs = append(inputs, input{name: "(built-in) " + f.Name, data: f.Data})
		}
	}
	for _, path := range opts.files {
		data, err := fsx.ReadFileCapped(path, maxVectorsFile)
		inputs = append(inputs, input{name: path, data: data, err: err})
	}
	passed, failed, errored, broken := 0, 0, 0, 0
	reports := []vectors.JSONReport{}
	for _, in := range inputs {
		err := in.err
		if err == nil {
			var r *vectors.Report
			if r, err = vectors.Check(in.data); err == nil {
				r.File = in.name
				if !opts.asJSON {
					vectors.WriteReport(streams.Out, in.name, r)
				}
				passed += r.Passed
				failed += r.Failed()
				errored += r.Errored()
				reports = append(reports, r.JSON())
				continue
			}
		}
		msg := err.Error()
		reports = append(reports, vectors.JSONReport{Impl: vectors.ThisImpl, File: in.name, Failures: []vectors.JSONFailure{}, Error: &msg})
		if !opts.asJSON {
			fmt.Fprintf(streams.Out, "ERROR %s: %v\n", in.name, err)
		}
		broken++
	}
	if opts.asJSON {
		if err := cli.WriteJSON(streams.Out, reports); err != nil {
			return cli.Failure(err)
		}
	} else {
		line := fmt.Sprintf("%d passed, %d failed", passed, failed)
		if errored > 0 {
			line += fmt.Sprintf(", %d errored", errored)
		}
		fmt.Fprintln(streams.Out, line)
	}
	switch {
	case broken > 0:
		return cli.SilentExit(cli.ExitUsage)
	case failed+errored > 0:
		return cli.SilentExit(cli.ExitFinding)
	}
	return nil
}

type vectorsRunOptions struct {
	IO *cli.IOStreams

	impl    string
	kinds   []string
	report  string
	asJSON  bool
	timeout time.Duration
	limit   int
	files   []string
}

func newVectorsRunCmd(f *Factory, runF func(*vectorsRunOptions) error) *cobra.Command {
	opts := &vectorsRunOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "run --impl 'CMD ...' [--kinds K,...] [--report DIR] [--json] [FILE...]",
		Short: "Run an implementation in any language over the vectors, case by case, and report",
		Long: `run starts the implementation under test (--impl, a command line split as a
shell splits it, run without a shell) and speaks the runner protocol to it
over its standard input and output (docs/porting.md): a handshake in which
it names itself and the kinds it answers, then one self-contained case at a
time (a sequence kind sends the whole sequence, and the answer is the list
of outputs), then stop. Each case has --timeout to be answered; an
implementation that crashes or hangs has that case marked errored and is
started again for the next. Kinds it does not list are skipped.

Without FILE the built-in vectors are sent. The report gives per kind the
cases passed, failed, errored and skipped, and for each failure the case,
the expected and actual answers and what differs; --report DIR also writes
report.json, report.txt and report.html (the report's style) into DIR,
made if it does not exist.`,
		Example: `  laserbrain vectors run --impl 'python3 vectors/adapters/python/laserbrain_vectors.py --sdk ../shared/reference/laserbrain-sdk-0.53.0'
  laserbrain vectors run --impl 'laserbrain vectors serve' --kinds drift,mcp --report out/
  laserbrain vectors run --impl 'node port/adapter.js' --json my-vectors.json`,
		Args:              cli.ArbitraryArgs,
		ValidArgsFunction: cli.Files("json"),
		RunE:              cli.RunArgs(opts, &opts.files, runF, runVectorsRun),
	}
	cmd.Flags().StringVar(&opts.impl, "impl", "", "the implementation's command line")
	cmd.Flags().StringSliceVar(&opts.kinds, "kinds", nil, "only these kinds (comma-separated)")
	cmd.Flags().StringVar(&opts.report, "report", "", "also write report.json, report.txt and report.html into this directory")
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print the report as JSON: {\"impl\", \"restarts\", \"kinds\": [report per kind]}")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", vectors.DefaultCaseTimeout, "how long one case may take to be answered")
	cmd.Flags().IntVar(&opts.limit, "limit", 0, "send at most this many cases of each file (0: all)")
	_ = cmd.MarkFlagRequired("impl")
	cli.CompleteFlag(cmd, "kinds", cli.Dynamic(func(*cobra.Command) ([]string, error) { return vectorKinds(), nil }))
	cli.CompleteFlag(cmd, "report", cli.Dirs)
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitFinding, When: "a case failed or errored"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "a bad --impl, --kinds or --timeout, a vector file unreadable or not of its schema, or an implementation that would not start or answer the handshake (nothing was run)"},
		cli.ExitDoc{Code: cli.ExitFailure, When: "the --report files could not be written"})
	return cmd
}

// runJSON is vectors run --json.
type runJSON struct {
	Impl     vectors.Ready        `json:"impl"`
	Restarts int                  `json:"restarts"`
	Kinds    []vectors.JSONReport `json:"kinds"`
}

func runVectorsRun(opts *vectorsRunOptions) error {
	ctx, streams := context.Background(), opts.IO
	argv, err := shell.Fields(opts.impl, nil)
	if err != nil {
		return cli.Usagef("--impl %q: %v", opts.impl, err)
	}
	if len(argv) == 0 {
		return cli.Usagef("--impl is empty: give the command that starts the implementation")
	}
	if opts.timeout <= 0 {
		return cli.Usagef("--timeout %s: give a positive duration", opts.timeout)
	}
	if opts.limit < 0 {
		return cli.Usagef("--limit %d: give a number of cases, 0 for all", opts.limit)
	}
	if opts.report != "" {
		// Made when the report is written (a run refused before then
		// leaves nothing behind); something else in its place is refused
		// now.
		if st, err := os.Stat(opts.report); err == nil && !st.IsDir() {
			return cli.Usagef("--report %s: not a directory", opts.report)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return cli.Usagef("--report %s: %v", opts.report, err)
		}
	}
	files, err := vectorInputs(opts.files)
	if err != nil {
		return err
	}
	run, err := vectors.RunImplementation(ctx, vectors.RunOptions{Command: argv, Kinds: opts.kinds, Timeout: opts.timeout, Limit: opts.limit}, files)
	if err != nil {
		if run == nil {
			return cli.Usagef("%v", err)
		}
		return cli.Failure(err)
	}
	out := runJSON{Impl: run.Impl, Restarts: run.Restarts, Kinds: []vectors.JSONReport{}}
	bad := 0
	for _, r := range run.Reports {
		out.Kinds = append(out.Kinds, r.JSON())
		bad += len(r.Failures)
	}
	var text strings.Builder
	writeRunText(&text, run)
	if opts.report != "" {
		if err := writeRunReport(opts.report, run, out, text.String()); err != nil {
			return cli.Failure(err)
		}
	}
	if opts.asJSON {
		if err := cli.WriteJSON(streams.Out, out); err != nil {
			return cli.Failure(err)
		}
	} else {
		fmt.Fprint(streams.Out, text.String())
	}
	if bad > 0 {
		return cli.SilentExit(cli.ExitFinding)
	}
	return nil
}

// writeRunText is the text report: the failures of each kind, then one
// line a kind and a total.
func writeRunText(w io.Writer, run *vectors.Run) {
	impl := run.Impl.Name + " " + run.Impl.Version + " (" + run.Impl.Language + ")"
	for _, r := range run.Reports {
		vectors.WriteReport(w, r.Kind, r)
	}
	fmt.Fprintf(w, "implementation: %s\n", impl)
	var total vectors.Report
	for _, r := range run.Reports {
		fmt.Fprintf(w, "  %-12s %s\n", r.Kind, r.Summary())
		total.Passed += r.Passed
		total.Failures = append(total.Failures, r.Failures...)
		total.Skipped += r.Skipped
	}
	if run.Restarts > 0 {
		fmt.Fprintf(w, "restarted %s after a crash or a hang\n", text.Plural(int64(run.Restarts), "time"))
	}
	line := fmt.Sprintf("%d passed, %d failed, %d errored", total.Passed, total.Failed(), total.Errored())
	if total.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", total.Skipped)
	}
	fmt.Fprintln(w, line)
}

func writeRunReport(dir string, run *vectors.Run, out runJSON, text string) error {
	js, err := vectors.Marshal(out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--report %s: %w", dir, err)
	}
	var html strings.Builder
	meta := []htmlreport.Field{{Name: "implementation", Value: run.Impl.Name + " " + run.Impl.Version},
		{Name: "language", Value: run.Impl.Language}, {Name: "kinds it answers", Value: strings.Join(run.Impl.Kinds, ", ")},
		{Name: "runner", Value: "laserbrain " + version.Get("laserbrain").Version}}
	if err := vectors.WriteHTML(&html, run.Impl.Name, meta, run.Reports); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"report.json": js, "report.txt": []byte(text), "report.html": []byte(html.String())} {
		if err := renameio.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

type vectorsServeOptions struct {
	IO *cli.IOStreams
}

func newVectorsServeCmd(f *Factory, runF func(*vectorsServeOptions) error) *cobra.Command {
	opts := &vectorsServeOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "This implementation behind the runner protocol, on standard input and output",
		Long: `serve answers the runner protocol (docs/porting.md) on standard input and
output with this implementation: what vectors run --impl 'laserbrain vectors
serve' compares against the vectors, the same way it compares a port in
another language.`,
		Example: `  laserbrain vectors run --impl 'laserbrain vectors serve'`,
		Args:    cli.NoArgs,
		RunE:    cli.RunWith(opts, runF, runVectorsServe),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "the runner sent something that is not the protocol"})
	return cmd
}

func runVectorsServe(opts *vectorsServeOptions) error {
	info := vectors.ServeInfo{Name: "laserkit", Language: "go", Version: version.Get("laserbrain").Version}
	if err := vectors.Serve(info, opts.IO.In, opts.IO.Out); err != nil {
		return cli.Usagef("%v", err)
	}
	return nil
}

type vectorsEmitOptions struct {
	IO *cli.IOStreams

	kind    string
	in      string
	builtin bool
	file    string
	dir     string
}

func newVectorsEmitCmd(f *Factory, runF func(*vectorsEmitOptions) error) *cobra.Command {
	opts := &vectorsEmitOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "emit (--kind KIND [--in FILE] | --builtin [--kind KIND] [--file NAME] [--dir DIR])",
		Short: "Write our outputs for the given inputs in the vector format, or the built-in vector files",
		Long: `emit reads inputs (a vector file of the kind, or {"cases":[{"in":...}]}, or for
drift {"vectors":[{"steps":[{"in":...}]}]}, or for supercode and drift-full
{"vectors":[{"seq":N,"in":...}]}) from --in or standard input and writes the
same file with our outputs, so a port in another language can be compared
with this implementation.

--builtin writes the vector files built into this binary as they are (with
--kind, those of one kind; with --file, the one of that name): into --dir
DIR, or to standard output when the selection is one file.`,
		Example: `  laserbrain vectors emit --kind drift --in inputs.json > ours.json
  laserbrain vectors emit --builtin --kind mcp > mcp.json
  laserbrain vectors emit --builtin --dir vectors-0.53.0/`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runVectorsEmit),
	}
	cmd.Flags().StringVar(&opts.kind, "kind", "", "vector kind (see 'laserbrain vectors kinds')")
	cmd.Flags().StringVar(&opts.in, "in", "", "input file (default: standard input)")
	cmd.Flags().BoolVar(&opts.builtin, "builtin", false, "write the built-in vector files")
	cmd.Flags().StringVar(&opts.file, "file", "", "with --builtin: the built-in file of this name")
	cmd.Flags().StringVar(&opts.dir, "dir", "", "with --builtin: write the files into this directory")
	cmd.Flags().Bool("json", false, "accepted for symmetry: emit prints JSON anyway")
	cli.CompleteFlag(cmd, "kind", cli.Dynamic(func(*cobra.Command) ([]string, error) { return vectorKinds(), nil }))
	cli.CompleteFlag(cmd, "in", cli.Files("json"))
	cli.CompleteFlag(cmd, "dir", cli.Dirs)
	cli.CompleteFlag(cmd, "file", cli.Dynamic(func(*cobra.Command) ([]string, error) {
		var names []string
		for _, f := range vectors.Shipped() {
			names = append(names, strings.TrimSuffix(f.Name, ".gz"))
		}
		return names, nil
	}))
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "an unknown --kind or --file, input that is missing, unreadable or not of the kind, a --dir that is not a directory, or several built-in files and no --dir"},
		cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runVectorsEmit(opts *vectorsEmitOptions) error {
	if opts.builtin {
		return vectorsEmitBuiltin(opts)
	}
	if opts.file != "" || opts.dir != "" {
		return cli.Usagef("--file and --dir go with --builtin")
	}
	if opts.kind == "" {
		return cli.Usagef("emit needs --kind KIND (the kind of the inputs), or --builtin")
	}
	var data []byte
	var err error
	if opts.in == "" || opts.in == "-" {
		data, err = fsx.ReadCapped(opts.IO.In, "standard input", maxVectorsFile)
	} else {
		data, err = fsx.ReadFileCapped(opts.in, maxVectorsFile)
	}
	if err != nil {
		return cli.FileError(err)
	}
	out, err := vectors.Emit(opts.kind, data)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if _, err = opts.IO.Out.Write(out); err != nil {
		return cli.Failure(err)
	}
	return nil
}

// vectorsEmitBuiltin writes the built-in files as they are shipped
// (decompressed).
func vectorsEmitBuiltin(opts *vectorsEmitOptions) error {
	streams := opts.IO
	if opts.in != "" {
		return cli.Usagef("--in goes with --kind, not --builtin (the built-in files are written as they are)")
	}
	if opts.kind != "" {
		if _, err := vectors.Lookup(opts.kind); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	type sel struct {
		name string
		data []byte
	}
	var picked []sel
	var all []string
	for _, f := range vectors.Shipped() {
		name := strings.TrimSuffix(f.Name, ".gz")
		all = append(all, name)
		if opts.file != "" && opts.file != name && opts.file != f.Name {
			continue
		}
		if opts.kind != "" {
			d, err := vectors.Decode(f.Data)
			if err != nil || d.Kind != opts.kind {
				continue
			}
		}
		picked = append(picked, sel{name, f.Data})
	}
	if len(picked) == 0 {
		return cli.Usagef("no built-in vector file matches (built-in: %s)", strings.Join(all, ", "))
	}
	if opts.dir == "" {
		if len(picked) > 1 {
			var names []string
			for _, p := range picked {
				names = append(names, p.name)
			}
			return cli.Usagef("%d built-in files match (%s): pass --dir DIR to write them, or --file NAME for one", len(picked), strings.Join(names, ", "))
		}
		if _, err := streams.Out.Write(picked[0].data); err != nil {
			return cli.Failure(err)
		}
		return nil
	}
	if st, err := os.Stat(opts.dir); err != nil || !st.IsDir() {
		return cli.Usagef("--dir %s: not a directory (create it first)", opts.dir)
	}
	for _, p := range picked {
		if err := renameio.WriteFile(filepath.Join(opts.dir, p.name), p.data, 0o644); err != nil {
			return cli.Failure(err)
		}
		fmt.Fprintln(streams.Out, filepath.Join(opts.dir, p.name))
	}
	return nil
}

// vectorKinds are the kinds' names with their one-line docs, for completion.
func vectorKinds() []string {
	var out []string
	for _, k := range vectors.Kinds() {
		out = append(out, k.Name+"\t"+k.Doc)
	}
	return out
}

type vectorsKindsOptions struct {
	IO     *cli.IOStreams
	asJSON bool
}

func newVectorsKindsCmd(f *Factory, runF func(*vectorsKindsOptions) error) *cobra.Command {
	opts := &vectorsKindsOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "kinds",
		Short: "List the vector kinds this implementation can check",
		Long: `kinds lists each vector kind with what its cases hold; emit --kind, run --kinds
and schema take these names. --json adds whether the kind has a per-case
form for vectors run (runnable).`,
		Example: `  laserbrain vectors kinds
  laserbrain vectors kinds --json`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runVectorsKinds),
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, `print [{"name", "doc", "runnable"}]`)
	cli.SetExits(cmd)
	return cmd
}

func runVectorsKinds(opts *vectorsKindsOptions) error {
	if opts.asJSON {
		type kind struct {
			Name     string `json:"name"`
			Doc      string `json:"doc"`
			Runnable bool   `json:"runnable"`
		}
		out := []kind{}
		for _, k := range vectors.Kinds() {
			out = append(out, kind{k.Name, k.Doc, k.Runnable()})
		}
		return cli.WriteJSON(opts.IO.Out, out)
	}
	for _, k := range vectors.Kinds() {
		fmt.Fprintf(opts.IO.Out, "%-12s %s\n", k.Name, k.Doc)
	}
	return nil
}

type vectorsSchemaOptions struct {
	IO *cli.IOStreams
	// args are the positional arguments.
	args []string
}

func newVectorsSchemaCmd(f *Factory, runF func(*vectorsSchemaOptions) error) *cobra.Command {
	opts := &vectorsSchemaOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "schema KIND|protocol",
		Short: "Print the JSON Schema of a vector kind's files, or of the runner protocol's messages",
		Long: `schema prints the JSON Schema (draft 2020-12) that vector files of KIND follow
— check, run and emit validate against it, and name the JSON pointer of what
does not follow it — or, for "protocol", the schema of the runner
protocol's messages.`,
		Example: `  laserbrain vectors schema drift
  laserbrain vectors schema protocol`,
		Args: cli.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return vectors.SchemaNames(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: cli.RunArgs(opts, &opts.args, runF, runVectorsSchema),
	}
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "an unknown kind"})
	return cmd
}

func runVectorsSchema(opts *vectorsSchemaOptions) error {
	data, err := vectors.Schema(opts.args[0])
	if err != nil {
		return cli.Usagef("%v (schemas: %s)", err, strings.Join(vectors.SchemaNames(), ", "))
	}
	if _, err := opts.IO.Out.Write(data); err != nil {
		return cli.Failure(err)
	}
	return nil
}
