package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/ponder"
)

func newReportCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "report",
		Short: "Show per-pass metrics and verdicts, then the live findings (read-only)",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.eng()
			if err != nil {
				return a.finish(nil, err, nil)
			}
			res, err := e.Report(a.slug)
			return a.finish(res, err, func(w io.Writer) { printReport(w, res) })
		},
	}
}

func printReport(w io.Writer, r *ponder.ReportResult) {
	fmt.Fprintf(w, "%s: %s — %s at pass %d; coverage %d/%d\n\n", r.Slug, term(r.Subject), r.Status, r.Pass, r.Coverage.Graded, r.Coverage.Counted)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pass\tverdict\trule\tcoverage\tchurn\tnovelty\tthrash\tvoices\tdeltaVoices\tfloor\tsurprise\tdecision")
	for _, p := range r.Passes {
		if p.Metrics == nil {
			fmt.Fprintf(tw, "%d\t—\t—\t—\t—\t—\t—\t—\t—\t—\t—\t%s\n", p.Pass, sval(p.Decision))
			continue
		}
		m := p.Metrics
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", p.Pass, sval(p.Verdict), sval(p.Rule),
			m.Graded, m.Counted, fcol(m.Churn), fcol(m.Novelty), fcol(m.Thrash), m.Voices, m.DeltaVoices, m.ConfidenceFloor, fcol(m.Surprise), sval(p.Decision))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nlive findings (%d):\n", len(r.Findings))
	for _, f := range r.Findings {
		fmt.Fprintf(w, "  %-6s %s  %s %s (confidence %s): %s\n", f.Severity, f.ID, f.UnitID, term(f.Path), fnum(&f.Confidence), term(f.Text))
		if f.Recommendation != nil && *f.Recommendation != "" {
			fmt.Fprintf(w, "         recommendation: %s\n", term(*f.Recommendation))
		}
		if f.Evidence != nil && *f.Evidence != "" {
			fmt.Fprintf(w, "         evidence: %s\n", term(*f.Evidence))
		}
	}
	if len(r.Ungraded) > 0 {
		fmt.Fprintf(w, "\nungraded units (%d): %s\n", len(r.Ungraded), joinCapped(r.Ungraded, " "))
	}
}
