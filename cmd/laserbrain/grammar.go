package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/grammar/schema"
	"github.com/laserkit/laserkit/internal/cli"
)

func newGrammarCmd(streams *cli.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "grammar",
		Short: "Hash, verify and show the laserbrain grammar",
		Long: `The grammar is the single source of truth for everything laserbrain computes.
Without FILE these commands read the grammar built into this binary.`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newGrammarHashCmd(streams), newGrammarVerifyCmd(streams), newGrammarShowCmd(streams))
	return cmd
}

// readGrammar returns the named file's bytes, or the built-in grammar.
func readGrammar(path string) ([]byte, string, error) {
	if path == "" {
		return grammar.Canonical, "built-in grammar", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, path, cli.Exit(usageExit, err)
	}
	return data, path, nil
}

func newGrammarHashCmd(streams *cli.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "hash [FILE]",
		Short: "Print the content hash computed from a grammar",
		Args:  cli.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, name, err := readGrammar(firstArg(args))
			if err != nil {
				return err
			}
			h, err := grammar.HashBytes(data)
			if err != nil {
				return cli.Exitf(usageExit, "%s: %v", name, err)
			}
			fmt.Fprintln(streams.Out, h)
			return nil
		},
	}
}

func newGrammarVerifyCmd(streams *cli.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Validate a grammar against its schema and its stored content hash",
		Long: `verify exits 0 when the grammar passes the schema (and the checks a schema
cannot state) and its stored content_hash equals the computed one, and 1 with a
one-line reason otherwise.`,
		Args: cli.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, name, err := readGrammar(firstArg(args))
			if err != nil {
				return err
			}
			if err := schema.Verify(data); err != nil {
				return cli.Exitf(1, "%s: %v", name, err)
			}
			doc, _ := grammar.Parse(data)
			version, _ := doc.Get("laserbrain_grammar")
			fmt.Fprintf(streams.Out, "ok: %s, grammar %s, content_hash %s\n", name, version.Str, grammar.ContentHash(doc))
			return nil
		},
	}
}

type grammarShowOptions struct {
	file string
	raw  bool
}

func newGrammarShowCmd(streams *cli.IOStreams) *cobra.Command {
	opts := &grammarShowOptions{}
	cmd := &cobra.Command{
		Use:   "show [JSON-POINTER]",
		Short: "Print a part of the grammar, e.g. /calibration/weights",
		Args:  cli.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, name, err := readGrammar(opts.file)
			if err != nil {
				return err
			}
			doc, err := grammar.Parse(data)
			if err != nil {
				return cli.Exitf(usageExit, "%s: %v", name, err)
			}
			sub, err := doc.Lookup(firstArg(args))
			if err != nil {
				return cli.Exitf(usageExit, "%s: %v", name, err)
			}
			if opts.raw && sub.Kind == grammar.String {
				fmt.Fprintln(streams.Out, sub.Str)
				return nil
			}
			_, err = streams.Out.Write(grammar.RenderUTF8(*sub))
			return err
		},
	}
	cmd.Flags().StringVar(&opts.file, "file", "", "read this grammar file instead of the built-in one")
	cmd.Flags().BoolVar(&opts.raw, "raw", false, "print a string value without JSON quoting")
	return cmd
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
