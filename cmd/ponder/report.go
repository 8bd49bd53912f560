package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/htmlreport"
	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/ponder"
	preport "github.com/laserkit/laserkit/ponder/report"
)

type reportOptions struct {
	// App is what every ponder command shares.
	App *app

	html string
	all  bool
}

func newReportCmd(a *app, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{App: a}
	cmd := &cobra.Command{
		Use:   "report [--html FILE [--all]]",
		Short: "Show per-pass metrics and verdicts, then the live findings (read-only); --html draws them",
		Long: `Show per-pass metrics and verdicts, then the live findings. Read-only.

With --html FILE, write one self-contained HTML page instead: each pass's
metrics against Rule 6's thresholds, the verdicts, and the churn forecasts
against the churn that came. The page fetches nothing and has no script.
--all puts every session under .ponder/ on the page.`,
		Example: `  ponder report
  ponder report --html audit.html --all`,
		Args: cli.NoArgs,
		RunE: cli.RunWith(opts, runF, runReport),
	}
	cmd.Flags().StringVar(&opts.html, "html", "", "write the report as a self-contained HTML page to FILE")
	cmd.Flags().BoolVar(&opts.all, "all", false, "with --html: every session, not only the current one")
	cli.CompleteFlag(cmd, "html", cli.Files("html"))
	cli.SetExits(cmd, cli.ExitDoc{Code: cli.ExitUsage, When: "no session, --all without --html or with --slug, or an --html path that cannot be written"}, cli.ExitDoc{Code: cli.ExitFailure})
	return cmd
}

func runReport(opts *reportOptions) error {
	if opts.all && opts.html == "" {
		return opts.App.finish(nil, cli.Usagef("--all needs --html FILE (the text report shows one session)"), nil)
	}
	if opts.all && opts.App.slug != "" {
		return opts.App.finish(nil, cli.Usagef("--all and --slug exclude each other"), nil)
	}
	e, err := opts.App.eng()
	if err != nil {
		return opts.App.finish(nil, err, nil)
	}
	if opts.html != "" {
		if err := fsx.CheckParentDir(opts.html); err != nil {
			return opts.App.finish(nil, cli.Usagef("--html: %v", err), nil)
		}
		res, err := writeHTMLReport(e, opts.App.slug, opts)
		return opts.App.finish(res, err, func(w io.Writer) {
			fmt.Fprintf(w, "wrote %s: %s, %s\n", res.HTML, text.Plural(int64(len(res.Sessions)), "session"), text.Plural(int64(res.Bytes), "byte"))
		})
	}
	res, err := e.Report(opts.App.slug)
	return opts.App.finish(res, err, func(w io.Writer) { printReport(w, res) })
}

// htmlReportResult is what report --html says it did.
type htmlReportResult struct {
	HTML     string   `json:"html"`
	Sessions []string `json:"sessions"`
	Bytes    int      `json:"bytes"`
}

func writeHTMLReport(e *ponder.Engine, slug string, opts *reportOptions) (*htmlReportResult, error) {
	var sessions []preport.Session
	if opts.all {
		all, err := preport.LoadAll(e)
		if err != nil {
			return nil, err
		}
		sessions = all
	} else {
		s, err := preport.Load(e, slug)
		if err != nil {
			return nil, err
		}
		sessions = []preport.Session{s}
	}
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	page := htmlreport.Render(preport.Document(sessions, root, clock()))
	if err := fsx.WriteFileInDir(opts.html, page, 0o644); err != nil {
		return nil, cli.Usagef("--html: %v", err)
	}
	res := &htmlReportResult{HTML: opts.html, Sessions: []string{}, Bytes: len(page)}
	for _, s := range sessions {
		res.Sessions = append(res.Sessions, s.Slug)
	}
	return res, nil
}

func printReport(w io.Writer, r *ponder.ReportResult) {
	fmt.Fprintf(w, "%s: %s — %s at pass %d; coverage %d/%d\n\n", r.Slug, term(r.Subject), r.Status, r.Pass, r.Grading.Graded, r.Grading.Counted)
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
