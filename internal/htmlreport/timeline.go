package htmlreport

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Point is one value of a series.
type Point struct {
	X float64
	// Y is the value; NaN means none (the line has a gap there).
	Y float64
	// XText is how the table and tooltips name X ("12", "pass 3"); empty:
	// X formatted.
	XText string
	// Mark is the key of a MarkStyle drawn on the point; empty for none.
	Mark string
	// Note is extra text for the tooltip and the table.
	Note string
}

// Series is one line on a timeline.
type Series struct {
	Name string
	Tone Tone
	Dash Dash
	// Step holds each value until the next point: for a state that stands
	// between observations, such as Φ between two checks.
	Step bool
	// Dots draws every point, not only marked ones (short series).
	Dots   bool
	Points []Point
}

// Threshold is a labelled horizontal line.
type Threshold struct {
	Y     float64
	Label string
	Tone  Tone
	Dash  Dash // default dashed
}

// Band is a labelled horizontal region, filled with a pattern.
type Band struct {
	From, To float64
	Label    string
	Tone     Tone
	Pattern  Pattern
}

// DefaultMaxPoints is how many points a series may have before it is
// downsampled, and DefaultBuckets how many buckets it then becomes.
const (
	DefaultMaxPoints = 240
	DefaultBuckets   = 120
)

// Timeline is a line or step plot over an x axis (steps, passes, time),
// with thresholds, bands and event marks, and its table.
type Timeline struct {
	ID       string
	Title    string
	Subtitle string
	// Desc says in words what the plot shows; a summary of each series is
	// appended to it.
	Desc   string
	XLabel string
	YLabel string
	// YMin, YMax fix the y domain (both zero: from the data).
	YMin, YMax float64
	// XMin, XMax fix the x domain (both zero: from the data).
	XMin, XMax float64
	// XInteger keeps x ticks on whole numbers (steps, passes).
	XInteger bool
	// YInteger keeps y ticks on whole numbers (counts).
	YInteger   bool
	Series     []Series
	Thresholds []Threshold
	Bands      []Band
	Marks      MarkSet
	// MaxPoints is the most points a series is drawn with before it is
	// downsampled (0: DefaultMaxPoints); Buckets how many min–max buckets
	// it then becomes (0: DefaultBuckets).
	MaxPoints int
	Buckets   int
	// FormatY formats values for the table, ticks and tooltips (nil: up
	// to three decimals).
	FormatY func(float64) string
	// Legend draws a legend under the plot; small multiples share one
	// instead.
	Legend bool
	// Table replaces the generated table equivalent.
	Table *Table
	// Height and Width of the plot in its own units (0: 200 and 480).
	// Small multiples are narrower, so their text stays legible when the
	// grid shrinks them.
	Height int
	Width  int
}

const (
	defaultPlW = 480.0
	marginL    = 42.0
	marginR    = 14.0
	marginT    = 20.0
	marginB    = 32.0
	defaultPlH = 200.0
)

// scale maps data to plot coordinates.
type scale struct {
	x0, x1, y0, y1 float64 // data domain
	px0, px1       float64 // plot left, right
	py0, py1       float64 // plot bottom, top (py0 > py1)
}

func (s scale) x(v float64) float64 {
	if s.x1 == s.x0 {
		return (s.px0 + s.px1) / 2
	}
	return s.px0 + (v-s.x0)/(s.x1-s.x0)*(s.px1-s.px0)
}

func (s scale) y(v float64) float64 {
	if math.IsNaN(v) {
		v = s.y0
	}
	v = math.Max(s.y0, math.Min(s.y1, v))
	if s.y1 == s.y0 {
		return (s.py0 + s.py1) / 2
	}
	return s.py0 - (v-s.y0)/(s.y1-s.y0)*(s.py0-s.py1)
}

// bucket is a run of consecutive points drawn as one.
type bucket struct {
	first, last    int // point indexes
	min, max, end  float64
	top            int // index of the highest-priority marked point, -1 if none
	marks          map[string]int
	hasValue       bool
	xFirst, xFinal float64
}

func (t *Timeline) fmtY(v float64) string {
	if math.IsNaN(v) {
		return "none"
	}
	if t.FormatY != nil {
		return t.FormatY(v)
	}
	return FormatNumber(v)
}

// FormatNumber writes v with at most three decimals and no trailing zeros.
func FormatNumber(v float64) string {
	if math.IsNaN(v) {
		return "none"
	}
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

func xText(p *Point) string {
	if p.XText != "" {
		return p.XText
	}
	return FormatNumber(p.X)
}

func (t Timeline) render(w *writer) {
	id := w.id(t.ID)
	maxPts := t.MaxPoints
	if maxPts <= 0 {
		maxPts = DefaultMaxPoints
	}
	nb := t.Buckets
	if nb <= 0 {
		nb = DefaultBuckets
	}
	plH := float64(t.Height)
	if plH <= 0 {
		plH = defaultPlH
	}
	plW := float64(t.Width)
	if plW <= 0 {
		plW = defaultPlW
	}
	sc := t.scale(plW, plH)

	// Which series are downsampled, and into what.
	buckets := make([][]bucket, len(t.Series))
	var notes []string
	for i, s := range t.Series {
		if len(s.Points) > maxPts {
			buckets[i] = t.bucketize(s.Points, nb)
			notes = append(notes, downsampleNote(s.Name, len(s.Points), len(buckets[i])))
		}
	}

	w.openPlot("timeline", id, t.Title, t.Subtitle, plW, plH)
	w.raw("\" data-x-label=\"")
	w.attr(t.XLabel)
	w.raw("\" data-y-label=\"")
	w.attr(t.YLabel)
	w.closePlotHead(id, t.Title, t.describe(notes))
	t.patterns(w, id)
	t.axes(w, sc, plH)
	// Threshold labels sit on their lines, so they are placed first; band
	// labels then take a baseline whose box meets none of them.
	var placed []labelBox
	thY := make([]float64, len(t.Thresholds))
	for i, th := range t.Thresholds {
		thY[i] = placeThresholdLabel(sc, th.Label, sc.y(th.Y), &placed)
	}
	for _, b := range t.Bands {
		w.band(id, sc, b, &placed)
	}
	for i, th := range t.Thresholds {
		w.threshold(sc, th, thY[i])
	}
	for i, s := range t.Series {
		t.series(w, sc, s, buckets[i])
	}
	if len(notes) > 0 {
		w.raw("<text class=\"dsnote\" text-anchor=\"end\" x=\"")
		w.num(sc.px1)
		w.raw("\" y=\"12\">")
		w.text("downsampled: band = min–max per bucket")
		w.raw("</text>")
	}
	w.raw("</svg>\n")
	for _, n := range notes {
		w.raw("<p class=\"downsampled\" data-downsampled=\"true\">")
		w.text(n)
		w.raw("</p>\n")
	}
	if t.Legend {
		t.legend().render(w)
	}
	t.writeTable(w, buckets)
}

// patterns defines the fills of the bands, one per tone and pattern.
func (t Timeline) patterns(w *writer, id string) {
	if len(t.Bands) > 0 {
		w.raw("<defs>")
		seen := map[[2]uint8]bool{}
		for _, b := range t.Bands {
			k := [2]uint8{uint8(b.Tone), uint8(b.Pattern)}
			if !seen[k] {
				seen[k] = true
				w.pattern(id, b.Tone, b.Pattern)
			}
		}
		w.raw("</defs>")
	}
}

// band draws a band from b.From to b.To across the plot, its label at a
// baseline clear of the labels placed already.
func (w *writer) band(id string, sc scale, b Band, placed *[]labelBox) {
	lo, hi := sc.y(math.Min(b.From, b.To)), sc.y(math.Max(b.From, b.To))
	w.raw("<rect class=\"band ")
	w.raw(b.Tone.class())
	w.raw("\" data-from=\"")
	w.raw(FormatNumber(b.From))
	w.raw("\" data-to=\"")
	w.raw(FormatNumber(b.To))
	w.raw("\" x=\"")
	w.num(sc.px0)
	w.raw("\" y=\"")
	w.num(hi)
	w.raw("\" width=\"")
	w.num(sc.px1 - sc.px0)
	w.raw("\" height=\"")
	w.num(lo - hi)
	w.raw("\" fill=\"")
	w.fill(id, b.Tone, b.Pattern)
	w.raw("\"><title>")
	w.text(b.Label)
	w.raw("</title></rect>")
	if b.Label == "" {
		return
	}
	w.raw("<text class=\"label band-label\" x=\"")
	w.num(sc.px0 + 4)
	w.raw("\" y=\"")
	w.num(placeBandLabel(sc, b.Label, lo, hi, placed))
	w.raw("\">")
	w.text(b.Label)
	w.raw("</text>")
}

// acrossPlot closes the attribute open before it and writes the x1, x2,
// y1 and y2 of a line across the plot at height y, leaving y2's value open.
func (w *writer) acrossPlot(sc scale, y float64) {
	w.raw("\" x1=\"")
	w.num(sc.px0)
	w.raw("\" x2=\"")
	w.num(sc.px1)
	w.raw("\" y1=\"")
	w.num(y)
	w.raw("\" y2=\"")
	w.num(y)
}

// threshold draws a threshold line across the plot, its label at y.
func (w *writer) threshold(sc scale, th Threshold, labelY float64) {
	y := sc.y(th.Y)
	w.raw("<line class=\"threshold ")
	w.raw(th.Tone.class())
	w.raw("\" data-y=\"")
	w.raw(FormatNumber(th.Y))
	w.acrossPlot(sc, y)
	w.raw("\"")
	if th.Dash != SolidLine && th.Dash != Dashed {
		w.raw(" style=\"stroke-dasharray:")
		w.raw(dashArrays[th.Dash])
		w.raw("\"")
	}
	w.raw("><title>")
	w.text(th.Label)
	w.raw("</title></line><text class=\"label threshold-label\" text-anchor=\"end\" x=\"")
	w.num(sc.px1 - 2)
	w.raw("\" y=\"")
	w.num(labelY)
	w.raw("\">")
	w.text(th.Label)
	w.raw("</text>")
}

// series draws one series: its points, or the buckets it was
// downsampled into.
func (t Timeline) series(w *writer, sc scale, s Series, buckets []bucket) {
	w.raw("<g class=\"series-group ")
	w.raw(s.Tone.class())
	w.raw("\" data-series=\"")
	w.attr(s.Name)
	w.raw("\" data-points=\"")
	w.int(len(s.Points))
	if buckets != nil {
		w.raw("\" data-buckets=\"")
		w.int(len(buckets))
	}
	w.raw("\">")
	if buckets != nil {
		t.drawBuckets(w, sc, s, buckets)
	} else {
		t.drawPoints(w, sc, s)
	}
	w.raw("</g>")
	w.maybeFlush()
}

// writeTable is the plot as a table (its own, or one row per point or
// bucket), for readers that cannot see the plot.
func (t Timeline) writeTable(w *writer, buckets [][]bucket) {
	tbl := t.Table
	if tbl == nil {
		g := t.table(buckets)
		tbl = &g
	}
	summary := tbl.Summary
	if summary == "" {
		summary = "Table: " + t.Title + " (" + strconv.Itoa(len(tbl.Rows)) + " rows)"
	}
	w.raw("<details class=\"equiv\"><summary>")
	w.text(summary)
	w.raw("</summary>")
	w.table(*tbl)
	w.raw("</details></figure>\n")
}

func downsampleNote(name string, n, b int) string {
	s := "Downsampled"
	if name != "" {
		s += " (" + name + ")"
	}
	return s + ": " + groupThousands(n) + " points drawn as " + strconv.Itoa(b) +
		" buckets — the shaded band spans each bucket's minimum to maximum, the line joins each bucket's last value, and each bucket shows its most severe mark. The table lists the buckets."
}

func groupThousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (t *Timeline) describe(notes []string) string {
	var b strings.Builder
	b.WriteString(t.Desc)
	for _, s := range t.Series {
		n, lo, hi, last := 0, math.Inf(1), math.Inf(-1), math.NaN()
		for _, p := range s.Points {
			if !math.IsNaN(p.Y) {
				n++
				lo, hi, last = math.Min(lo, p.Y), math.Max(hi, p.Y), p.Y
			}
		}
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		name := s.Name
		if name == "" {
			name = "The series"
		}
		if n == 0 {
			b.WriteString(name + " has no values.")
			continue
		}
		b.WriteString(name + ": " + strconv.Itoa(n) + " values from " + t.fmtY(lo) + " to " + t.fmtY(hi) + ", last " + t.fmtY(last) + ".")
	}
	for _, th := range t.Thresholds {
		b.WriteString(" Threshold: " + th.Label + ".")
	}
	for _, n := range notes {
		b.WriteString(" " + n)
	}
	return b.String()
}

// scale finds the domain: fixed where given, else from the data.
func (t *Timeline) scale(plW, plH float64) scale {
	sc := scale{px0: marginL, px1: plW - marginR, py0: plH - marginB, py1: marginT}
	sc.x0, sc.x1 = t.XMin, t.XMax
	if sc.x0 == 0 && sc.x1 == 0 {
		sc.x0, sc.x1 = math.Inf(1), math.Inf(-1)
		for _, s := range t.Series {
			for _, p := range s.Points {
				sc.x0, sc.x1 = math.Min(sc.x0, p.X), math.Max(sc.x1, p.X)
			}
		}
		if math.IsInf(sc.x0, 0) {
			sc.x0, sc.x1 = 0, 1
		}
	}
	sc.y0, sc.y1 = t.YMin, t.YMax
	if sc.y0 == 0 && sc.y1 == 0 {
		sc.y1 = math.Inf(-1)
		for _, s := range t.Series {
			for _, p := range s.Points {
				if !math.IsNaN(p.Y) {
					sc.y0, sc.y1 = math.Min(sc.y0, p.Y), math.Max(sc.y1, p.Y)
				}
			}
		}
		for _, th := range t.Thresholds {
			sc.y1 = math.Max(sc.y1, th.Y)
		}
		if math.IsInf(sc.y1, 0) || sc.y1 <= sc.y0 {
			sc.y1 = sc.y0 + 1
		}
	}
	return sc
}

// niceTicks returns about n round values covering [lo, hi].
func niceTicks(lo, hi float64, n int, integer bool) []float64 {
	if hi <= lo {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if integer && step < 1 {
		step = 1
	}
	if integer {
		step = math.Ceil(step)
	}
	var out []float64
	start := math.Ceil(lo/step-1e-9) * step
	for v := start; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
		if len(out) > 50 {
			break
		}
	}
	return out
}

func (t *Timeline) axes(w *writer, sc scale, plH float64) {
	for _, v := range niceTicks(sc.y0, sc.y1, 4, t.YInteger) {
		y := sc.y(v)
		w.raw("<line class=\"gridline")
		w.acrossPlot(sc, y)
		w.raw("\"/><text class=\"tick ytick\" text-anchor=\"end\" data-value=\"")
		w.raw(FormatNumber(v))
		w.raw("\" x=\"")
		w.num(sc.px0 - 4)
		w.raw("\" y=\"")
		w.num(y)
		w.raw("\" dy=\"3.5\">")
		w.text(t.fmtY(v))
		w.raw("</text>")
	}
	for _, v := range niceTicks(sc.x0, sc.x1, 5, t.XInteger) {
		x := sc.x(v)
		w.raw("<line class=\"axis\" x1=\"")
		w.num(x)
		w.raw("\" x2=\"")
		w.num(x)
		w.raw("\" y1=\"")
		w.num(sc.py0)
		w.raw("\" y2=\"")
		w.num(sc.py0 + 4)
		w.raw("\"/><text class=\"tick xtick\" text-anchor=\"middle\" data-value=\"")
		w.raw(FormatNumber(v))
		w.raw("\" x=\"")
		w.num(x)
		w.raw("\" y=\"")
		w.num(sc.py0 + 15)
		w.raw("\">")
		w.text(FormatNumber(v))
		w.raw("</text>")
	}
	w.raw("<path class=\"axis\" d=\"M")
	w.num(sc.px0)
	w.raw(" ")
	w.num(sc.py1)
	w.raw("V")
	w.num(sc.py0)
	w.raw("H")
	w.num(sc.px1)
	w.raw("\"/>")
	if t.XLabel != "" {
		w.raw("<text class=\"axis-label\" text-anchor=\"end\" x=\"")
		w.num(sc.px1)
		w.raw("\" y=\"")
		w.num(plH - 3)
		w.raw("\">")
		w.text(t.XLabel)
		w.raw("</text>")
	}
	if t.YLabel != "" {
		w.raw("<text class=\"axis-label\" x=\"2\" y=\"12\">")
		w.text(t.YLabel)
		w.raw("</text>")
	}
}

// dashArray writes the stroke-dasharray attribute of a line drawn with d
// (none for a solid line).
func (w *writer) dashArray(d Dash) {
	if d != SolidLine {
		w.raw(" stroke-dasharray=\"")
		w.raw(dashArrays[d])
		w.raw("\"")
	}
}

// drawPoints draws a series point for point.
func (t *Timeline) drawPoints(w *writer, sc scale, s Series) {
	w.raw("<path class=\"series\"")
	w.dashArray(s.Dash)
	w.raw(" d=\"")
	pen := false
	for i := range s.Points {
		p := &s.Points[i]
		if math.IsNaN(p.Y) {
			pen = false
			continue
		}
		x, y := sc.x(p.X), sc.y(p.Y)
		switch {
		case !pen:
			w.raw("M")
		case s.Step:
			w.raw("H")
			w.num(x)
			w.raw("V")
			w.num(y)
			continue
		default:
			w.raw("L")
		}
		w.num(x)
		w.raw(" ")
		w.num(y)
		pen = true
	}
	w.raw("\"/>")
	for i := range s.Points {
		p := &s.Points[i]
		m, ok := t.Marks.find(p.Mark)
		if !ok {
			if s.Dots && !math.IsNaN(p.Y) {
				w.raw("<circle class=\"pt\" r=\"2.2\" cx=\"")
				w.num(sc.x(p.X))
				w.raw("\" cy=\"")
				w.num(sc.y(p.Y))
				w.raw("\" data-x=\"")
				w.attr(xText(p))
				w.raw("\" data-y=\"")
				w.raw(FormatNumber(p.Y))
				w.raw("\"><title>")
				w.text(t.pointTitle(s, p, ""))
				w.raw("</title></circle>")
			}
			continue
		}
		w.writeMark(m, sc.x(p.X), sc.y(p.Y), xText(p), FormatNumber(p.Y), t.pointTitle(s, p, m.Label))
		w.maybeFlush()
	}
}

func (t *Timeline) pointTitle(s Series, p *Point, mark string) string {
	var b strings.Builder
	if s.Name != "" {
		b.WriteString(s.Name + " ")
	}
	if t.XLabel != "" {
		b.WriteString(t.XLabel + " ")
	}
	b.WriteString(xText(p) + ": " + t.fmtY(p.Y))
	if mark != "" {
		b.WriteString(" — " + mark)
	}
	if p.Note != "" {
		b.WriteString(" — " + p.Note)
	}
	return b.String()
}

// bucketize cuts points into n runs of (nearly) equal length.
func (t *Timeline) bucketize(pts []Point, n int) []bucket {
	if n > len(pts) {
		n = len(pts)
	}
	out := make([]bucket, 0, n)
	for b := 0; b < n; b++ {
		lo, hi := b*len(pts)/n, (b+1)*len(pts)/n-1
		bk := bucket{first: lo, last: hi, min: math.Inf(1), max: math.Inf(-1), end: math.NaN(), top: -1,
			xFirst: pts[lo].X, xFinal: pts[hi].X}
		best := math.MinInt
		for i := lo; i <= hi; i++ {
			p := &pts[i]
			if !math.IsNaN(p.Y) {
				bk.hasValue = true
				bk.min, bk.max, bk.end = math.Min(bk.min, p.Y), math.Max(bk.max, p.Y), p.Y
			}
			if m, ok := t.Marks.find(p.Mark); ok {
				if bk.marks == nil {
					bk.marks = map[string]int{}
				}
				bk.marks[m.Key]++
				if m.Priority > best {
					best, bk.top = m.Priority, i
				}
			}
		}
		out = append(out, bk)
	}
	return out
}

func (t *Timeline) drawBuckets(w *writer, sc scale, s Series, bs []bucket) {
	cx := func(b *bucket) float64 { return sc.x((b.xFirst + b.xFinal) / 2) }
	// The envelope: one polygon per unbroken run of buckets with values.
	w.raw("<path class=\"envelope\" fill=\"currentColor\" d=\"")
	for i := 0; i < len(bs); {
		if !bs[i].hasValue {
			i++
			continue
		}
		j := i
		for j < len(bs) && bs[j].hasValue {
			j++
		}
		for k := i; k < j; k++ {
			if k == i {
				w.raw("M")
			} else {
				w.raw("L")
			}
			w.num(cx(&bs[k]))
			w.raw(" ")
			w.num(sc.y(bs[k].max) - 0.6)
		}
		for k := j - 1; k >= i; k-- {
			w.raw("L")
			w.num(cx(&bs[k]))
			w.raw(" ")
			w.num(sc.y(bs[k].min) + 0.6)
		}
		w.raw("Z")
		i = j
	}
	w.raw("\"/><path class=\"series\"")
	w.dashArray(s.Dash)
	w.raw(" d=\"")
	pen := false
	for k := range bs {
		if !bs[k].hasValue {
			pen = false
			continue
		}
		if pen {
			w.raw("L")
		} else {
			w.raw("M")
		}
		w.num(cx(&bs[k]))
		w.raw(" ")
		w.num(sc.y(bs[k].end))
		pen = true
	}
	w.raw("\"/>")
	for k := range bs {
		b := &bs[k]
		if b.top < 0 {
			continue
		}
		p := &s.Points[b.top]
		m, _ := t.Marks.find(p.Mark)
		title := t.pointTitle(s, p, m.Label) + " (bucket " + xText(&s.Points[b.first]) + "–" + xText(&s.Points[b.last]) + ": " + t.markCounts(b.marks) + ")"
		w.writeMark(m, sc.x(p.X), sc.y(p.Y), xText(p), FormatNumber(p.Y), title)
		w.maybeFlush()
	}
}

// markCounts lists a bucket's marks, most severe first: "goal-drift ×2, stalled ×5".
func (t *Timeline) markCounts(c map[string]int) string {
	if len(c) == 0 {
		return ""
	}
	keys := make([]MarkStyle, 0, len(c))
	for k := range c {
		m, _ := t.Marks.find(k)
		keys = append(keys, m)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Priority != keys[j].Priority {
			return keys[i].Priority > keys[j].Priority
		}
		return keys[i].Key < keys[j].Key
	})
	parts := make([]string, len(keys))
	for i, m := range keys {
		parts[i] = m.Label + " ×" + strconv.Itoa(c[m.Key])
	}
	return strings.Join(parts, ", ")
}

// table is the plot's text equivalent: one row per point, or per bucket
// when the series was downsampled.
func (t *Timeline) table(buckets [][]bucket) Table {
	multi := len(t.Series) > 1
	xl := t.XLabel
	if xl == "" {
		xl = "x"
	}
	yl := t.YLabel
	if yl == "" {
		yl = "value"
	}
	tb := Table{Caption: t.Title}
	down := false
	for _, b := range buckets {
		down = down || b != nil
	}
	if multi {
		tb.Columns = append(tb.Columns, Column{Title: "series"})
	}
	if down {
		tb.Columns = append(tb.Columns, Column{Title: xl + " (bucket)"}, Column{Title: "points", Numeric: true},
			Column{Title: yl + " min", Numeric: true}, Column{Title: yl + " max", Numeric: true},
			Column{Title: yl + " last", Numeric: true}, Column{Title: "marks", Wrap: true})
	} else {
		tb.Columns = append(tb.Columns, Column{Title: xl}, Column{Title: yl, Numeric: true}, Column{Title: "mark"}, Column{Title: "note", Wrap: true})
	}
	for i, s := range t.Series {
		lead := func(row []string) []string {
			if multi {
				return append([]string{s.Name}, row...)
			}
			return row
		}
		if buckets[i] != nil {
			for k := range buckets[i] {
				b := &buckets[i][k]
				rng := xText(&s.Points[b.first])
				if b.last != b.first {
					rng += "–" + xText(&s.Points[b.last])
				}
				lo, hi := math.NaN(), math.NaN()
				if b.hasValue {
					lo, hi = b.min, b.max
				}
				tb.Rows = append(tb.Rows, lead([]string{rng, strconv.Itoa(b.last - b.first + 1), t.fmtY(lo), t.fmtY(hi), t.fmtY(b.end), t.markCounts(b.marks)}))
			}
			continue
		}
		if down { // another series was downsampled: keep the columns
			for j := range s.Points {
				p := &s.Points[j]
				marks := ""
				if m, ok := t.Marks.find(p.Mark); ok {
					marks = m.Label
				}
				tb.Rows = append(tb.Rows, lead([]string{xText(p), "1", t.fmtY(p.Y), t.fmtY(p.Y), t.fmtY(p.Y), marks}))
			}
			continue
		}
		for j := range s.Points {
			p := &s.Points[j]
			mark := ""
			if m, ok := t.Marks.find(p.Mark); ok {
				mark = m.Label
			}
			tb.Rows = append(tb.Rows, lead([]string{xText(p), t.fmtY(p.Y), mark, p.Note}))
		}
	}
	return tb
}

// legend lists what this plot draws: its series, thresholds, bands and
// the marks it uses.
func (t *Timeline) legend() Legend {
	var l Legend
	if len(t.Series) > 1 {
		for _, s := range t.Series {
			l.Lines = append(l.Lines, LegendLine{Label: s.Name, Tone: s.Tone, Dash: s.Dash})
		}
	}
	for _, th := range t.Thresholds {
		d := th.Dash
		if d == SolidLine {
			d = Dashed
		}
		l.Lines = append(l.Lines, LegendLine{Label: th.Label, Tone: th.Tone, Dash: d})
	}
	for _, b := range t.Bands {
		l.Fills = append(l.Fills, LegendFill{Label: b.Label, Tone: b.Tone, Pattern: b.Pattern})
	}
	used := map[string]bool{}
	for _, s := range t.Series {
		for _, p := range s.Points {
			if p.Mark != "" {
				used[p.Mark] = true
			}
		}
	}
	for _, m := range t.Marks {
		if used[m.Key] {
			l.Marks = append(l.Marks, m)
		}
	}
	return l
}

// labelFont is the size of plot labels (style.go: svg.plot text), and
// labelAdvance the width per rune this layout assumes. The SVG carries no
// font metrics, so the estimate errs wide: sans-serif averages nearer
// 0.5em.
const (
	labelFont    = 11.0
	labelAdvance = 0.62 * labelFont
)

// labelBox is the box a label's text covers, estimated from its length.
type labelBox struct{ x0, y0, x1, y1 float64 }

// textBox is the box of text s on baseline y, starting at x, or ending at
// x when anchorEnd.
func textBox(x, y float64, s string, anchorEnd bool) labelBox {
	w := float64(utf8.RuneCountInString(s)) * labelAdvance
	if anchorEnd {
		x -= w
	}
	return labelBox{x0: x, y0: y - 0.8*labelFont, x1: x + w, y1: y + 0.25*labelFont}
}

func (a labelBox) overlaps(b labelBox) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// free reports whether box stays inside the plot area and meets no placed box.
func free(sc scale, box labelBox, placed []labelBox) bool {
	if box.y0 < sc.py1-2 || box.y1 > sc.py0+2 {
		return false
	}
	for _, p := range placed {
		if box.overlaps(p) {
			return false
		}
	}
	return true
}

// place returns the first of the candidate baselines whose box (text s at
// x) is free, records that box, and falls back to the first candidate.
func place(sc scale, s string, x float64, anchorEnd bool, placed *[]labelBox, ys ...float64) float64 {
	y := ys[0]
	for _, c := range ys {
		if free(sc, textBox(x, c, s, anchorEnd), *placed) {
			y = c
			break
		}
	}
	*placed = append(*placed, textBox(x, y, s, anchorEnd))
	return y
}

// placeThresholdLabel puts a threshold's label just above its line at the
// right end, or just below when above is taken or outside the plot.
func placeThresholdLabel(sc scale, s string, y float64, placed *[]labelBox) float64 {
	return place(sc, s, sc.px1-2, true, placed, y-3, y+0.8*labelFont+2)
}

// placeBandLabel puts a band's label at the left end, inside the band's top
// edge if free, else inside its bottom edge, else outside it (a band
// thinner than the text goes straight to outside).
func placeBandLabel(sc scale, s string, lo, hi float64, placed *[]labelBox) float64 {
	var ys []float64
	if lo-hi >= labelFont+3 {
		ys = append(ys, hi+labelFont, lo-3)
	}
	// Outside the band (or beside one too thin to hold the text), one line
	// further out each time until a free baseline turns up.
	for k := 0.0; k < 4; k++ {
		ys = append(ys, lo+labelFont+k*(labelFont+2), hi-3-k*(labelFont+2))
	}
	return place(sc, s, sc.px0+4, false, placed, ys...)
}
