package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
)

func newGradeCmd(a *app) *cobra.Command {
	var label string
	cmd := &cobra.Command{
		Use:   "grade <unit-id>… [--grade LABEL]",
		Short: "Mark units graded (inspected), deleted ones included",
		Long: `grade appends unit-grade records. A unit is graded once it has one, or once a
finding was added on it; coverage counts graded units over U_live ∪
U_ungraded-deleted.`,
		Args: cli.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.eng()
			if err != nil {
				return a.finish(nil, err, nil)
			}
			var lp *string
			if cmd.Flags().Changed("grade") {
				lp = &label
			}
			res, err := e.Grade(a.slug, args, lp)
			return a.finish(res, err, func(w io.Writer) {
				fmt.Fprintf(w, "graded %s; coverage %d/%d\n", strings.Join(res.Graded, " "), res.Coverage.Graded, res.Coverage.Counted)
			})
		},
	}
	cmd.Flags().StringVar(&label, "grade", "", "a label for the grade (e.g. clean)")
	return cmd
}
