package operator

import (
	"regexp"
	"strings"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// shapeRe is compiled on first use: the hook never needs it.
var shapeRe = firstuse.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(shapePattern) }}

// ShapeKnown reports whether a sequence of phases, space-separated, is a shape
// the grammar's shape language admits. Adjacent repeats are collapsed first
// ("change change verify" is "change verify"), as the pattern expects.
func ShapeKnown(phases string) bool {
	return shapeRe.Get().MatchString(CollapseShape(phases))
}

// CollapseShape normalises a phase sequence: single spaces, adjacent repeats
// collapsed.
func CollapseShape(phases string) string {
	var out []string
	for _, p := range strings.Fields(phases) {
		if len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}
