package vectors

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// differ walks an expected and an actual JSON value (decoded with
// json.Number) and writes one line per place they differ, named by its
// JSON pointer: "/phi: expected 0.5, got 0.12". Values the expected one
// does not mention are ignored unless strict.
type differ struct {
	strict bool
	lines  []string
}

// maxDiffLines bounds one failure's diff: the first lines say what is
// wrong; the rest is in the JSON report's actual.
const maxDiffLines = 20

func (d *differ) add(ptr, format string, a ...any) {
	if len(d.lines) == maxDiffLines {
		d.lines = append(d.lines, "… (more differences)")
	}
	if len(d.lines) > maxDiffLines {
		return
	}
	if ptr == "" {
		ptr = "(the answer)"
	}
	d.lines = append(d.lines, ptr+": "+fmt.Sprintf(format, a...))
}

func (d *differ) walk(ptr string, want, got any) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			d.add(ptr, "expected an object %s, got %s", short(want), short(got))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			gv, present := g[k]
			if !present {
				d.add(ptr+"/"+escapePtr(k), "missing (expected %s)", short(w[k]))
				continue
			}
			d.walk(ptr+"/"+escapePtr(k), w[k], gv)
		}
		if d.strict {
			for _, k := range slices.Sorted(maps.Keys(g)) {
				if _, present := w[k]; !present {
					d.add(ptr+"/"+escapePtr(k), "not expected (got %s)", short(g[k]))
				}
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			d.add(ptr, "expected a list %s, got %s", short(want), short(got))
			return
		}
		if len(g) != len(w) {
			d.add(ptr, "expected %d elements, got %d", len(w), len(g))
		}
		for i := 0; i < len(w) && i < len(g); i++ {
			d.walk(ptr+"/"+strconv.Itoa(i), w[i], g[i])
		}
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !numbersEqual(w, g) {
			d.add(ptr, "expected %s, got %s", short(want), short(got))
		}
	default:
		if want != got {
			d.add(ptr, "expected %s, got %s", short(want), short(got))
		}
	}
}

func escapePtr(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// short renders a value for a diff line, cut to a readable length.
func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
