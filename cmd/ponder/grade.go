package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

type gradeOptions struct {
	// App is what every ponder command shares.
	App *app
	// args are the positional arguments.
	args []string

	label string
}

func newGradeCmd(a *app, runF func(*gradeOptions) error) *cobra.Command {
	opts := &gradeOptions{App: a}
	cmd := &cobra.Command{
		Use:   "grade <unit-id|path|->… [--grade LABEL]",
		Short: "Mark units graded (inspected), deleted ones included",
		Long: `grade appends unit-grade records. Name a unit by its id (u0001) or by its
path as units.json stores it (ponder units --list shows both); - reads ids
and paths from stdin, one a line. A unit is graded once it has a grade, or
once a finding was added on it; coverage counts graded units over U_live ∪
U_ungraded-deleted.`,
		Example: `  ponder grade u0001 u0002 --grade clean
  ponder grade src/retry.go
  ponder units --list --json | jq -r '.units[].id' | ponder grade -`,
		Args: cli.MinimumNArgs(1),
		RunE: cli.RunArgs(opts, &opts.args, runF, runGrade),
	}
	cmd.Flags().StringVar(&opts.label, "grade", "", "a opts.label for the grade (e.g. clean)")
	cli.CompleteFlag(cmd, "grade", cli.Values("clean"))
	cmd.ValidArgsFunction = completeUnits
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "a name that is no unit, all listed; unseeded or not active (stateError)"}, localWriteFailed)
	return cmd
}

func runGrade(opts *gradeOptions) error {
	var units []string
	for _, arg := range opts.args {
		if arg != "-" {
			units = append(units, arg)
			continue
		}
		data, err := opts.App.readInput("-")
		if err != nil {
			return opts.App.finish(nil, err, nil)
		}
		units = append(units, inputLines(data)...)
	}
	if len(units) == 0 {
		return opts.App.finish(nil, cli.Usagef("grade: stdin named no unit"), nil)
	}
	var lp *string
	if opts.App.changed("grade") {
		lp = &opts.label
	}
	grade := func(e *ponder.Engine, slug string) (*ponder.GradeResult, error) { return e.Grade(slug, units, lp) }
	return call(opts.App, grade, func(w io.Writer, res *ponder.GradeResult) {
		fmt.Fprintf(w, "graded %s; coverage %d/%d\n", joinCapped(res.Graded, " "), res.Grading.Graded, res.Grading.Counted)
	})
}

// inputLines are the non-blank lines of data, as they are (a name may
// begin or end with a space); a byte order mark and line-ending CRs are
// dropped.
func inputLines(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSuffix(sc.Text(), "\r"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
