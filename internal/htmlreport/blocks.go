package htmlreport

// NoteKind is what a note is for.
type NoteKind uint8

const (
	// Plain is a remark.
	Plain NoteKind = iota
	// Pending says a part of the report has no data source yet, and which.
	Pending
	// Warning is something the reader must not miss (a failed verification).
	Warning
	// Fine is a check that passed.
	Fine
)

var noteClasses = [...]string{"note", "note pending", "note warn", "note ok"}
var notePrefixes = [...]string{"", "Not available yet: ", "Warning: ", "OK: "}

// Note is a paragraph; its kind is written out as a word, not only styled.
type Note struct {
	Kind NoteKind
	Text string
}

func (n Note) render(w *writer) {
	w.raw("<p class=\"")
	w.raw(noteClasses[n.Kind])
	w.raw("\" data-note=\"")
	w.raw([...]string{"plain", "pending", "warning", "fine"}[n.Kind])
	w.raw("\">")
	if p := notePrefixes[n.Kind]; p != "" {
		w.raw("<strong>")
		w.text(p)
		w.raw("</strong>")
	}
	w.text(n.Text)
	w.raw("</p>\n")
}

// Heading is a sub-heading inside a section.
type Heading struct {
	ID   string
	Text string
}

func (h Heading) render(w *writer) {
	w.raw("<h3")
	if h.ID != "" {
		w.raw(" id=\"")
		w.attr(w.id(h.ID))
		w.raw("\"")
	}
	w.raw(">")
	w.text(h.Text)
	w.raw("</h3>\n")
}

// Fields is a list of name: value pairs.
type Fields struct{ Items []Field }

func (f Fields) render(w *writer) {
	w.raw("<dl class=\"fields\">")
	for _, it := range f.Items {
		w.raw("<dt>")
		w.text(it.Name)
		w.raw("</dt><dd>")
		w.text(it.Value)
		w.raw("</dd>")
	}
	w.raw("</dl>\n")
}

// Stat is one headline number.
type Stat struct {
	Label string
	Value string
	// Tone marks a number that needs attention; the border's style differs
	// by tone too.
	Tone Tone
}

// Stats is a row of headline numbers.
type Stats struct{ Items []Stat }

func (s Stats) render(w *writer) {
	w.raw("<ul class=\"stats\">")
	for _, it := range s.Items {
		w.raw("<li class=\"")
		w.raw(it.Tone.class())
		w.raw("\" data-stat=\"")
		w.attr(it.Label)
		w.raw("\"><span class=\"v\">")
		w.text(it.Value)
		w.raw("</span><span class=\"k\">")
		w.text(it.Label)
		w.raw("</span></li>")
	}
	w.raw("</ul>\n")
}

// Column is a table column.
type Column struct {
	Title string
	// Numeric columns are right-aligned with tabular figures.
	Numeric bool
	// Wrap lets long text (reasons, paths) wrap.
	Wrap bool
}

// Table is a data table.
type Table struct {
	// ID, when set, is the table's id (made unique).
	ID      string
	Caption string
	Columns []Column
	Rows    [][]string
	// Collapsed puts the table in a <details> with Summary as its toggle.
	Collapsed bool
	Summary   string
}

func (t Table) render(w *writer) {
	if t.Collapsed {
		w.raw("<details><summary>")
		w.text(t.Summary)
		w.raw("</summary>")
	}
	w.table(t)
	if t.Collapsed {
		w.raw("</details>\n")
	}
}

func (w *writer) table(t Table) {
	w.raw("<div class=\"tablewrap\"><table")
	if t.ID != "" {
		w.raw(" id=\"")
		w.attr(w.id(t.ID))
		w.raw("\"")
	}
	w.raw(">")
	if t.Caption != "" {
		w.raw("<caption>")
		w.text(t.Caption)
		w.raw("</caption>")
	}
	w.raw("<thead><tr>")
	for _, c := range t.Columns {
		w.raw("<th scope=\"col\"")
		if c.Numeric {
			w.raw(" class=\"n\"")
		}
		w.raw(">")
		w.text(c.Title)
		w.raw("</th>")
	}
	w.raw("</tr></thead><tbody>")
	for _, row := range t.Rows {
		w.raw("<tr>")
		for i, cell := range row {
			w.raw("<td")
			if i < len(t.Columns) {
				if t.Columns[i].Numeric {
					w.raw(" class=\"n\"")
				} else if t.Columns[i].Wrap {
					w.raw(" class=\"wrap\"")
				}
			}
			w.raw(">")
			w.text(cell)
			w.raw("</td>")
		}
		w.raw("</tr>")
		w.maybeFlush()
	}
	w.raw("</tbody></table></div>\n")
}

// blocks renders each block in turn, passing over a nil one.
func (w *writer) blocks(bs []Block) {
	for _, b := range bs {
		if b != nil {
			b.render(w)
		}
	}
}

// Grid lays blocks out side by side (small multiples), one column on a
// phone.
type Grid struct {
	Blocks []Block
}

func (g Grid) render(w *writer) {
	w.raw("<div class=\"grid\">\n")
	w.blocks(g.Blocks)
	w.raw("</div>\n")
}

// Details is a collapsible group.
type Details struct {
	Summary string
	Open    bool
	Blocks  []Block
}

func (d Details) render(w *writer) {
	w.raw("<details")
	if d.Open {
		w.raw(" open=\"open\"")
	}
	w.raw("><summary>")
	w.text(d.Summary)
	w.raw("</summary>\n")
	w.blocks(d.Blocks)
	w.raw("</details>\n")
}

// LegendLine is a series or threshold in a legend.
type LegendLine struct {
	Label string
	Tone  Tone
	Dash  Dash
}

// LegendFill is a shaded area in a legend.
type LegendFill struct {
	Label   string
	Tone    Tone
	Pattern Pattern
}

// Legend explains marks, lines and fills once for a group of plots.
type Legend struct {
	Title string
	Marks MarkSet
	Lines []LegendLine
	Fills []LegendFill
}

func (l Legend) render(w *writer) {
	w.raw("<ul class=\"legend\" aria-label=\"")
	if l.Title != "" {
		w.attr(l.Title)
	} else {
		w.raw("Legend")
	}
	w.raw("\">")
	if l.Title != "" {
		w.raw("<li><strong>")
		w.text(l.Title)
		w.raw("</strong></li>")
	}
	for _, ln := range l.Lines {
		w.raw("<li>")
		w.lineSwatch(ln.Tone, ln.Dash)
		w.text(ln.Label)
		w.raw("</li>")
	}
	prefix := w.id("lg")
	for _, f := range l.Fills {
		w.raw("<li>")
		w.fillSwatch(w.id(prefix), f.Tone, f.Pattern)
		w.text(f.Label)
		w.raw("</li>")
	}
	for _, m := range l.Marks {
		w.raw("<li data-legend-mark=\"")
		w.attr(m.Key)
		w.raw("\">")
		w.markSwatch(m)
		w.text(m.Label)
		w.raw("</li>")
	}
	w.raw("</ul>\n")
}
