package coverage

import (
	"strconv"
)

// pct is Python's format(x, ".0%"): x × 100 rounded to a whole number,
// ties to even on the exact binary value (1/8 is "12%", 3/8 "38%").
func pct(x float64) string {
	return strconv.FormatFloat(x*100, 'f', 0, 64) + "%"
}
