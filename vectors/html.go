package vectors

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/htmlreport"
	"github.com/laserkit/laserkit/internal/text"
)

// WriteHTML writes the reports of one implementation as a self-contained
// HTML page in the report's style: the counts per kind as a bar chart and a
// table, then each kind's failures with the case, its input, the expected
// and actual answers and what differs.
func WriteHTML(w io.Writer, impl string, meta []htmlreport.Field, reports []*Report) error {
	doc := &htmlreport.Document{
		Title:    "Vectors: " + impl,
		Subtitle: "Every case of every kind sent to the implementation, and what it answered.",
		Meta:     meta,
	}
	var passed, failed, errored, skipped float64
	bars := htmlreport.Bars{ID: "kinds", Title: "Cases per kind", CategoryTitle: "kind",
		Desc: "For each vector kind, how many cases passed, failed, errored and were skipped."}
	stacks := []htmlreport.BarStack{
		{Name: "passed", Tone: htmlreport.Good, Pattern: htmlreport.Solid},
		{Name: "failed", Tone: htmlreport.Bad, Pattern: htmlreport.Hatch},
		{Name: "errored", Tone: htmlreport.Warn, Pattern: htmlreport.CrossHatch},
		{Name: "skipped", Tone: htmlreport.Neutral, Pattern: htmlreport.Dots},
	}
	table := htmlreport.Table{ID: "counts", Caption: "Counts per kind",
		Columns: []htmlreport.Column{{Title: "kind"}, {Title: "passed", Numeric: true}, {Title: "failed", Numeric: true},
			{Title: "errored", Numeric: true}, {Title: "skipped", Numeric: true}, {Title: "notes", Wrap: true}}}
	for _, r := range reports {
		bars.Categories = append(bars.Categories, r.Kind)
		vals := []int{r.Passed, r.Failed(), r.Errored(), r.Skipped}
		for i, v := range vals {
			stacks[i].Values = append(stacks[i].Values, float64(v))
		}
		passed += float64(r.Passed)
		failed += float64(r.Failed())
		errored += float64(r.Errored())
		skipped += float64(r.Skipped)
		var notes []string
		if r.SkipWhy != "" && r.Skipped > 0 {
			notes = append(notes, "skipped: "+r.SkipWhy)
		}
		for _, k := range slices.Sorted(maps.Keys(r.Tally)) {
			notes = append(notes, fmt.Sprintf("%d %s", r.Tally[k], k))
		}
		table.Rows = append(table.Rows, []string{r.Kind, strconv.Itoa(r.Passed), strconv.Itoa(r.Failed()),
			strconv.Itoa(r.Errored()), strconv.Itoa(r.Skipped), strings.Join(notes, "; ")})
	}
	bars.Stacks = stacks
	summary := htmlreport.Section{ID: "summary", Title: "Summary", Blocks: []htmlreport.Block{
		htmlreport.Stats{Items: []htmlreport.Stat{
			{Label: "passed", Value: htmlreport.FormatNumber(passed), Tone: htmlreport.Good},
			{Label: "failed", Value: htmlreport.FormatNumber(failed), Tone: toneIf(failed > 0, htmlreport.Bad)},
			{Label: "errored", Value: htmlreport.FormatNumber(errored), Tone: toneIf(errored > 0, htmlreport.Warn)},
			{Label: "skipped", Value: htmlreport.FormatNumber(skipped)},
		}},
	}}
	if failed+errored == 0 {
		summary.Blocks = append(summary.Blocks, htmlreport.Note{Kind: htmlreport.Fine, Text: "every case that was run agreed with the expected answer"})
	} else {
		summary.Blocks = append(summary.Blocks, htmlreport.Note{Kind: htmlreport.Warning,
			Text: fmt.Sprintf("%s cases failed and %s errored; each is listed under its kind", htmlreport.FormatNumber(failed), htmlreport.FormatNumber(errored))})
	}
	if len(reports) > 0 {
		summary.Blocks = append(summary.Blocks, bars, table)
	}
	doc.Sections = append(doc.Sections, summary)
	for _, r := range reports {
		if len(r.Failures) == 0 {
			continue
		}
		sec := htmlreport.Section{ID: "kind-" + r.Kind, Title: r.Kind, Intro: r.Summary()}
		ft := htmlreport.Table{Caption: r.Kind + ": cases that failed or errored",
			Columns: []htmlreport.Column{{Title: "case"}, {Title: "status"}, {Title: "what differs", Wrap: true},
				{Title: "in", Wrap: true}, {Title: "expected", Wrap: true}, {Title: "actual", Wrap: true}}}
		for _, f := range r.Failures {
			status, what := "failed", strings.Join(f.Diff, "\n")
			if f.Error != "" {
				status, what = "errored", f.Error
			}
			ft.Rows = append(ft.Rows, []string{f.Label, status, what, text.Clip(f.In, 600), text.Clip(f.Expected, 600), text.Clip(f.Actual, 600)})
		}
		sec.Blocks = append(sec.Blocks, ft)
		doc.Sections = append(doc.Sections, sec)
	}
	return htmlreport.Write(w, doc)
}

func toneIf(cond bool, t htmlreport.Tone) htmlreport.Tone {
	if cond {
		return t
	}
	return htmlreport.Neutral
}
