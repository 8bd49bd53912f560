package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/operator/method"
)

type lintOptions struct {
	IO *cli.IOStreams
	// args are the positional arguments.
	args []string

	json    bool
	shipped bool
}

type lintReport struct {
	File     string           `json:"file"`
	Findings []method.Finding `json:"findings"`
	Error    string           `json:"error,omitempty"`
}

func newLintCmd(f *Factory, runF func(*lintOptions) error) *cobra.Command {
	opts := &lintOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "lint [--json] [--shipped] FILE...",
		Short: "Lint workflow methods against the grammar's dictionary and shape rules",
		Long: `lint reads each method spec (JSON: spec_version 1, goal, steps [{name, goal,
irreversible, outward}]) and reports, per step, unknown verbs, under- and
over-declared reversibility or reach, goals that restate the name, then the
five phase rules and the shape language over the method's phases.
--shipped lints the methods built into laserbrain instead of files. --json
prints one object a file: {"file", "findings", "error"}.`,
		Example: `  laserbrain lint release.json
  laserbrain lint --shipped --json`,
		Args:              cli.ArbitraryArgs,
		ValidArgsFunction: cli.Files("json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.args = args
			if runF != nil {
				return runF(opts)
			}
			return runLint(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the findings as JSON")
	cmd.Flags().BoolVar(&opts.shipped, "shipped", false, "lint the methods built into laserbrain")
	cli.SetExits(cmd,
		cli.ExitDoc{Code: cli.ExitOK, When: "every method is clean"},
		cli.ExitDoc{Code: cli.ExitFinding, When: "a finding was reported"},
		cli.ExitDoc{Code: cli.ExitUsage, When: "no FILE, or a file that cannot be read or is not a method spec"})
	return cmd
}

func runLint(opts *lintOptions) error {
	if len(opts.args) == 0 && !opts.shipped {
		return cli.Usagef("no FILE given (or use --shipped)")
	}
	var reports []lintReport
	if opts.shipped {
		methods, names := method.Shipped()
		for _, n := range names {
			reports = append(reports, lintReport{File: "(built-in) " + n, Findings: method.Lint(methods[n])})
		}
	}
	for _, path := range opts.args {
		rep := lintReport{File: path}
		data, err := os.ReadFile(path)
		if err == nil {
			var m *method.Method
			if m, err = method.Parse(data); err == nil {
				rep.Findings = method.Lint(m)
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
