package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/method"
)

type lintOptions struct {
	IO *cli.IOStreams
	// args are the positional arguments.
	args []string

	json       bool
	shipped    bool
	vocabulary bool
}

type lintReport struct {
	File     string           `json:"file"`
	Findings []method.Finding `json:"findings"`
	Error    string           `json:"error,omitempty"`
}

func newLintCmd(f *Factory, runF func(*lintOptions) error) *cobra.Command {
	opts := &lintOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "lint [--json] [--shipped] FILE... | --vocabulary",
		Short: "Lint workflow methods against the grammar's dictionary and shape rules",
		Long: `lint reads each method spec (JSON: spec_version 1, goal, steps [{name, goal,
irreversible, outward}]) and reports, per step, unknown verbs, under- and
over-declared reversibility or reach, goals that restate the name, then the
five phase rules and the shape language over the method's phases; a method
with no steps is reported too (no-steps).
--shipped lints the methods built into laserbrain instead of files. --json
prints one object a file: {"file", "findings", "error"}.

The vocabulary: a step's verb is the first word of its name (up to -, _ or
a space), looked up in the grammar's dictionary, which gives the verb its
default reversibility and reach and its phase of the method backbone
(check, change, verify, record, act, confirm, reconcile); the phase rules
and the shape language are over those phases. --vocabulary prints them all
(with --json, as one object); laserbrain grammar show /dictionary has the
dictionary whole.`,
		Example: `  laserbrain lint release.json
  laserbrain lint --shipped --json
  laserbrain lint --vocabulary`,
		Args:              cli.ArbitraryArgs,
		ValidArgsFunction: cli.Files("json"),
		RunE:              cli.RunArgs(opts, &opts.args, runF, runLint),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the findings as JSON")
	cmd.Flags().BoolVar(&opts.shipped, "shipped", false, "lint the methods built into laserbrain")
	cmd.Flags().BoolVar(&opts.vocabulary, "vocabulary", false, "print the step verbs, their defaults and phases, the phase rules and the shape language")
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitOK, When: "every method is clean"},
		cli.ExitDoc{Code: cli.ExitFinding, When: "a finding was reported"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "no FILE, or a file that cannot be read or is not a method spec"})
	return cmd
}

func runLint(opts *lintOptions) error {
	if opts.vocabulary {
		if len(opts.args) > 0 || opts.shipped {
			return cli.Usagef("--vocabulary prints the dictionary; give it without FILE or --shipped")
		}
		return writeVocabulary(opts.IO, opts.json)
	}
	if len(opts.args) == 0 && !opts.shipped {
		return cli.Usagef("no FILE given (or use --shipped, or --vocabulary for the verbs, phases and shapes)")
	}
	var reports []lintReport
	if opts.shipped {
		methods, names := method.Shipped()
		for _, n := range names {
			reports = append(reports, lintReport{File: "(built-in) " + n, Findings: method.Review(methods[n])})
		}
	}
	for _, path := range opts.args {
		rep := lintReport{File: path}
		data, err := os.ReadFile(path)
		if err == nil {
			var m *method.Method
			if m, err = method.Parse(data); err == nil {
				rep.Findings = method.Review(m)
			}
		}
		if err != nil {
			rep.Error = err.Error()
		}
		reports = append(reports, rep)
	}
	findings, broken := 0, 0
	for i := range reports {
		if reports[i].Findings == nil {
			reports[i].Findings = []method.Finding{}
		}
		findings += len(reports[i].Findings)
		if reports[i].Error != "" {
			broken++
		}
	}
	if opts.json {
		if reports == nil {
			reports = []lintReport{}
		}
		if err := cli.WriteJSON(opts.IO.Out, reports); err != nil {
			return cli.Failure(err)
		}
	} else {
		for _, r := range reports {
			switch {
			case r.Error != "":
				fmt.Fprintf(opts.IO.ErrOut, "%s: %s\n", r.File, r.Error)
			case len(r.Findings) == 0:
				fmt.Fprintf(opts.IO.Out, "%s: ok\n", r.File)
			}
			for _, f := range r.Findings {
				verb := ""
				if f.Verb != nil {
					verb = " (" + *f.Verb + ")"
				}
				fmt.Fprintf(opts.IO.Out, "%s: %s: %s%s: %s\n", r.File, f.Step, f.Finding, verb, f.Note)
			}
		}
	}
	switch {
	case broken > 0:
		return cli.SilentExit(cli.ExitUsage)
	case findings > 0:
		return cli.SilentExit(cli.ExitFinding)
	}
	return nil
}

// vocabulary is what lint checks a method's steps against, from the
// grammar's dictionary.
type vocabulary struct {
	Verbs  []vocabularyVerb           `json:"verbs"`
	Phases []vocabularyPhase          `json:"phases"`
	Rules  []operator.PhaseRule       `json:"rules"`
	Shapes []operator.ShapeProduction `json:"shape_language"`
}

type vocabularyVerb struct {
	Verb       string `json:"verb"`
	Phase      string `json:"phase"`
	Reversible bool   `json:"reversible"`
	Outward    bool   `json:"outward"`
	Gloss      string `json:"gloss"`
}

type vocabularyPhase struct {
	Phase   string   `json:"phase"`
	Meaning string   `json:"meaning"`
	Verbs   []string `json:"verbs"`
}

func readVocabulary() vocabulary {
	var v vocabulary
	byPhase := map[operator.Phase][]string{}
	for _, verb := range operator.StepVerbs() {
		d, _ := operator.LookupVerb(verb)
		row := vocabularyVerb{Verb: verb, Reversible: d.Reversible, Outward: d.Outward, Gloss: d.Gloss}
		if p, ok := operator.PhaseOfVerb(verb); ok {
			row.Phase = p.String()
			byPhase[p] = append(byPhase[p], verb)
		}
		v.Verbs = append(v.Verbs, row)
	}
	for _, p := range operator.Phases() {
		v.Phases = append(v.Phases, vocabularyPhase{Phase: p.String(), Meaning: p.Meaning(), Verbs: append([]string{}, byPhase[p]...)})
	}
	v.Rules = operator.PhaseRules()
	v.Shapes = operator.ShapeProductions()
	return v
}

// writeVocabulary prints the vocabulary: as one JSON object, or for a
// person writing a method.
func writeVocabulary(streams *cli.IOStreams, asJSON bool) error {
	v := readVocabulary()
	if asJSON {
		return cli.WriteJSON(streams.Out, v)
	}
	w := streams.Out
	fmt.Fprintln(w, "Phases of the method backbone, in order, and the step verbs of each:")
	for _, p := range v.Phases {
		verbs := strings.Join(p.Verbs, " ")
		if verbs == "" {
			verbs = "(no verb of its own)"
		}
		fmt.Fprintf(w, "  %-10s %s\n  %-10s   %s\n", p.Phase, verbs, "", p.Meaning)
	}
	fmt.Fprintln(w, "\nStep verbs (the first word of a step's name) and their defaults; declare a step\n\"irreversible\": true or \"outward\": true where it is:")
	for _, r := range v.Verbs {
		reach := "reversible"
		if !r.Reversible {
			reach = "IRREVERSIBLE"
		}
		if r.Outward {
			reach += ", OUTWARD"
		}
		fmt.Fprintf(w, "  %-9s %-10s %-24s %s\n", r.Verb, r.Phase, reach, r.Gloss)
	}
	fmt.Fprintln(w, "\nPhase rules (reported, never enforced):")
	for _, r := range v.Rules {
		fmt.Fprintf(w, "  %-22s %s\n", r.Name, r.Says)
	}
	fmt.Fprintln(w, "\nThe shape language (a method's phases, adjacent repeats collapsed):")
	for _, p := range v.Shapes {
		fmt.Fprintf(w, "  %-10s = %s\n", p.Name, p.Rule)
	}
	return nil
}
