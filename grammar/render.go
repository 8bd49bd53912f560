package grammar

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Render writes v the way Python's json.dumps(v, indent=2, ensure_ascii=True)
// does, plus a trailing newline. This is the canonical form the content hash
// is defined over: key order kept, non-ASCII escaped as lowercase \uXXXX,
// floats in Python's repr (1.0 stays 1.0), no HTML escaping.
func Render(v Value) []byte {
	var b strings.Builder
	render(&b, v, 0, true)
	b.WriteByte('\n')
	return []byte(b.String())
}

// RenderUTF8 is Render with non-ASCII text left as UTF-8, for people to read.
func RenderUTF8(v Value) []byte {
	var b strings.Builder
	render(&b, v, 0, false)
	b.WriteByte('\n')
	return []byte(b.String())
}

func render(b *strings.Builder, v Value, depth int, ascii bool) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Number:
		b.WriteString(PythonNumber(v.Num))
	case String:
		WriteJSONString(b, v.Str, ascii)
	case Array, Object:
		parts, open, end := len(v.Items), byte('['), byte(']')
		if v.Kind == Object {
			parts, open, end = len(v.Members), '{', '}'
		}
		b.WriteByte(open)
		for i := range parts {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(b, depth+1)
			if v.Kind == Array {
				render(b, v.Items[i], depth+1, ascii)
				continue
			}
			WriteJSONString(b, v.Members[i].Key, ascii)
			b.WriteString(": ")
			render(b, v.Members[i].Value, depth+1, ascii)
		}
		if parts > 0 {
			newline(b, depth)
		}
		b.WriteByte(end)
	}
}

func newline(b *strings.Builder, depth int) {
	b.WriteByte('\n')
	for i := 0; i < depth; i++ {
		b.WriteString("  ")
	}
}

// PythonNumber renders a JSON number literal as Python would after json.loads:
// integers as integers, anything with a fraction or exponent as a float repr.
func PythonNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		if strings.TrimLeft(lit, "-0") == "" {
			return "0"
		}
		return lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		// Out of float range: Python reads it as inf and json.dumps writes
		// "Infinity". Keep that spelling so the hash still follows Python.
		if strings.HasPrefix(lit, "-") {
			return "-Infinity"
		}
		return "Infinity"
	}
	return PythonFloatRepr(f)
}

// PythonFloatRepr formats f like Python's repr(float): the shortest digits
// that round-trip, fixed notation when the decimal exponent is in [-4, 16),
// otherwise scientific with a two-digit signed exponent.
func PythonFloatRepr(f float64) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	if math.IsInf(f, 0) {
		if f < 0 {
			return "-Infinity"
		}
		return "Infinity"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // e.g. "-1.25e+02"
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, expPart, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expPart)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // digits d1d2... with the point after decpt digits
	if -4 < decpt && decpt <= 16 {
		var s string
		switch {
		case decpt <= 0:
			s = "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			s = digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			s = digits[:decpt] + "." + digits[decpt:]
		}
		return sign + s
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es, exp = "-", -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
}

// WritePythonString writes s as a JSON string the way Python's json.dumps does
// with ensure_ascii=True: non-ASCII and DEL as lowercase \uXXXX escapes.
func WritePythonString(b *strings.Builder, s string) { WriteJSONString(b, s, true) }

// TextWriter is what WriteJSONString writes to: a *strings.Builder or a
// *bytes.Buffer.
type TextWriter interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
	WriteRune(r rune) (int, error)
}

// WriteJSONString writes s as a JSON string the way Python's json.dumps
// does: the short escapes (\" \\ \n \r \t \b \f), other control
// characters as lowercase \u00XX, and with ascii (ensure_ascii=True) every
// rune from DEL up as \uXXXX (a surrogate pair above U+FFFF); without it
// text is written as UTF-8. It is the one JSON string writer for output
// that must match Python's byte for byte (the canonical grammar, the
// reference's JSONL records) or a JavaScript tool's (Claude Code's
// settings, whose JSON.stringify escapes the same way).
func WriteJSONString(b TextWriter, s string, ascii bool) {
	_ = b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			_, _ = b.WriteString(`\"`)
		case r == '\\':
			_, _ = b.WriteString(`\\`)
		case r == '\n':
			_, _ = b.WriteString(`\n`)
		case r == '\r':
			_, _ = b.WriteString(`\r`)
		case r == '\t':
			_, _ = b.WriteString(`\t`)
		case r == '\b':
			_, _ = b.WriteString(`\b`)
		case r == '\f':
			_, _ = b.WriteString(`\f`)
		case r < 0x20 || (ascii && r >= 0x7f):
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(b, `\u%04x\u%04x`, hi, lo)
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			_, _ = b.WriteRune(r)
		}
	}
	_ = b.WriteByte('"')
}

// RenderLine writes v on one line the way Python's json.dumps(v,
// ensure_ascii=False) does: ", " and ": " separators, key order kept,
// non-ASCII text as UTF-8, floats in Python's repr. It is the record format
// of the reference's JSONL files.
func RenderLine(v Value) []byte {
	var b strings.Builder
	renderLine(&b, v, false)
	return []byte(b.String())
}

// RenderLineASCII is RenderLine with Python's default ensure_ascii=True:
// json.dumps(v) exactly, non-ASCII escaped as lowercase \uXXXX.
func RenderLineASCII(v Value) []byte {
	var b strings.Builder
	renderLine(&b, v, true)
	return []byte(b.String())
}

func renderLine(b *strings.Builder, v Value, ascii bool) {
	switch v.Kind {
	case Array:
		b.WriteByte('[')
		for i, item := range v.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			renderLine(b, item, ascii)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, m := range v.Members {
			if i > 0 {
				b.WriteString(", ")
			}
			WriteJSONString(b, m.Key, ascii)
			b.WriteString(": ")
			renderLine(b, m.Value, ascii)
		}
		b.WriteByte('}')
	default:
		render(b, v, 0, ascii)
	}
}
