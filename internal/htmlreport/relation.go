package htmlreport

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/text"
)

// Node is one participant of a relation panel.
type Node struct {
	ID    string
	Label string
	Shape Shape
	Tone  Tone
	// Filled draws the node solid (hollow otherwise).
	Filled bool
	// Note is the node's tooltip.
	Note string
}

// Edge is a relation between two nodes.
type Edge struct {
	From, To string
	// Weight in [0, 1] sets the line's thickness.
	Weight float64
	// Label is written at the edge's middle.
	Label string
	Tone  Tone
	Dash  Dash
	// Arrow points the edge at To.
	Arrow bool
	// Title is the edge's tooltip.
	Title string
}

// Relation draws nodes on a circle and the edges between them: which
// agents relate, how strongly, and what became of it.
type Relation struct {
	ID       string
	Title    string
	Subtitle string
	Desc     string
	Nodes    []Node
	Edges    []Edge
	// MaxNodes bounds the nodes drawn (0: 24); those with the most edges
	// are kept and the plot says how many were left out.
	MaxNodes int
	// Table is the panel's text equivalent (nil: one row per edge).
	Table *Table
	// Legend is drawn under the panel.
	Legend *Legend
}

const (
	relW = 480.0
	relH = 340.0
)

func (r Relation) render(w *writer) {
	id := w.id(r.ID)
	maxN := r.MaxNodes
	if maxN <= 0 {
		maxN = 24
	}
	nodes, left := r.drawn(maxN)
	h := relH
	if len(nodes) <= 2 {
		h = 130 // a pair sits side by side: no circle to make room for
	}
	cx, cy := relW/2, h/2+4
	pos := circle(nodes, cx, cy, h)
	w.openPlot("relation", id, r.Title, r.Subtitle, relW, h)
	w.closePlotHead(id, r.Title, r.describe(left))
	if len(r.Nodes) == 0 {
		w.raw("<text x=\"")
		w.num(cx)
		w.raw("\" y=\"")
		w.num(cy)
		w.raw("\" text-anchor=\"middle\">none</text>")
	}
	for _, e := range r.Edges {
		a, okA := pos[e.From]
		b, okB := pos[e.To]
		if okA && okB {
			w.edge(e, a, b)
		}
	}
	for _, n := range nodes {
		w.node(n, pos[n.ID], cx, cy)
	}
	if left > 0 {
		w.raw("<text class=\"dsnote\" x=\"4\" y=\"")
		w.num(h - 6)
		w.raw("\">")
		w.text(strconv.Itoa(left) + " more not drawn (fewest relations) — see the table")
		w.raw("</text>")
	}
	w.raw("</svg>\n")
	if left > 0 {
		w.raw("<p class=\"downsampled\" data-downsampled=\"true\">")
		w.text("Reduced: " + strconv.Itoa(len(r.Nodes)) + " participants, the " + strconv.Itoa(maxN) + " with the most relations drawn; the table lists every relation.")
		w.raw("</p>\n")
	}
	if r.Legend != nil {
		r.Legend.render(w)
	}
	r.writeTable(w)
}

// drawn are the nodes drawn, at most maxN: those with the most relations,
// in the order of their ids; left is how many more there are.
func (r Relation) drawn(maxN int) (nodes []Node, left int) {
	degree := map[string]int{}
	for _, e := range r.Edges {
		degree[e.From]++
		degree[e.To]++
	}
	nodes = append([]Node(nil), r.Nodes...)
	if len(nodes) > maxN {
		sort.SliceStable(nodes, func(i, j int) bool { return degree[nodes[i].ID] > degree[nodes[j].ID] })
		left = len(nodes) - maxN
		nodes = nodes[:maxN]
		sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	}
	return nodes, left
}

// circle places the nodes on a circle about (cx, cy) in a plot h high; a
// pair side by side.
func circle(nodes []Node, cx, cy, h float64) map[string][2]float64 {
	pos := map[string][2]float64{}
	rad := math.Min(relW, h)/2 - 58
	if len(nodes) == 2 {
		rad = 120
	}
	for i, n := range nodes {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(max(1, len(nodes)))
		if len(nodes) == 2 {
			a = math.Pi * float64(i) // side by side
			a += math.Pi
		}
		pos[n.ID] = [2]float64{cx + rad*math.Cos(a), cy + rad*math.Sin(a)}
	}
	return pos
}

// edge draws a relation from a to b: its line, arrow head and label.
func (w *writer) edge(e Edge, a, b [2]float64) {
	w.raw("<g class=\"edge-group ")
	w.raw(e.Tone.class())
	w.raw("\" data-from=\"")
	w.attr(e.From)
	w.raw("\" data-to=\"")
	w.attr(e.To)
	w.raw("\" data-weight=\"")
	w.raw(FormatNumber(e.Weight))
	w.raw("\"><title>")
	w.text(e.Title)
	w.raw("</title><line class=\"edge\" x1=\"")
	w.num(a[0])
	w.raw("\" y1=\"")
	w.num(a[1])
	w.raw("\" x2=\"")
	w.num(b[0])
	w.raw("\" y2=\"")
	w.num(b[1])
	w.raw("\" stroke-width=\"")
	w.num(1.2 + 5*math.Max(0, math.Min(1, e.Weight)))
	w.raw("\"")
	w.dashArray(e.Dash)
	w.raw("/>")
	if e.Arrow {
		w.arrowHead(a, b)
	}
	if e.Label != "" {
		w.raw("<text class=\"label edge-label\" text-anchor=\"middle\" x=\"")
		w.num((a[0] + b[0]) / 2)
		w.raw("\" y=\"")
		w.num((a[1]+b[1])/2 - 4)
		w.raw("\">")
		w.text(e.Label)
		w.raw("</text>")
	}
	w.raw("</g>")
}

// arrowHead draws the head of an arrow from a to b, just short of b's
// mark.
func (w *writer) arrowHead(a, b [2]float64) {
	dx, dy := b[0]-a[0], b[1]-a[1]
	l := math.Hypot(dx, dy)
	if l == 0 {
		return
	}
	ux, uy := dx/l, dy/l
	tipX, tipY := b[0]-ux*11, b[1]-uy*11
	baseX, baseY := tipX-ux*10, tipY-uy*10
	w.raw("<path class=\"arrow\" d=\"M")
	w.num(tipX)
	w.raw(" ")
	w.num(tipY)
	w.raw("L")
	w.num(baseX - uy*5)
	w.raw(" ")
	w.num(baseY + ux*5)
	w.raw("L")
	w.num(baseX + uy*5)
	w.raw(" ")
	w.num(baseY - ux*5)
	w.raw("z\"/>")
}

// node draws a participant at p, its label on the side away from the
// circle's centre (cx, cy).
func (w *writer) node(n Node, p [2]float64, cx, cy float64) {
	w.raw("<g class=\"node\" data-node=\"")
	w.attr(n.ID)
	w.raw("\">")
	m := MarkStyle{Key: n.ID, Label: n.Label, Shape: n.Shape, Tone: n.Tone, Filled: n.Filled}
	title := n.Label
	if n.Note != "" {
		title += " — " + n.Note
	}
	w.writeMark(m, p[0], p[1], "", "", title)
	anchor := "middle"
	dx := p[0] - cx
	lx, ly := p[0], p[1]-11
	switch {
	case dx > 20:
		anchor, lx, ly = "start", p[0]+10, p[1]+4
	case dx < -20:
		anchor, lx, ly = "end", p[0]-10, p[1]+4
	case p[1] > cy:
		ly = p[1] + 19
	}
	w.raw("<text class=\"label node-label\" text-anchor=\"")
	w.raw(anchor)
	w.raw("\" x=\"")
	w.num(lx)
	w.raw("\" y=\"")
	w.num(ly)
	w.raw("\">")
	w.text(text.Clip(n.Label, 22))
	w.raw("</text></g>")
}

// writeTable is the relation as a table (its own, or one row per edge),
// for readers that cannot see the plot.
func (r Relation) writeTable(w *writer) {
	tbl := r.Table
	if tbl == nil {
		t := Table{Caption: r.Title, Columns: []Column{{Title: "from"}, {Title: "to"}, {Title: "weight", Numeric: true}, {Title: "label"}, {Title: "details", Wrap: true}}}
		for _, e := range r.Edges {
			t.Rows = append(t.Rows, []string{e.From, e.To, FormatNumber(e.Weight), e.Label, e.Title})
		}
		tbl = &t
	}
	w.raw("<details class=\"equiv\"><summary>")
	w.text("Table: " + r.Title + " (" + strconv.Itoa(len(tbl.Rows)) + " rows)")
	w.raw("</summary>")
	w.table(*tbl)
	w.raw("</details></figure>\n")
}

func (r Relation) describe(left int) string {
	var b strings.Builder
	b.WriteString(r.Desc)
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	b.WriteString(strconv.Itoa(len(r.Nodes)) + " participants, " + strconv.Itoa(len(r.Edges)) + " relations.")
	for i, e := range r.Edges {
		if i == 20 {
			b.WriteString(" … and " + strconv.Itoa(len(r.Edges)-20) + " more in the table.")
			break
		}
		b.WriteString(" " + e.From + " – " + e.To)
		if e.Label != "" {
			b.WriteString(": " + e.Label)
		}
		b.WriteString(".")
	}
	if left > 0 {
		b.WriteString(" " + strconv.Itoa(left) + " participants are not drawn.")
	}
	return b.String()
}
