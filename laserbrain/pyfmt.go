package laserbrain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/laserkit/laserkit/grammar"
)

// The reference is Python; these helpers reproduce the few Python behaviours
// its outputs depend on, where Go's standard library reads differently.

// round2 is Python's round(x, 2): correctly rounded on the exact binary
// value, ties to even. strconv does exactly that when it formats.
func round2(x float64) float64 { return roundN(x, 2) }

// round3 is Python's round(x, 3).
func round3(x float64) float64 { return roundN(x, 3) }

func roundN(x float64, digits int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	var buf [32]byte
	f, _ := strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], x, 'f', digits, 64)), 64)
	return f
}

// pyIsSpace reports whether Python's str.isspace() holds for r. Go's
// unicode.IsSpace misses the four information separators U+001C..U+001F,
// which Python strips.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyStrip is Python's str.strip() with no arguments.
func pyStrip(s string) string {
	return strings.TrimFunc(s, pyIsSpace)
}

// Distance is a step's distance to done after the reference's asDist:
// Known is false when no distance was given at all (Φ then treats the
// distance term as 0 and the stall detector is off).
type Distance struct {
	Value int
	Known bool
}

// Dist returns a known distance, clamped to the grammar's range.
func Dist(n int) Distance { return Distance{Value: clampDist(n), Known: true} }

// NoDistance is the unknown distance.
var NoDistance = Distance{}

func clampDist(n int) int { return max(distanceMin, min(distanceMax, n)) }

// distFallback is what the reference's asDist returns for anything it cannot
// read as a number: the middle of the range.
const distFallback = (distanceMin + distanceMax) / 2

// asDistFloat is int(float(x)) clamped, with a non-finite value falling back.
func asDistFloat(f float64) int {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return distFallback
	}
	t := math.Trunc(f)
	switch {
	case t < distanceMin:
		return distanceMin
	case t > distanceMax:
		return distanceMax
	}
	return int(t)
}

// DistanceFromString reads s as the reference does (int(float(s)), clamped
// to the range): "7.9" → 7, "1e1" → 10, anything that is not a Python float
// literal → 5. ok is false in that last case, so a CLI can refuse it.
func DistanceFromString(s string) (d Distance, ok bool) {
	f, ok := parsePyFloat(s)
	if !ok {
		return Distance{Value: distFallback, Known: true}, false
	}
	return Distance{Value: asDistFloat(f), Known: true}, true
}

// DistanceFromJSON reads a JSON value as the reference reads the decoded
// Python value: null (or absent, raw == nil) is unknown; numbers truncate
// toward zero and clamp; true is 1, false 0; strings go through Python's
// float(); anything else (lists, objects) falls back to 5.
func DistanceFromJSON(raw json.RawMessage) Distance {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return NoDistance
	case s == "true":
		return Dist(1)
	case s == "false":
		return Dist(0)
	case s[0] == '"':
		var str string
		if json.Unmarshal(raw, &str) != nil {
			return Distance{Value: distFallback, Known: true}
		}
		d, _ := DistanceFromString(str)
		return d
	case s[0] == '-' || (s[0] >= '0' && s[0] <= '9'):
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !math.IsInf(f, 0) { // out of range parses to ±Inf: fallback below
			return Distance{Value: distFallback, Known: true}
		}
		return Distance{Value: asDistFloat(f), Known: true}
	}
	return Distance{Value: distFallback, Known: true}
}

// parsePyFloat accepts exactly what Python's float() accepts for a finite
// decimal value: surrounding whitespace, an optional sign, digits (any
// Unicode decimal digit) with single underscores between them, an optional
// fraction and exponent. "inf" and "nan" parse in Python but int() of them
// fails, so here they are simply not finite numbers (ok false).
func parsePyFloat(s string) (float64, bool) {
	s = pyStrip(s)
	var b strings.Builder
	b.Grow(len(s))
	i := 0
	next := func() (rune, int) {
		if i >= len(s) {
			return -1, 0
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		return r, n
	}
	sign := func() {
		if r, n := next(); r == '+' || r == '-' {
			b.WriteRune(r)
			i += n
		}
	}
	// digits reads digitpart := digit (["_"] digit)*, returning how many digits.
	digits := func() int {
		count := 0
		for {
			r, n := next()
			if d, ok := decimalValue(r); ok {
				b.WriteByte(byte('0' + d))
				i += n
				count++
				continue
			}
			if r == '_' && count > 0 {
				r2, _ := utf8.DecodeRuneInString(s[i+n:])
				if _, ok := decimalValue(r2); ok && i+n < len(s) {
					i += n
					continue
				}
			}
			return count
		}
	}
	sign()
	intDigits := digits()
	fracDigits := 0
	if r, n := next(); r == '.' {
		b.WriteByte('.')
		i += n
		fracDigits = digits()
	}
	if intDigits == 0 && fracDigits == 0 {
		return 0, false
	}
	if r, n := next(); r == 'e' || r == 'E' {
		b.WriteByte('e')
		i += n
		sign()
		if digits() == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(b.String(), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// decimalValue returns the value of a Unicode decimal digit (category Nd).
// Every Nd block is a run of ten starting at its zero, so the value is the
// distance from the start of the run, modulo ten.
func decimalValue(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r < utf8.RuneSelf || !unicode.IsDigit(r) {
		return 0, false
	}
	start := r
	for unicode.IsDigit(start - 1) {
		start--
	}
	return int(r-start) % 10, true
}

// MarshalJSON writes a known distance as its integer and an unknown one as
// null.
func (d Distance) MarshalJSON() ([]byte, error) {
	if !d.Known {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, int64(d.Value), 10), nil
}

// UnmarshalJSON reads any JSON value as the reference reads a distance
// (see DistanceFromJSON).
func (d *Distance) UnmarshalJSON(data []byte) error {
	*d = DistanceFromJSON(data)
	return nil
}

// String is the distance as a laserscore writes it after the "d".
func (d Distance) String() string {
	if !d.Known {
		return "?"
	}
	return strconv.Itoa(d.Value)
}

// PyRepr writes v as Python's repr() writes the value json.loads (or a Go
// caller) would have made of it: None, True, 'text', 1, 1.5, [1, 2],
// {'k': 0}. Map keys are sorted: Go maps have no insertion order, so two
// equal results always read the same; a grammar.Value keeps its document
// order, as a dict from json.loads does.
func PyRepr(v any) string {
	var b strings.Builder
	writePy(&b, v, &pyReprStyle)
	return b.String()
}

// pyStyle is how one Python rendering spells the scalars: json.dumps or
// repr(). Containers are written alike: ", " and ": ", keys sorted.
type pyStyle struct {
	null, yes, no string
	str           func(*strings.Builder, string)
	float         func(*strings.Builder, float64)
}

var (
	pyJSONStyle = pyStyle{"null", "true", "false", grammar.WritePythonString,
		func(b *strings.Builder, f float64) { b.WriteString(grammar.PythonFloatRepr(f)) }}
	pyReprStyle = pyStyle{"None", "True", "False", writePyReprString, writePyFloat}
)

func writePy(b *strings.Builder, v any, st *pyStyle) {
	switch x := v.(type) {
	case nil:
		b.WriteString(st.null)
	case bool:
		if x {
			b.WriteString(st.yes)
		} else {
			b.WriteString(st.no)
		}
	case string:
		st.str(b, x)
	case json.Number:
		s := string(x)
		if f, err := strconv.ParseFloat(s, 64); strings.ContainsAny(s, ".eE") && (err == nil || math.IsInf(f, 0)) {
			st.float(b, f)
		} else {
			b.WriteString(grammar.PythonNumber(s))
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			// encoding/json without UseNumber turns JSON integers into
			// float64; Python would have kept them as int.
			b.WriteString(strconv.FormatFloat(x, 'f', 0, 64))
			return
		}
		st.float(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e, st)
		}
		b.WriteByte(']')
	case grammar.Value:
		writePyValue(b, x, st)
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteString(", ")
			}
			st.str(b, k)
			b.WriteString(": ")
			writePy(b, x[k], st)
		}
		b.WriteByte('}')
	default:
		// Other Go values: as the generic value their JSON decodes to.
		if g, ok := genericJSON(x); ok {
			writePy(b, g, st)
			return
		}
		st.str(b, fmt.Sprint(x))
	}
}

// writePyValue writes a value read by grammar.Parse, which keeps what a
// Python dict keeps and a Go map loses: its keys in document order.
func writePyValue(b *strings.Builder, v grammar.Value, st *pyStyle) {
	switch v.Kind {
	case grammar.Null:
		writePy(b, nil, st)
	case grammar.Bool:
		writePy(b, v.Bool, st)
	case grammar.Number:
		writePy(b, json.Number(v.Num), st)
	case grammar.String:
		st.str(b, v.Str)
	case grammar.Array:
		b.WriteByte('[')
		for i, e := range v.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyValue(b, e, st)
		}
		b.WriteByte(']')
	case grammar.Object:
		b.WriteByte('{')
		for i, m := range v.Members {
			if i > 0 {
				b.WriteString(", ")
			}
			st.str(b, m.Key)
			b.WriteString(": ")
			writePyValue(b, m.Value, st)
		}
		b.WriteByte('}')
	}
}

// genericJSON turns a Go value into what encoding/json decodes its JSON
// to (numbers as json.Number); ok is false when it has no JSON form.
func genericJSON(v any) (any, bool) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var g any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&g) != nil {
		return nil, false
	}
	return g, true
}

func writePyFloat(b *strings.Builder, f float64) {
	switch {
	case math.IsNaN(f):
		b.WriteString("nan")
	case math.IsInf(f, 1):
		b.WriteString("inf")
	case math.IsInf(f, -1):
		b.WriteString("-inf")
	default:
		b.WriteString(grammar.PythonFloatRepr(f))
	}
}

// writePyReprString is repr(str): single quotes unless the text holds a
// single quote and no double quote; backslash, the quote, \n, \r, \t
// escaped; other unprintable characters as \xhh, \uhhhh or \Uhhhhhhhh.
func writePyReprString(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case !unicode.IsPrint(r):
			switch {
			case r < 0x100:
				fmt.Fprintf(b, `\x%02x`, r)
			case r < 0x10000:
				fmt.Fprintf(b, `\u%04x`, r)
			default:
				fmt.Fprintf(b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
}
