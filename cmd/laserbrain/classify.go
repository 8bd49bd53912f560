package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/agentrun"
)

type classifyOptions struct {
	json         bool
	irreversible bool
	outward      bool
	explain      bool
	presence     string
}

func newClassifyCmd(streams *cli.IOStreams) *cobra.Command {
	opts := &classifyOptions{}
	cmd := &cobra.Command{
		Use:   "classify [--json] [--irreversible] [--outward] [--explain [--presence P]] -- COMMAND...",
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
run in the current directory (git checkout NAME: a file here, or a branch).

--explain adds what the hook would answer and for whom: whether a person is
there to answer a question (the presence), read from this environment the
way the hook reads its own (CLAUDE_CODE_SESSION_ATTENDED, laserbrain loop,
LASERBRAIN_ATTENDED from laserbrain run, CI) unless --presence says
attended, unattended or unknown; the answer with its reason or its note for
the model; and the answer for each presence. With nobody there the hook
never asks: a match only in data or a dry run goes ahead with a note, code
and commands it cannot read are refused with what to do instead.`,
		Example: `  laserbrain classify -- git push --force origin main
  laserbrain classify --json -- 'find . -name "*.tmp" -delete'
  laserbrain classify --explain --presence unattended -- npm publish
  laserbrain classify --outward -- curl -X POST https://api.example.org/deploy`,
		Args: cli.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			command := strings.Join(args, " ")
			presence, why := agentrun.Attendance(os.Getenv)
			if opts.presence != "" {
				p, err := operator.ParsePresence(opts.presence)
				if err != nil {
					return cli.Usagef("--presence: %v", err)
				}
				presence, why = p, "--presence "+opts.presence
			}
			if opts.presence != "" && !opts.explain {
				return cli.Usagef("--presence only goes with --explain")
			}
			// The command would run here: the git model looks here to tell
			// a file from a branch.
			dir, _ := os.Getwd()
			r := operator.ClassifyIn(dir, command, !opts.irreversible, opts.outward)
			if opts.json {
				out := struct {
					Command            string `json:"command"`
					NeedsAuthorization bool   `json:"needs_authorization"`
					operator.Result
					Hook    *operator.HookAnswer           `json:"hook,omitempty"`
					Answers map[string]operator.HookAnswer `json:"answers,omitempty"`
				}{Command: command, NeedsAuthorization: r.NeedsAuthorization(), Result: r}
				if opts.explain {
					a := r.HookAnswerFor(presence, why)
					out.Hook, out.Answers = &a, map[string]operator.HookAnswer{}
					for _, p := range []operator.Presence{operator.PresenceUnknown, operator.Attended, operator.Unattended} {
						out.Answers[p.String()] = r.HookAnswerFor(p, "")
					}
				}
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
				if opts.explain {
					explainHook(streams, r, presence, why)
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
	cmd.Flags().BoolVar(&opts.explain, "explain", false, "say what the hook answers, for which presence and why")
	cmd.Flags().StringVar(&opts.presence, "presence", "", "with --explain: attended, unattended or unknown (default: read from the environment)")
	cli.CompleteFlag(cmd, "presence", cli.Values("attended", "unattended", "unknown"))
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitOK, When: "the command is reversible and inward"},
		cli.ExitDoc{Code: cli.ExitFinding, When: "the command needs authorization: irreversible or outward"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "no command given, a bad --presence, or a flag mistake"})
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

// explainHook prints the hook's answer for the presence assumed, and the
// answer for each presence (operator/POLICY.md's table applied).
func explainHook(streams *cli.IOStreams, r operator.Result, presence operator.Presence, why string) {
	w := streams.Out
	a := r.HookAnswerFor(presence, why)
	name := presence.String()
	if presence == operator.PresenceUnknown {
		name = "unknown, answered as attended"
	}
	fmt.Fprintf(w, "presence: %s — %s\n", name, why)
	fmt.Fprintf(w, "hook: %s\n", answerName(a))
	if a.Reason != "" {
		fmt.Fprintf(w, "  %s\n", a.Reason)
	}
	fmt.Fprintln(w, "by presence:")
	for _, p := range []operator.Presence{operator.Attended, operator.Unattended} {
		label := p.String()
		if p == operator.Attended {
			label = "attended or unknown"
		}
		fmt.Fprintf(w, "  %-20s %s\n", label, answerName(r.HookAnswerFor(p, "")))
	}
}

// answerName names a hook answer as the hook gives it.
func answerName(a operator.HookAnswer) string {
	switch {
	case a.Decision == operator.Allow && a.Context != "":
		return "allow, with a note for the model (recorded on the run)"
	case a.Decision == operator.Allow:
		return "allow (nothing printed: the agent's own permission rules decide)"
	}
	return a.Decision.String()
}
