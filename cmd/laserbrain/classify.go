package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/operator"
)

type classifyOptions struct {
	json         bool
	irreversible bool
	outward      bool
}

func newClassifyCmd(streams *cli.IOStreams) *cobra.Command {
	opts := &classifyOptions{}
	cmd := &cobra.Command{
		Use:   "classify [--json] [--irreversible] [--outward] -- COMMAND...",
		Short: "Classify a shell command for the operator gate",
		Long: `classify says whether a shell command is irreversible or outward, and why.
The words after -- are joined with spaces into one command line, which is
read as bash: the grammar's operator patterns run on the raw text, then every
command it would run (through sudo/env wrappers, pipelines, sh -c, find,
xargs, git global options and inline aliases) is checked again, with the
extra pack. The declaration flags start from irreversible and/or outward;
classification only ever escalates them.

Exit status: 0 when the command is reversible and inward, 1 when it needs
authorization, 2 on bad input. --json prints the full result, including each
finding's role (executed, inline code, data, unknown, dry run) and the
decision a hook would take (allow, ask, deny). The command is read as if run
in the current directory (git checkout NAME: a file here, or a branch).`,
		Args: cli.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			command := strings.Join(args, " ")
			// The command would run here: the git model looks here to tell
			// a file from a branch.
			dir, _ := os.Getwd()
			r := operator.ClassifyIn(dir, command, !opts.irreversible, opts.outward)
			if opts.json {
				out := struct {
					Command            string `json:"command"`
					NeedsAuthorization bool   `json:"needs_authorization"`
					operator.Result
				}{command, r.NeedsAuthorization(), r}
				if err := writeJSONIndented(streams.Out, out); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(streams.Out, "%s, %s: %s\n", reversibility(r.Reversible), direction(r.Outward), r.Decision)
				for _, c := range r.Carveouts {
					fmt.Fprintf(streams.Out, "  carve-out: %s (still asks)\n", c)
				}
				for _, f := range r.Findings {
					line := "  " + f.Label + " [" + f.Where.String() + "]"
					if f.Note != "" {
						line += " — " + f.Note
					}
					fmt.Fprintln(streams.Out, line)
				}
			}
			if r.NeedsAuthorization() {
				return cli.SilentExit(1)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&opts.irreversible, "irreversible", false, "declare the command irreversible")
	cmd.Flags().BoolVar(&opts.outward, "outward", false, "declare the command outward")
	return cmd
}

func reversibility(r bool) string {
	if r {
		return "reversible"
	}
	return "irreversible"
}

func direction(o bool) string {
	if o {
		return "outward"
	}
	return "inward"
}
