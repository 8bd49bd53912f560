package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/agentrun"
)

type classifyOptions struct {
	IO *cli.IOStreams
	// args are the positional arguments.
	args []string

	json         bool
	irreversible bool
	outward      bool
	explain      bool
	presence     string
}

func newClassifyCmd(f *Factory, runF func(*classifyOptions) error) *cobra.Command {
	opts := &classifyOptions{IO: f.IOStreams}
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

The exit status is 1 when the command needs authorization: it is
irreversible or outward as read or as declared, or the hook would not let
it through on its own (a project policy's publishers, a protected file, a
person's command); 0 otherwise. The decision printed is what the
pre-tool-use hook would do with it, which reads the command alone (an
agent declares nothing): a command you declare outward needs
authorization, and a hook would still allow it when nothing in it
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
		RunE: cli.RunArgs(opts, &opts.args, runF, runClassify),
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

func runClassify(opts *classifyOptions) error {
	command := strings.Join(opts.args, " ")
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
	// a file from a branch, and reads the scripts it runs here.
	dir, _ := os.Getwd()
	an := shell.Analyze(command, dir)
	pol, err := agentrun.LoadPolicy(dir, policyschema.Validate)
	if err != nil {
		return cli.Failure(err)
	}
	v := an.Escalate(!opts.irreversible, opts.outward)
	decide := func(p operator.Presence, why string) operator.Decision {
		return operator.Decide(an, p, operator.RunState{PresenceWhy: why}, pol)
	}
	attended := decide(operator.PresenceUnknown, "")
	// Needing authorization is the command's nature (irreversible
	// or outward as read, or as declared) or anything the gate
	// would not let through on its own: the policy's publishers,
	// a protected file, a person's command.
	needs := v.NeedsAuthorization() || attended.Action != operator.Allow
	if opts.json {
		out := struct {
			Command            string `json:"command"`
			NeedsAuthorization bool   `json:"needs_authorization"`
			shell.Classification
			Findings []shell.Finding              `json:"findings"`
			Writes   []shell.Write                `json:"writes,omitempty"`
			Complete bool                         `json:"complete"`
			Gaps     []string                     `json:"gaps,omitempty"`
			Reads    []shell.FileRead             `json:"reads,omitempty"`
			Decision operator.Answer              `json:"decision"`
			Policy   string                       `json:"policy,omitempty"`
			Hook     *operator.Decision           `json:"hook,omitempty"`
			Answers  map[string]operator.Decision `json:"answers,omitempty"`
		}{Command: command, NeedsAuthorization: needs, Classification: v, Findings: an.Findings, Writes: an.Writes,
			Complete: an.Complete, Gaps: an.Gaps, Reads: an.Reads, Decision: attended.Action, Policy: pol.Source}
		if opts.explain {
			d := decide(presence, why)
			out.Hook, out.Answers = &d, map[string]operator.Decision{}
			for _, p := range []operator.Presence{operator.PresenceUnknown, operator.Attended, operator.Unattended} {
				out.Answers[p.String()] = decide(p, "")
			}
		}
		if err := cli.WriteJSON(opts.IO.Out, out); err != nil {
			return cli.Failure(err)
		}
	} else if v.NeedsAuthorization() && attended.Action == operator.Allow && len(an.Findings) == 0 {
		// Only the declaration escalated it: say so, rather than
		// print "allow" and exit 1.
		fmt.Fprintf(opts.IO.Out, "%s, %s (as declared): needs authorization; a hook would allow it (nothing in the command escalates it)\n",
			reversibility(v.Reversible), direction(v.Outward))
	} else {
		// The findings the gate adds from the project policy (its
		// publishers, its protected files) are the command's too.
		added := policyFindings(an.Findings, attended.Findings)
		rev := v.Reversible && len(added) == 0
		fmt.Fprintf(opts.IO.Out, "%s, %s: %s\n", reversibility(rev), direction(v.Outward || attended.Outward), attended.Action)
		for _, c := range v.Carveouts {
			fmt.Fprintf(opts.IO.Out, "  carve-out: %s (still asks)\n", c)
		}
		for _, f := range append(slices.Clone(an.Findings), added...) {
			line := "  " + f.Label + " [" + f.Where.String() + "]"
			if f.Note != "" {
				line += " — " + f.Note
			}
			fmt.Fprintln(opts.IO.Out, line)
		}
		if opts.explain {
			explainReads(opts.IO.Out, an, dir)
			explainHook(opts.IO, decide, presence, why, pol)
		}
	}
	if needs {
		return cli.SilentExit(1)
	}
	return nil
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

// explainReads prints what the analysis read one step removed — a script
// the command runs, a makefile, package.json, a changed test file — each
// with the SHA-256 of the bytes read (what a pinned call checks before it
// runs) and the findings that came from it, with the command in it that
// decided.
func explainReads(w io.Writer, an shell.Analysis, dir string) {
	if len(an.Reads) == 0 {
		return
	}
	fmt.Fprintln(w, "read one step removed (a pinned call runs only these bytes):")
	for _, r := range an.Reads {
		name := r.Path
		if rel, err := filepath.Rel(dir, r.Path); err == nil && !strings.HasPrefix(rel, "..") {
			name = rel
		}
		fmt.Fprintf(w, "  %s  sha256 %s\n", name, r.SHA256)
		decided := false
		for _, f := range an.Findings {
			if !strings.Contains(f.Note, "("+filepath.Base(name)+")") && !strings.Contains(f.Label, "("+name+")") {
				continue
			}
			decided = true
			line := "    decided: " + f.Label + " [" + f.Where.String() + "]"
			if f.Command != "" {
				line += " from: " + f.Command
			}
			fmt.Fprintln(w, line)
		}
		if !decided {
			fmt.Fprintln(w, "    nothing in it escalated the command")
		}
	}
}

// explainHook prints the hook's answer for the presence assumed, the rule
// that decided (a project policy rule by its id and reason), and the
// answer for each presence (operator/POLICY.md's table applied).
func explainHook(streams *cli.IOStreams, decide func(operator.Presence, string) operator.Decision, presence operator.Presence, why string, pol operator.Policy) {
	w := streams.Out
	d := decide(presence, why)
	name := presence.String()
	if presence == operator.PresenceUnknown {
		name = "unknown, answered as attended"
	}
	fmt.Fprintf(w, "presence: %s — %s\n", name, why)
	fmt.Fprintf(w, "hook: %s\n", answerName(d))
	if d.Reason != "" {
		fmt.Fprintf(w, "  %s\n", d.Reason)
	}
	fmt.Fprintf(w, "rule: %s\n", d.Rule)
	if pol.Source != "" {
		fmt.Fprintf(w, "policy: %s\n", pol.Source)
	}
	for _, r := range d.Policy {
		fmt.Fprintf(w, "  allowed by %s\n", r)
	}
	if d.NeedsRun {
		fmt.Fprintln(w, "  (refused unless a person authorized exactly this command; the run's drift and judgment are read then)")
	}
	fmt.Fprintln(w, "by presence:")
	for _, p := range []operator.Presence{operator.Attended, operator.Unattended} {
		label := p.String()
		if p == operator.Attended {
			label = "attended or unknown"
		}
		fmt.Fprintf(w, "  %-20s %s\n", label, answerName(decide(p, "")))
	}
}

// answerName names a hook answer as the hook gives it.
func answerName(d operator.Decision) string {
	switch {
	case d.Action == operator.Allow && d.Context != "":
		return "allow, with a note for the model (recorded on the run)"
	case d.Action == operator.Allow && d.Rule == operator.RulePolicy:
		return "allow (the project policy lets it through; recorded on the run)"
	case d.Action == operator.Allow:
		return "allow (nothing printed: the agent's own permission rules decide)"
	}
	return d.Action.String()
}

// policyFindings are the decision's findings the analysis did not make:
// what the project policy and the protected files added.
func policyFindings(analysed, decided []shell.Finding) []shell.Finding {
	var out []shell.Finding
	for _, f := range decided {
		if !slices.ContainsFunc(analysed, func(a shell.Finding) bool { return a.Label == f.Label }) {
			out = append(out, f)
		}
	}
	return out
}
