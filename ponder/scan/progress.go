package scan

import (
	"fmt"
	"io"
	"time"
)

// Progress shows a running count on a terminal, redrawing one line at most
// every 100 ms. Callers create it only when the stream is a terminal.
type Progress struct {
	w     io.Writer
	label string
	every time.Duration
	now   func() time.Time
	last  time.Time
	drawn bool
}

// NewProgress returns a Progress writing "<label>: N files" to w.
func NewProgress(w io.Writer, label string) *Progress {
	return &Progress{w: w, label: label, every: 100 * time.Millisecond, now: time.Now}
}

// Update redraws the count if the last redraw is old enough.
func (p *Progress) Update(n int) {
	if t := p.now(); !p.drawn || t.Sub(p.last) >= p.every {
		p.last, p.drawn = t, true
		fmt.Fprintf(p.w, "\r%s: %d files", p.label, n)
	}
}

// Done draws the final count and ends the line.
func (p *Progress) Done(n int) {
	fmt.Fprintf(p.w, "\r%s: %d files\n", p.label, n)
}
