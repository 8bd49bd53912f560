package htmltest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Node is an element with its attributes, children and text.
type Node struct {
	Tag      string
	Attr     map[string]string
	Children []*Node
	Parent   *Node
	// text is the element's own character data, in order.
	text []string
}

// Parse reads a page. It fails on anything that is not well-formed.
func Parse(page []byte) (*Node, error) {
	dec := xml.NewDecoder(bytes.NewReader(page))
	dec.Strict = true
	root := &Node{Tag: "#document"}
	cur := root
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("page is not well-formed: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &Node{Tag: t.Name.Local, Attr: map[string]string{}, Parent: cur}
			for _, a := range t.Attr {
				n.Attr[a.Name.Local] = a.Value
			}
			cur.Children = append(cur.Children, n)
			cur = n
		case xml.EndElement:
			cur = cur.Parent
		case xml.CharData:
			cur.text = append(cur.text, string(t))
		}
	}
	return root, nil
}

// Text is all character data under n, whitespace runs collapsed.
func (n *Node) Text() string {
	var b strings.Builder
	var walk func(*Node)
	walk = func(x *Node) {
		for _, t := range x.text {
			b.WriteString(t)
			b.WriteByte(' ')
		}
		for _, c := range x.Children {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// OwnText is n's own character data, trimmed.
func (n *Node) OwnText() string { return strings.TrimSpace(strings.Join(n.text, "")) }

// All returns every element under n (n excluded) that matches.
func (n *Node) All(match func(*Node) bool) []*Node {
	var out []*Node
	var walk func(*Node)
	walk = func(x *Node) {
		for _, c := range x.Children {
			if match(c) {
				out = append(out, c)
			}
			walk(c)
		}
	}
	walk(n)
	return out
}

// Find returns the first element under n that matches, or nil.
func (n *Node) Find(match func(*Node) bool) *Node {
	for _, c := range n.Children {
		if match(c) {
			return c
		}
		if f := c.Find(match); f != nil {
			return f
		}
	}
	return nil
}

// Child returns n's first direct child with tag, or nil.
func (n *Node) Child(tag string) *Node {
	for _, c := range n.Children {
		if c.Tag == tag {
			return c
		}
	}
	return nil
}

// Tag matches elements by name.
func Tag(tag string) func(*Node) bool { return func(n *Node) bool { return n.Tag == tag } }

// Attr matches elements whose attribute has the value.
func Attr(name, value string) func(*Node) bool {
	return func(n *Node) bool { v, ok := n.Attr[name]; return ok && v == value }
}

// Has matches elements that carry the attribute.
func Has(name string) func(*Node) bool {
	return func(n *Node) bool { _, ok := n.Attr[name]; return ok }
}

// Class matches elements with the class among their classes.
func Class(class string) func(*Node) bool {
	return func(n *Node) bool {
		for _, c := range strings.Fields(n.Attr["class"]) {
			if c == class {
				return true
			}
		}
		return false
	}
}

// And matches elements every matcher accepts.
func And(ms ...func(*Node) bool) func(*Node) bool {
	return func(n *Node) bool {
		for _, m := range ms {
			if !m(n) {
				return false
			}
		}
		return true
	}
}

// ByID finds the element with id.
func (n *Node) ByID(id string) *Node { return n.Find(Attr("id", id)) }

// Float reads a numeric attribute (NaN if absent or not a number).
func (n *Node) Float(name string) float64 {
	f, err := strconv.ParseFloat(n.Attr[name], 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

var translateRE = regexp.MustCompile(`translate\(\s*([-0-9.]+)\s*,\s*([-0-9.]+)\s*\)`)

// Translate reads the (x, y) of a transform="translate(x,y)".
func (n *Node) Translate() (x, y float64, ok bool) {
	m := translateRE.FindStringSubmatch(n.Attr["transform"])
	if m == nil {
		return 0, 0, false
	}
	x, _ = strconv.ParseFloat(m[1], 64)
	y, _ = strconv.ParseFloat(m[2], 64)
	return x, y, true
}

// Axis is a plot's scale read back from its tick labels: two ticks with
// their data values and pixel positions define the linear map.
type Axis struct {
	v0, p0, v1, p1 float64
}

// At is the pixel position of data value v.
func (a Axis) At(v float64) float64 {
	return a.p0 + (v-a.v0)/(a.v1-a.v0)*(a.p1-a.p0)
}

// Value is the data value at pixel position p.
func (a Axis) Value(p float64) float64 {
	return a.v0 + (p-a.p0)/(a.p1-a.p0)*(a.v1-a.v0)
}

// Axes reads a timeline svg's x and y scales from the first and last tick
// labels of each axis (class xtick / ytick, data-value and their x or y).
func Axes(svg *Node) (x, y Axis, err error) {
	read := func(class, coord string) (Axis, error) {
		ticks := svg.All(Class(class))
		if len(ticks) < 2 {
			return Axis{}, fmt.Errorf("%d %s labels, need 2", len(ticks), class)
		}
		a, b := ticks[0], ticks[len(ticks)-1]
		ax := Axis{a.Float("data-value"), a.Float(coord), b.Float("data-value"), b.Float(coord)}
		if ax.v0 == ax.v1 || math.IsNaN(ax.v0+ax.v1+ax.p0+ax.p1) {
			return Axis{}, fmt.Errorf("%s labels give no scale", class)
		}
		return ax, nil
	}
	if x, err = read("xtick", "x"); err != nil {
		return
	}
	y, err = read("ytick", "y")
	return
}

// Table is a table read into its header and rows of cell texts.
type Table struct {
	Head []string
	Rows [][]string
}

// ReadTable reads a <table> element.
func ReadTable(t *Node) Table {
	var out Table
	for _, th := range t.All(Tag("th")) {
		out.Head = append(out.Head, th.Text())
	}
	if tb := t.Child("tbody"); tb != nil {
		for _, tr := range tb.Children {
			var row []string
			for _, td := range tr.Children {
				row = append(row, td.Text())
			}
			out.Rows = append(out.Rows, row)
		}
	}
	return out
}

// Col is the index of the column titled title, or -1.
func (t Table) Col(title string) int {
	for i, h := range t.Head {
		if h == title {
			return i
		}
	}
	return -1
}

// LabelBox is the box a plot label's text covers, estimated from the text
// element's x, y (baseline) and text-anchor: 11px text, 0.6em a rune, 0.8em
// above the baseline and 0.25em below. The SVG has no font metrics; the
// estimate is about a tenth wider than sans-serif's average.
type LabelBox struct {
	Text           string
	Baseline       float64
	X0, Y0, X1, Y1 float64
}

// LabelBoxes reads the boxes of svg's text labels (class label).
func LabelBoxes(svg *Node) []LabelBox {
	const font = 11.0
	var out []LabelBox
	for _, t := range svg.All(And(Tag("text"), Class("label"))) {
		x, y := t.Float("x"), t.Float("y")
		s := t.Text()
		w := float64(len([]rune(s))) * 0.6 * font
		switch t.Attr["text-anchor"] {
		case "end":
			x -= w
		case "middle":
			x -= w / 2
		}
		out = append(out, LabelBox{Text: s, Baseline: y, X0: x, Y0: y - 0.8*font, X1: x + w, Y1: y + 0.25*font})
	}
	return out
}

// OverlappingLabels lists the pairs of svg's labels whose boxes meet, each
// as "A" / "B" with their baselines.
func OverlappingLabels(svg *Node) []string {
	bs := LabelBoxes(svg)
	var out []string
	for i := range bs {
		for j := i + 1; j < len(bs); j++ {
			a, b := bs[i], bs[j]
			if a.X0 < b.X1 && b.X0 < a.X1 && a.Y0 < b.Y1 && b.Y0 < a.Y1 {
				out = append(out, fmt.Sprintf("%q (y=%g) / %q (y=%g)", a.Text, a.Baseline, b.Text, b.Baseline))
			}
		}
	}
	return out
}
