package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/grammar/schema"
	"github.com/laserkit/laserkit/internal/cli"
)

func newGrammarCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "grammar",
		Short: "Hash, verify and show the laserbrain grammar",
		Long: `The grammar (grammar.json) is the single source of truth for everything
laserbrain computes: the normaliser, Φ's weights and thresholds, the verdict
order, the operator patterns and the verb dictionary are generated from it.
These commands read the grammar built into this binary, or a FILE (a grammar
you are editing, or another port's).`,
		Example: `  laserbrain grammar verify
  laserbrain grammar hash my-grammar.json
  laserbrain grammar show /calibration/weights`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newGrammarHashCmd(f, nil), newGrammarVerifyCmd(f, nil), newGrammarShowCmd(f, nil))
	return cmd
}

// readGrammar returns the named file's bytes, or the built-in grammar.
func readGrammar(path string) ([]byte, string, error) {
	if path == "" {
		return grammar.Canonical, "built-in grammar", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, path, cli.FileError(err)
	}
	return data, path, nil
}

type grammarHashOptions struct {
	IO     *cli.IOStreams
	asJSON bool
	// args are the positional arguments.
	args []string
}

func newGrammarHashCmd(f *Factory, runF func(*grammarHashOptions) error) *cobra.Command {
	opts := &grammarHashOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "hash [FILE]",
		Short: "Print the content hash computed from a grammar",
		Long: `hash computes a grammar's content_hash the way the Python reference does: the
first 16 hex digits of the SHA-256 of its canonical rendering, without the
version and the hash fields themselves. It does not compare it with the
content_hash the file stores (grammar verify does).`,
		Example: `  laserbrain grammar hash
  laserbrain grammar hash --json my-grammar.json`,
		Args:              cli.MaximumNArgs(1),
		ValidArgsFunction: cli.Files("json"),
		RunE:              cli.RunArgs(opts, &opts.args, runF, runGrammarHash),
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, `print {"file", "content_hash"}`)
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "FILE is missing, unreadable or not JSON"})
	return cmd
}

func runGrammarHash(opts *grammarHashOptions) error {
	data, name, err := readGrammar(firstArg(opts.args))
	if err != nil {
		return err
	}
	h, err := grammar.HashBytes(data)
	if err != nil {
		return cli.Usagef("%s: %v", name, err)
	}
	if opts.asJSON {
		return cli.WriteJSON(opts.IO.Out, map[string]string{"file": name, "content_hash": h})
	}
	fmt.Fprintln(opts.IO.Out, h)
	return nil
}

// verifyResult is grammar verify --json.
type verifyResult struct {
	File        string  `json:"file"`
	OK          bool    `json:"ok"`
	Grammar     *string `json:"grammar"`
	ContentHash *string `json:"content_hash"`
	Problem     *string `json:"problem"`
}

type grammarVerifyOptions struct {
	IO     *cli.IOStreams
	asJSON bool
	// args are the positional arguments.
	args []string
}

func newGrammarVerifyCmd(f *Factory, runF func(*grammarVerifyOptions) error) *cobra.Command {
	opts := &grammarVerifyOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Validate a grammar against its schema and its stored content hash",
		Long: `verify checks a grammar against its JSON Schema, then the rules a schema
cannot state (patterns that compile, thresholds in order, ...), then that
its stored content_hash equals the hash computed from it. The first problem
found is named with its JSON pointer.`,
		Example: `  laserbrain grammar verify
  laserbrain grammar verify --json edited-grammar.json`,
		Args:              cli.MaximumNArgs(1),
		ValidArgsFunction: cli.Files("json"),
		RunE:              cli.RunArgs(opts, &opts.args, runF, runGrammarVerify),
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, `print {"file", "ok", "grammar", "content_hash", "problem"}`)
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitFinding, When: "the grammar does not verify: the problem is named"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "FILE is missing or unreadable"})
	return cmd
}

func runGrammarVerify(opts *grammarVerifyOptions) error {
	data, name, err := readGrammar(firstArg(opts.args))
	if err != nil {
		return err
	}
	res := verifyResult{File: name}
	if verr := schema.Verify(data); verr != nil {
		msg := verr.Error()
		res.Problem = &msg
	} else {
		doc, _ := grammar.Parse(data)
		version, _ := doc.Get("laserbrain_grammar")
		h := grammar.ContentHash(doc)
		res.OK, res.Grammar, res.ContentHash = true, &version.Str, &h
	}
	if opts.asJSON {
		if err := cli.WriteJSON(opts.IO.Out, res); err != nil {
			return cli.Failure(err)
		}
		if !res.OK {
			return cli.SilentExit(cli.ExitFinding)
		}
		return nil
	}
	if !res.OK {
		return cli.Exitf(cli.ExitFinding, "%s: %s", name, *res.Problem)
	}
	fmt.Fprintf(opts.IO.Out, "ok: %s, grammar %s, content_hash %s\n", name, *res.Grammar, *res.ContentHash)
	return nil
}

type grammarShowOptions struct {
	IO *cli.IOStreams
	// args are the positional arguments.
	args []string

	file string
	raw  bool
}

func newGrammarShowCmd(f *Factory, runF func(*grammarShowOptions) error) *cobra.Command {
	opts := &grammarShowOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "show [JSON-POINTER]",
		Short: "Print a part of the grammar, e.g. /calibration/weights",
		Long: `show prints the part of the grammar a JSON pointer (RFC 6901) names, as JSON
in the grammar's own key order; without a pointer, the whole grammar. The
output is JSON whatever the flags: --raw prints a string value bare.`,
		Example: `  laserbrain grammar show /calibration/weights
  laserbrain grammar show --raw /laserbrain_grammar
  laserbrain grammar show --file my-grammar.json /verdicts`,
		Args:              cli.MaximumNArgs(1),
		ValidArgsFunction: completePointer(opts),
		RunE:              cli.RunArgs(opts, &opts.args, runF, runGrammarShow),
	}
	cmd.Flags().StringVar(&opts.file, "file", "", "read this grammar file instead of the built-in one")
	cmd.Flags().BoolVar(&opts.raw, "raw", false, "print a string value without JSON quoting")
	cmd.Flags().Bool("json", false, "accepted for symmetry: show prints JSON anyway")
	cli.CompleteFlag(cmd, "file", cli.Files("json"))
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "the pointer names nothing, or --file is missing, unreadable or not JSON"})
	return cmd
}

func runGrammarShow(opts *grammarShowOptions) error {
	data, name, err := readGrammar(opts.file)
	if err != nil {
		return err
	}
	doc, err := grammar.Parse(data)
	if err != nil {
		return cli.Usagef("%s: %v", name, err)
	}
	sub, err := doc.Lookup(firstArg(opts.args))
	if err != nil {
		return cli.Usagef("%s: %v", name, err)
	}
	if opts.raw && sub.Kind == grammar.String {
		fmt.Fprintln(opts.IO.Out, sub.Str)
		return nil
	}
	_, err = opts.IO.Out.Write(grammar.RenderUTF8(*sub))
	return err
}

// completePointer offers the JSON pointers one level below the one typed
// so far: /cal → /calibration, /calibration/ → its keys.
func completePointer(opts *grammarShowOptions) cli.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		data, _, err := readGrammar(opts.file)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		doc, err := grammar.Parse(data)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if toComplete == "" {
			toComplete = "/"
		}
		i := strings.LastIndex(toComplete, "/")
		if i < 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		parent := toComplete[:i+1]
		node, err := doc.Lookup(strings.TrimSuffix(parent, "/"))
		if err != nil || node.Kind != grammar.Object {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, m := range node.Members {
			p := parent + strings.NewReplacer("~", "~0", "/", "~1").Replace(m.Key)
			if strings.HasPrefix(p, toComplete) {
				out = append(out, p)
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
