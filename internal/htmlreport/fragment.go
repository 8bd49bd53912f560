package htmlreport

import (
	"math"
	"strconv"
)

// Fragment renders blocks alone, for a page that is not a Document (a
// live view patching parts of itself): the same markup, escaping and
// ids as inside a section, without the page around it.
func Fragment(blocks ...Block) []byte {
	w := &writer{b: make([]byte, 0, 8<<10), ids: map[string]int{}}
	w.blocks(blocks)
	return w.b
}

// Stylesheet is the reports' stylesheet, for a page that draws their
// blocks (Fragment) in a skeleton of its own. It holds no '<' or '&'.
func Stylesheet() string { return css }

// Sparkline is a word-sized line of a series, drawn inline beside the
// number it summarizes (a table row's Φ): its title says the series in
// words, and the row it sits in writes the latest value, so it carries no
// table of its own. Marked points (a drifting check) are drawn filled
// over the line in their own shape.
type Sparkline struct {
	// Title names the series; Desc says it in words (both required for
	// the svg's role="img").
	Title, Desc string
	Values      []float64
	// Marked are indexes of Values drawn with Mark.
	Marked []int
	Mark   MarkStyle
	// YMin, YMax fix the domain (both zero: from the data).
	YMin, YMax float64
	// Width and Height in CSS pixels (0: 96 by 20).
	Width, Height int
	// Max is the most recent values drawn (0: 60); older ones are left
	// out, and the title says so.
	Max int
}

func (s Sparkline) render(w *writer) {
	width, height := s.Width, s.Height
	if width == 0 {
		width, height = 96, 20
	}
	limit := s.Max
	if limit == 0 {
		limit = 60
	}
	vals, first := s.Values, 0
	if len(vals) > limit {
		first = len(vals) - limit
		vals = vals[first:]
	}
	title := s.Title
	if first > 0 {
		title += " (the last " + strconv.Itoa(limit) + " of " + strconv.Itoa(len(s.Values)) + ")"
	}
	w.raw("<svg class=\"spark\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ")
	w.int(width)
	w.raw(" ")
	w.int(height)
	w.raw("\" width=\"")
	w.int(width)
	w.raw("\" height=\"")
	w.int(height)
	w.raw("\" role=\"img\" aria-label=\"")
	w.attr(title + ": " + s.Desc)
	w.raw("\"><title>")
	w.text(title)
	w.raw("</title><desc>")
	w.text(s.Desc)
	w.raw("</desc>")
	if len(vals) > 0 {
		lo, hi := s.YMin, s.YMax
		if lo == 0 && hi == 0 {
			lo, hi = math.Inf(1), math.Inf(-1)
			for _, v := range vals {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if hi <= lo {
			hi = lo + 1
		}
		pad := 3.0
		x := func(i int) float64 {
			if len(vals) == 1 {
				return float64(width) / 2
			}
			return pad + float64(i)*(float64(width)-2*pad)/float64(len(vals)-1)
		}
		y := func(v float64) float64 {
			v = math.Max(lo, math.Min(hi, v))
			return float64(height) - pad - (v-lo)*(float64(height)-2*pad)/(hi-lo)
		}
		w.raw("<path class=\"series t-info\" d=\"")
		for i, v := range vals {
			if i == 0 {
				w.raw("M")
			} else {
				// Held until the next check: a step line.
				w.raw("H")
				w.num(x(i))
				w.raw("V")
				w.num(y(v))
				continue
			}
			w.num(x(i))
			w.raw(" ")
			w.num(y(v))
		}
		w.raw("\"/>")
		// The latest value as a dot, so one check shows too.
		w.raw("<circle class=\"pt\" r=\"1.8\" cx=\"")
		w.num(x(len(vals) - 1))
		w.raw("\" cy=\"")
		w.num(y(vals[len(vals)-1]))
		w.raw("\"/>")
		for _, i := range s.Marked {
			if i < first || i >= len(s.Values) {
				continue
			}
			m := s.Mark
			w.raw("<g class=\"mark ")
			w.raw(m.Tone.class())
			if !m.Filled {
				w.raw(" hollow")
			}
			w.raw("\" transform=\"translate(")
			w.num(x(i - first))
			w.raw(",")
			w.num(y(s.Values[i]))
			w.raw(") scale(0.6)\"><path d=\"")
			w.raw(shapePaths[m.Shape])
			w.raw("\"/></g>")
		}
	}
	w.raw("</svg>")
}
