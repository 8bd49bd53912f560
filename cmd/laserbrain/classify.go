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

The exit status says whether the command needs authorization; the decision
printed is what the pre-tool-use hook would do with it, which reads the
command alone (an agent declares nothing): a command you declare outward
needs authorization, and a hook would still allow it when nothing in it
escalates. --json prints the full result, including each finding's role
(executed, inline code, data, unknown, dry run). The command is read as if
run in the current directory (git checkout NAME: a file here, or a branch).`,
		Example: `  laserbrain classify -- git push --force origin main
  laserbrain classify --json -- 'find . -name "*.tmp" -delete'
  laserbrain classify --outward -- curl -X POST https://api.example.org/deploy`,
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
				if err := cli.WriteJSON(streams.Out, out); err != nil {
					return cli.Failure(err)
				}
			} else if r.NeedsAuthorization() && r.Decision == operator.Allow {
				// Only the declaration escalated it: say so, rather than
				// print "allow" and exit 1.
				fmt.Fprintf(streams.Out, "%s, %s (as declared): needs authorization; a hook would allow it (nothing in the command escalates it)\n",
					reversibility(r.Reversible), direction(r.Outward))
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
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitOK, When: "the command is reversible and inward"},
		cli.ExitDoc{Code: cli.ExitFinding, When: "the command needs authorization: irreversible or outward"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "no command given, or a flag mistake"})
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
