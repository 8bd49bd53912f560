package laserbrain

import "github.com/laserkit/laserkit/grammar"

// The Python behaviours other packages reproduce for the reference, kept
// here once (pyfmt.go has the reasons).

// PyStr is Python's str() of the value json.loads makes of v: text as it
// is, everything else as repr() writes it (None, True, 5, 0.5, ['a']).
func PyStr(v grammar.Value) string {
	if v.Kind == grammar.String {
		return v.Str
	}
	return PyRepr(v)
}

// PyStrip is Python's str.strip() with no arguments.
func PyStrip(s string) string { return pyStrip(s) }

// PyRound is Python's round(x, digits) for a float: correctly rounded on
// the exact binary value, ties to even.
func PyRound(x float64, digits int) float64 { return roundN(x, digits) }

// PyFloat parses s as Python's float() does for a finite value; ok is
// false for what float() refuses, and for inf and nan.
func PyFloat(s string) (float64, bool) { return parsePyFloat(s) }

// PyIntString is Python's int() of a string: white space around, a sign,
// decimal digits (any Unicode decimal digit) with single underscores
// between them; ok is false where int() raises.
func PyIntString(s string) (int, bool) { return parsePyInt(s) }
