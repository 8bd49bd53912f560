package htmlreport

import (
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/text"
)

// BarStack is one part of every bar (deny, ask, ...), with its own fill.
type BarStack struct {
	Name    string
	Tone    Tone
	Pattern Pattern
	// Values has one value per category.
	Values []float64
}

// Bars is a horizontal stacked bar chart of counts per category. Each
// bar's label and its parts' counts are written beside it.
type Bars struct {
	ID         string
	Title      string
	Subtitle   string
	Desc       string
	Categories []string
	Stacks     []BarStack
	// Format writes a value (nil: FormatNumber).
	Format func(float64) string
	// CategoryTitle heads the table's first column.
	CategoryTitle string
}

const (
	barsW   = 440.0
	barRowH = 38.0
	barTop  = 8.0
)

func (b Bars) fmt(v float64) string {
	if b.Format != nil {
		return b.Format(v)
	}
	return FormatNumber(v)
}

func (b Bars) render(w *writer) {
	id := w.id(b.ID)
	totals := make([]float64, len(b.Categories))
	max := 0.0
	for i := range b.Categories {
		for _, s := range b.Stacks {
			if i < len(s.Values) {
				totals[i] += s.Values[i]
			}
		}
		if totals[i] > max {
			max = totals[i]
		}
	}
	h := barTop*2 + barRowH*float64(len(b.Categories))
	if len(b.Categories) == 0 {
		h = 40
	}
	w.openPlot("bars", id, b.Title, b.Subtitle, barsW, h)
	w.closePlotHead(id, b.Title, b.describe(totals))
	w.raw("<defs>")
	for _, s := range b.Stacks {
		w.pattern(id, s.Tone, s.Pattern)
	}
	w.raw("</defs>")
	if len(b.Categories) == 0 {
		w.raw("<text x=\"8\" y=\"24\">nothing to count</text>")
	}
	x0, x1 := 8.0, barsW-8.0
	for i, cat := range b.Categories {
		y := barTop + barRowH*float64(i)
		w.raw("<g class=\"bar\" data-category=\"")
		w.attr(cat)
		w.raw("\" data-total=\"")
		w.raw(FormatNumber(totals[i]))
		w.raw("\"><text class=\"bar-label\" x=\"")
		w.num(x0)
		w.raw("\" y=\"")
		w.num(y + 12)
		w.raw("\">")
		w.text(text.Clip(cat, 64))
		w.raw("</text><text class=\"bar-count\" text-anchor=\"end\" x=\"")
		w.num(x1)
		w.raw("\" y=\"")
		w.num(y + 12)
		w.raw("\">")
		w.text(b.counts(i, totals[i]))
		w.raw("</text>")
		x := x0
		for _, s := range b.Stacks {
			v := 0.0
			if i < len(s.Values) {
				v = s.Values[i]
			}
			if v <= 0 {
				continue
			}
			width := 0.0
			if max > 0 {
				width = v / max * (x1 - x0)
			}
			w.raw("<rect class=\"seg ")
			w.raw(s.Tone.class())
			w.raw("\" data-stack=\"")
			w.attr(s.Name)
			w.raw("\" data-value=\"")
			w.raw(FormatNumber(v))
			w.raw("\" x=\"")
			w.num(x)
			w.raw("\" y=\"")
			w.num(y + 17)
			w.raw("\" width=\"")
			w.num(width)
			w.raw("\" height=\"14\" fill=\"")
			w.fill(id, s.Tone, s.Pattern)
			w.raw("\"><title>")
			w.text(cat + ": " + s.Name + " " + b.fmt(v))
			w.raw("</title></rect>")
			x += width
		}
		w.raw("</g>")
		w.maybeFlush()
	}
	w.raw("</svg>\n")
	var l Legend
	for _, s := range b.Stacks {
		l.Fills = append(l.Fills, LegendFill{Label: s.Name, Tone: s.Tone, Pattern: s.Pattern})
	}
	l.render(w)
	w.raw("<details class=\"equiv\"><summary>")
	w.text("Table: " + b.Title + " (" + strconv.Itoa(len(b.Categories)) + " rows)")
	w.raw("</summary>")
	w.table(b.table(totals))
	w.raw("</details></figure>\n")
}

func (b Bars) counts(i int, total float64) string {
	var parts []string
	for _, s := range b.Stacks {
		if i < len(s.Values) && s.Values[i] > 0 {
			parts = append(parts, s.Name+" "+b.fmt(s.Values[i]))
		}
	}
	if len(parts) > 1 {
		return strings.Join(parts, " · ") + " = " + b.fmt(total)
	}
	return strings.Join(parts, " · ")
}

func (b Bars) describe(totals []float64) string {
	var sb strings.Builder
	sb.WriteString(b.Desc)
	for i, c := range b.Categories {
		if sb.Len() > 0 {
			sb.WriteString(" ")
		}
		sb.WriteString(c + ": " + b.counts(i, totals[i]) + ".")
		if i == 30 && len(b.Categories) > 32 {
			sb.WriteString(" … and " + strconv.Itoa(len(b.Categories)-31) + " more in the table.")
			break
		}
	}
	return sb.String()
}

func (b Bars) table(totals []float64) Table {
	ct := b.CategoryTitle
	if ct == "" {
		ct = "category"
	}
	t := Table{Caption: b.Title, Columns: []Column{{Title: ct, Wrap: true}}}
	for _, s := range b.Stacks {
		t.Columns = append(t.Columns, Column{Title: s.Name, Numeric: true})
	}
	t.Columns = append(t.Columns, Column{Title: "total", Numeric: true})
	for i, c := range b.Categories {
		row := []string{c}
		for _, s := range b.Stacks {
			v := 0.0
			if i < len(s.Values) {
				v = s.Values[i]
			}
			row = append(row, b.fmt(v))
		}
		t.Rows = append(t.Rows, append(row, b.fmt(totals[i])))
	}
	return t
}
