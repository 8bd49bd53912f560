package htmlreport

// Tone is what a colour means on the page. Each tone has a light and a dark
// colour (prefers-color-scheme) and is always paired with a second carrier:
// a shape, a fill pattern or a dash.
type Tone uint8

const (
	Neutral Tone = iota
	Good
	Warn
	Bad
	Meta
	Info
)

var toneNames = [...]string{"neutral", "good", "warn", "bad", "meta", "info"}

func (t Tone) class() string {
	if int(t) < len(toneNames) {
		return "t-" + toneNames[t]
	}
	return "t-neutral"
}

// Shape is a mark's form, the carrier of meaning that survives greyscale.
type Shape uint8

const (
	Circle Shape = iota
	Square
	Triangle
	Diamond
	Cross
	Plus
	TriangleDown
	Hexagon
)

// shapePaths are the shapes at the origin, radius about 4.5 px.
var shapePaths = [...]string{
	Circle:       "M-4.5 0a4.5 4.5 0 1 0 9 0a4.5 4.5 0 1 0-9 0z",
	Square:       "M-4 -4h8v8h-8z",
	Triangle:     "M0 -5L5 4H-5z",
	Diamond:      "M0 -5.5L5.5 0L0 5.5L-5.5 0z",
	Cross:        "M-4.5 -3L-3 -4.5L0 -1.5L3 -4.5L4.5 -3L1.5 0L4.5 3L3 4.5L0 1.5L-3 4.5L-4.5 3L-1.5 0z",
	Plus:         "M-1.2 -5h2.4v3.8h3.8v2.4h-3.8v3.8h-2.4v-3.8h-3.8v-2.4h3.8z",
	TriangleDown: "M0 5L5 -4H-5z",
	Hexagon:      "M-2.6 -4.5H2.6L5.2 0L2.6 4.5H-2.6L-5.2 0z",
}

var shapeNames = [...]string{"circle", "square", "triangle", "diamond", "cross", "plus", "triangle-down", "hexagon"}

// Pattern is a fill's texture, so areas differ without colour.
type Pattern uint8

const (
	Solid Pattern = iota
	Hatch
	Dots
	CrossHatch
	BackHatch
)

var patternNames = [...]string{"solid", "hatch", "dots", "crosshatch", "backhatch"}

// Dash is a line's texture.
type Dash uint8

const (
	SolidLine Dash = iota
	Dashed
	Dotted
	DashDot
)

var dashArrays = [...]string{"", "6 4", "1.5 3", "8 3 1.5 3"}

// MarkStyle is one kind of event mark on a timeline: a verdict, a decision.
type MarkStyle struct {
	Key   string
	Label string
	Shape Shape
	Tone  Tone
	// Filled marks are solid; hollow ones are drawn as an outline.
	Filled bool
	// Priority decides which mark a downsampled bucket keeps: the highest.
	Priority int
}

// MarkSet is the marks a report uses; a timeline's points name them by key.
type MarkSet []MarkStyle

func (ms MarkSet) find(key string) (MarkStyle, bool) {
	for _, m := range ms {
		if m.Key == key {
			return m, true
		}
	}
	return MarkStyle{}, false
}

// writeMark draws a mark at (x, y) with a tooltip.
func (w *writer) writeMark(m MarkStyle, x, y float64, dataX, dataY, title string) {
	w.raw("<g class=\"mark ")
	w.raw(m.Tone.class())
	if !m.Filled {
		w.raw(" hollow")
	}
	w.raw("\" data-mark=\"")
	w.attr(m.Key)
	w.raw("\" data-shape=\"")
	w.raw(shapeNames[m.Shape])
	w.raw("\" data-x=\"")
	w.attr(dataX)
	w.raw("\" data-y=\"")
	w.attr(dataY)
	w.raw("\" transform=\"translate(")
	w.num(x)
	w.raw(",")
	w.num(y)
	w.raw(")\"><title>")
	w.text(title)
	w.raw("</title><path d=\"")
	w.raw(shapePaths[m.Shape])
	w.raw("\"/></g>")
}

// swatch is a small standalone svg of a mark, a pattern or a line, for
// legends.
func (w *writer) markSwatch(m MarkStyle) {
	w.raw("<svg class=\"swatch\" viewBox=\"-7 -7 14 14\" width=\"14\" height=\"14\" aria-hidden=\"true\">")
	w.raw("<g class=\"mark ")
	w.raw(m.Tone.class())
	if !m.Filled {
		w.raw(" hollow")
	}
	w.raw("\"><path d=\"")
	w.raw(shapePaths[m.Shape])
	w.raw("\"/></g></svg>")
}

func (w *writer) lineSwatch(t Tone, d Dash) {
	w.raw("<svg class=\"swatch\" viewBox=\"0 0 24 10\" width=\"24\" height=\"10\" aria-hidden=\"true\"><path class=\"series ")
	w.raw(t.class())
	w.raw("\" d=\"M1 5H23\"")
	if d != SolidLine {
		w.raw(" stroke-dasharray=\"")
		w.raw(dashArrays[d])
		w.raw("\"")
	}
	w.raw("/></svg>")
}

func (w *writer) fillSwatch(prefix string, t Tone, p Pattern) {
	w.raw("<svg class=\"swatch\" viewBox=\"0 0 14 14\" width=\"14\" height=\"14\" aria-hidden=\"true\"><defs>")
	w.pattern(prefix, t, p)
	w.raw("</defs><rect class=\"fillbox ")
	w.raw(t.class())
	w.raw("\" x=\"0.5\" y=\"0.5\" width=\"13\" height=\"13\" fill=\"")
	w.fill(prefix, t, p)
	w.raw("\"/></svg>")
}

// pattern defines the fill pattern p in tone t, with an id under prefix;
// solid fills need none.
func (w *writer) pattern(prefix string, t Tone, p Pattern) {
	if p == Solid {
		return
	}
	w.raw("<pattern id=\"")
	w.raw(prefix)
	w.raw("-")
	w.raw(patternNames[p])
	w.raw("-")
	w.raw(toneNames[t])
	w.raw("\" class=\"")
	w.raw(t.class())
	w.raw("\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">")
	switch p {
	case Hatch:
		w.raw("<path d=\"M-1 7L7 -1M-1 1L1 -1M5 7L7 5\" class=\"pat\"/>")
	case BackHatch:
		w.raw("<path d=\"M-1 -1L7 7M5 -1L7 1M-1 5L1 7\" class=\"pat\"/>")
	case CrossHatch:
		w.raw("<path d=\"M-1 7L7 -1M-1 -1L7 7\" class=\"pat\"/>")
	case Dots:
		w.raw("<circle cx=\"3\" cy=\"3\" r=\"1.3\" class=\"patdot\"/>")
	}
	w.raw("</pattern>")
}

// fill writes the fill attribute value for tone t and pattern p.
func (w *writer) fill(prefix string, t Tone, p Pattern) {
	if p == Solid {
		w.raw("currentColor")
		return
	}
	w.raw("url(#")
	w.raw(prefix)
	w.raw("-")
	w.raw(patternNames[p])
	w.raw("-")
	w.raw(toneNames[t])
	w.raw(")")
}

// css is the whole stylesheet. It holds no '<' or '&', so the page stays
// well-formed XML.
const css = `
:root{--bg:#ffffff;--fg:#1b1f24;--muted:#57606a;--grid:#d8dee4;--panel:#f6f8fa;--line:#0b5cad;
--neutral:#57606a;--good:#1a7f37;--warn:#9a5b00;--bad:#c62828;--meta:#6f42c1;--info:#0969da;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9aa4ae;--grid:#30363d;--panel:#161b22;--line:#58a6ff;
--neutral:#9aa4ae;--good:#3fb950;--warn:#e3a03c;--bad:#ff7b72;--meta:#c297ff;--info:#58a6ff}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0 auto;max-width:1180px;padding:16px;background:var(--bg);color:var(--fg);
font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
h1{font-size:1.55rem;margin:.2em 0}
h2{font-size:1.25rem;margin:1.6em 0 .4em;border-bottom:1px solid var(--grid);padding-bottom:.2em}
h3{font-size:1.05rem;margin:1.2em 0 .3em}
.subtitle{color:var(--muted);margin:.2em 0 .6em}
.intro,.note{color:var(--muted);max-width:72ch}
.note.pending{border-left:4px dashed var(--warn);padding:.3em .7em;background:var(--panel);color:var(--fg)}
.note.warn{border-left:4px solid var(--bad);padding:.3em .7em;background:var(--panel);color:var(--fg)}
.note.ok{border-left:4px double var(--good);padding:.3em .7em;background:var(--panel);color:var(--fg)}
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:.5em 0}
dl.fields dt{color:var(--muted)}
dl.fields dd{margin:0;overflow-wrap:anywhere}
nav ol{list-style:none;display:flex;flex-wrap:wrap;gap:.3em 1.2em;padding:0;margin:.6em 0}
a{color:var(--info)}
.stats{display:flex;flex-wrap:wrap;gap:.6em;margin:.6em 0;padding:0;list-style:none}
.stats li{background:var(--panel);border:1px solid var(--grid);border-radius:6px;padding:.4em .8em;min-width:8.5em}
.stats .v{display:block;font-size:1.35rem;font-weight:600}
.stats .k{color:var(--muted);font-size:.85rem}
.stats li.t-bad{border-left:5px solid var(--bad)}
.stats li.t-warn{border-left:5px dashed var(--warn)}
.stats li.t-good{border-left:5px double var(--good)}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,340px),1fr));gap:12px}
figure{margin:.6em 0 1em;padding:.5em;border:1px solid var(--grid);border-radius:6px;background:var(--bg);break-inside:avoid}
figcaption{font-weight:600;overflow-wrap:anywhere}
figcaption .sub{display:block;font-weight:400;color:var(--muted);font-size:.88rem}
figure svg.plot{display:block;width:100%;max-width:760px;height:auto;margin:.3em 0}
figure[data-plot=bars] svg.plot{max-width:640px}
figure[data-plot=relation] svg.plot{max-width:600px}
.downsampled{font-size:.85rem;color:var(--fg);background:var(--panel);border-left:4px dotted var(--info);padding:.1em .5em;margin:.2em 0}
.legend{display:flex;flex-wrap:wrap;gap:.2em 1em;list-style:none;padding:0;margin:.3em 0;font-size:.88rem}
.legend li{display:flex;align-items:center;gap:.35em}
svg.swatch{flex:none;overflow:visible}
details{margin:.3em 0}
summary{cursor:pointer;color:var(--info);font-size:.9rem}
.tablewrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.86rem;margin:.4em 0}
caption{text-align:left;color:var(--muted);padding:.2em 0}
th,td{border-bottom:1px solid var(--grid);padding:.2em .55em;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.wrap{max-width:46ch;overflow-wrap:anywhere}
code{font-size:.9em}
.t-neutral{color:var(--neutral)}.t-good{color:var(--good)}.t-warn{color:var(--warn)}
.t-bad{color:var(--bad)}.t-meta{color:var(--meta)}.t-info{color:var(--info)}
svg.plot text{fill:var(--fg);font-size:11px;font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
svg.plot text.tick{fill:var(--muted);font-size:10px}
svg.plot text.label{paint-order:stroke;stroke:var(--bg);stroke-width:3px;stroke-linejoin:round}
svg.plot text.dsnote{font-size:10px;font-style:italic}
svg.plot .axis{stroke:var(--muted);stroke-width:1;fill:none}
svg.plot .gridline{stroke:var(--grid);stroke-width:1;fill:none}
.series{fill:none;stroke:currentColor;stroke-width:1.8;stroke-linejoin:round}
.envelope{stroke:none;opacity:.28}
.threshold{stroke:currentColor;stroke-width:1.2;stroke-dasharray:5 3;fill:none}
.band{stroke:none;opacity:.45}
.mark path{fill:currentColor;stroke:var(--bg);stroke-width:1}
.mark.hollow path{fill:var(--bg);stroke:currentColor;stroke-width:1.6}
.pt{fill:var(--line)}
.pat{stroke:currentColor;stroke-width:1.3}
.patdot{fill:currentColor}
.fillbox{stroke:currentColor;stroke-width:1}
.seg{stroke:currentColor;stroke-width:1}
.edge{stroke:currentColor;fill:none;stroke-linecap:round}
.node circle{fill:var(--panel);stroke:var(--fg);stroke-width:1.4}
.arrow{fill:currentColor}
@media (max-width:520px){body{padding:8px;font-size:14px}dl.fields{grid-template-columns:1fr}dl.fields dd{margin-bottom:.3em}}
@media print{
:root{--bg:#fff;--fg:#000;--muted:#333;--grid:#bbb;--panel:#f3f3f3}
body{max-width:none;padding:0;font-size:11pt}
nav{display:none}
figure,table,tr{break-inside:avoid}
details::details-content{content-visibility:visible;display:block}
summary{color:#000}
a{color:#000;text-decoration:none}
.grid{grid-template-columns:repeat(2,1fr)}
}
`
