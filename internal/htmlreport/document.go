package htmlreport

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Document is one self-contained HTML page.
type Document struct {
	Title string
	// Subtitle is one line under the title.
	Subtitle string
	// Meta is shown under the subtitle as name: value pairs (what the report
	// was made from, when).
	Meta     []Field
	Sections []Section
}

// Field is one name: value pair.
type Field struct{ Name, Value string }

// Section is one titled part of the page, listed in the page's contents.
type Section struct {
	// ID is the fragment the contents link to; made unique if it clashes.
	ID     string
	Title  string
	Intro  string
	Blocks []Block
}

// Block is one thing in a section: a plot, a table, a note, a grid.
type Block interface {
	render(w *writer)
}

// Write renders doc to out.
func Write(out io.Writer, doc *Document) error {
	bw := bufio.NewWriterSize(out, 64<<10)
	w := &writer{b: make([]byte, 0, 64<<10), out: bw, ids: map[string]int{}}
	w.page(doc)
	w.flush()
	if w.err != nil {
		return w.err
	}
	return bw.Flush()
}

// Render returns doc as bytes.
func Render(doc *Document) []byte {
	var sb strings.Builder
	_ = Write(&sb, doc) // a strings.Builder does not fail
	return []byte(sb.String())
}

func (w *writer) page(doc *Document) {
	w.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	w.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
	w.raw("<meta name=\"color-scheme\" content=\"light dark\"/>\n")
	// Nothing may be fetched: a policy that forbids every load makes a
	// stray reference fail closed in the browser instead of leaking.
	w.raw("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"/>\n")
	w.raw("<title>")
	w.text(doc.Title)
	w.raw("</title>\n<style>")
	w.raw(css)
	w.raw("</style>\n</head>\n<body>\n<header>\n<h1>")
	w.text(doc.Title)
	w.raw("</h1>\n")
	if doc.Subtitle != "" {
		w.raw("<p class=\"subtitle\">")
		w.text(doc.Subtitle)
		w.raw("</p>\n")
	}
	if len(doc.Meta) > 0 {
		Fields{Items: doc.Meta}.render(w)
	}
	ids := make([]string, len(doc.Sections))
	for i, s := range doc.Sections {
		ids[i] = w.id(s.ID)
	}
	if len(doc.Sections) > 1 {
		w.raw("<nav aria-label=\"Contents\"><ol>")
		for i, s := range doc.Sections {
			w.raw("<li><a href=\"#")
			w.attr(ids[i])
			w.raw("\">")
			w.text(s.Title)
			w.raw("</a></li>")
		}
		w.raw("</ol></nav>\n")
	}
	w.raw("</header>\n<main>\n")
	for i, s := range doc.Sections {
		w.raw("<section id=\"")
		w.attr(ids[i])
		w.raw("\" aria-labelledby=\"")
		w.attr(ids[i] + "-h")
		w.raw("\">\n<h2 id=\"")
		w.attr(ids[i] + "-h")
		w.raw("\">")
		w.text(s.Title)
		w.raw("</h2>\n")
		if s.Intro != "" {
			w.para("intro", s.Intro)
		}
		w.blocks(s.Blocks)
		w.raw("</section>\n")
	}
	w.raw("</main>\n</body>\n</html>\n")
}

// writer accumulates the page in a byte slice and flushes it in large
// chunks; every text and attribute goes through the escapers.
type writer struct {
	b   []byte
	out *bufio.Writer
	err error
	ids map[string]int
}

func (w *writer) flush() {
	if w.err == nil && len(w.b) > 0 {
		_, w.err = w.out.Write(w.b)
	}
	w.b = w.b[:0]
}

func (w *writer) maybeFlush() {
	if len(w.b) >= 48<<10 {
		w.flush()
	}
}

func (w *writer) raw(s string) { w.b = append(w.b, s...) }

// openPlot writes a plot's figure and caption, and opens its svg as far as
// its aria-labelledby attribute; the caller may add attributes (each
// starting with the closing quote), then calls closePlotHead.
func (w *writer) openPlot(kind, id, title, subtitle string, width, height float64) {
	w.raw("<figure class=\"plotfig\" data-plot=\"")
	w.raw(kind)
	w.raw("\" id=\"")
	w.attr(id)
	w.raw("\"><figcaption>")
	w.text(title)
	if subtitle != "" {
		w.raw("<span class=\"sub\">")
		w.text(subtitle)
		w.raw("</span>")
	}
	w.raw("</figcaption>\n<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ")
	w.num(width)
	w.raw(" ")
	w.num(height)
	w.raw("\" role=\"img\" aria-labelledby=\"")
	w.raw(id + "-t " + id + "-d")
}

// closePlotHead ends the svg's opening tag with the title and the
// description its aria-labelledby names.
func (w *writer) closePlotHead(id, title, desc string) {
	w.raw("\"><title id=\"")
	w.raw(id + "-t")
	w.raw("\">")
	w.text(title)
	w.raw("</title><desc id=\"")
	w.raw(id + "-d")
	w.raw("\">")
	w.text(desc)
	w.raw("</desc>")
}

// text writes s escaped for element content and attribute values alike.
// Control characters that XML cannot carry become U+FFFD, so the page
// stays well-formed whatever an agent wrote into its goal.
func (w *writer) text(s string) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				w.b = append(w.b, "&amp;"...)
			case c == '<':
				w.b = append(w.b, "&lt;"...)
			case c == '>':
				w.b = append(w.b, "&gt;"...)
			case c == '"':
				w.b = append(w.b, "&quot;"...)
			case c == '\'':
				w.b = append(w.b, "&#39;"...)
			case c < 0x20 && c != '\n' && c != '\t' && c != '\r', c == 0x7f:
				w.b = append(w.b, "\uFFFD"...)
			default:
				w.b = append(w.b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r == 0xFFFE || r == 0xFFFF || (r >= 0x80 && r <= 0x9f) {
			w.b = append(w.b, "\uFFFD"...)
		} else {
			w.b = append(w.b, s[i:i+n]...)
		}
		i += n
	}
}

func (w *writer) attr(s string) { w.text(s) }

func (w *writer) para(class, s string) {
	w.raw("<p class=\"")
	w.raw(class)
	w.raw("\">")
	w.text(s)
	w.raw("</p>\n")
}

// num writes x with at most one decimal: SVG coordinates.
func (w *writer) num(x float64) {
	w.b = strconv.AppendFloat(w.b, round1(x), 'f', -1, 64)
}

func (w *writer) int(n int) { w.b = strconv.AppendInt(w.b, int64(n), 10) }

func round1(x float64) float64 {
	if x < 0 {
		return -float64(int64(-x*10+0.5)) / 10
	}
	return float64(int64(x*10+0.5)) / 10
}

// id returns a document-unique id made from want (letters, digits, '-' and
// '_' kept, anything else '-').
func (w *writer) id(want string) string {
	var sb strings.Builder
	for _, r := range want {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			sb.WriteRune(r)
		default:
			sb.WriteByte('-')
		}
	}
	base := sb.String()
	if base == "" || !(base[0] >= 'a' && base[0] <= 'z' || base[0] >= 'A' && base[0] <= 'Z') {
		base = "x" + base
	}
	id := base
	for n := 2; w.ids[id] > 0; n++ {
		id = base + "-" + strconv.Itoa(n)
	}
	w.ids[id]++
	return id
}
