package laserbrain

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/laserkit/laserkit/grammar"
)

// Python's int(), float() and truth of a value json.loads made: the
// reference's tools read their arguments through them, so a port that
// means to answer as the reference does reads them the same way.

// PyTruthy is Python's bool() of the value: null, false, 0, "", [] and {}
// are false, everything else true.
func PyTruthy(v grammar.Value) bool {
	switch v.Kind {
	case grammar.Null:
		return false
	case grammar.Bool:
		return v.Bool
	case grammar.Number:
		return numberTruthy(v.Num)
	case grammar.String:
		return v.Str != ""
	case grammar.Array:
		return len(v.Items) > 0
	case grammar.Object:
		return len(v.Members) > 0
	}
	return true
}

// numberTruthy is the truth of a JSON number as json.loads reads it: an
// integer literal is an int of any size, true unless all its digits are
// 0; one with a fraction or an exponent is a float64, so one too small
// for it (1e-400) is 0.0, false, and one too large is inf, true.
func numberTruthy(lit string) bool {
	if !strings.ContainsAny(lit, ".eE") {
		return strings.Trim(strings.TrimPrefix(lit, "-"), "0") != ""
	}
	f, err := strconv.ParseFloat(lit, 64) // correctly rounded, as Python's float()
	return f != 0 || err != nil && !errors.Is(err, strconv.ErrRange)
}

// maxPyInt bounds what PyInt returns: Python's ints have no bound, and a
// slice index beyond any list's length reads the same whatever its size.
const maxPyInt = 1 << 53

// PyInt is Python's int() of the value: a whole number as it is, a float
// truncated toward zero, true 1 and false 0, a string holding an integer
// literal (spaces around, a sign, digits with single underscores between).
// Anything else is an error saying what int() would have refused.
func PyInt(v grammar.Value) (int, error) {
	switch v.Kind {
	case grammar.Bool:
		if v.Bool {
			return 1, nil
		}
		return 0, nil
	case grammar.Number:
		if !strings.ContainsAny(v.Num, ".eE") {
			n, ok := new(big.Int).SetString(v.Num, 10)
			if !ok {
				return 0, fmt.Errorf("%s is not a number", v.Num)
			}
			return clampPyInt(n), nil
		}
		f, _, err := big.ParseFloat(v.Num, 10, 64, big.ToZero)
		if err != nil {
			return 0, fmt.Errorf("%s is not a number", v.Num)
		}
		if f64, _ := f.Float64(); math.IsInf(f64, 0) {
			return 0, errors.New("cannot convert float infinity to an integer")
		}
		n, _ := f.Int(nil)
		return clampPyInt(n), nil
	case grammar.String:
		n, ok := parsePyInt(v.Str)
		if !ok {
			return 0, fmt.Errorf("%s is not a whole number", PyRepr(v.Str))
		}
		return n, nil
	}
	return 0, fmt.Errorf("%s is not a number", v.Kind)
}

func clampPyInt(n *big.Int) int {
	switch {
	case n.Cmp(big.NewInt(maxPyInt)) > 0:
		return maxPyInt
	case n.Cmp(big.NewInt(-maxPyInt)) < 0:
		return -maxPyInt
	}
	return int(n.Int64())
}

// parsePyInt is int(s) for a str: surrounding whitespace, an optional sign,
// then decimal digits (any Unicode decimal digit) with single underscores
// between them.
func parsePyInt(s string) (int, bool) {
	s = pyStrip(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var digits strings.Builder
	prevDigit := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r == '_' {
			if !prevDigit || i >= len(s) {
				return 0, false
			}
			prevDigit = false
			continue
		}
		d, ok := decimalValue(r)
		if !ok {
			return 0, false
		}
		digits.WriteByte(byte('0' + d))
		prevDigit = true
	}
	if digits.Len() == 0 || !prevDigit {
		return 0, false
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	if !ok {
		return 0, false
	}
	if neg {
		n.Neg(n)
	}
	return clampPyInt(n), true
}

// PyFloatValue is Python's float() of the value: numbers and true/false as
// they are, a string as float() reads it ("0.9", " 1e1 "; "inf" and "nan"
// too). ok is false where float() raises.
func PyFloatValue(v grammar.Value) (float64, bool) {
	switch v.Kind {
	case grammar.Bool:
		if v.Bool {
			return 1, true
		}
		return 0, true
	case grammar.Number:
		f, _, err := big.ParseFloat(v.Num, 10, 53, big.ToNearestEven)
		if err != nil {
			return 0, false
		}
		x, _ := f.Float64()
		return x, true
	case grammar.String:
		return PyFloatAny(v.Str)
	}
	return 0, false
}

// PyFloatAny is Python's float() of a string, inf and nan included; ok is
// false where float() raises.
func PyFloatAny(s string) (float64, bool) {
	if f, ok := parsePyFloat(s); ok {
		return f, true
	}
	switch strings.ToLower(pyStrip(s)) {
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	case "nan", "+nan", "-nan":
		return math.NaN(), true
	}
	return 0, false
}
