package grammar

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/dlclark/regexp2"
)

// Problem is one reason a grammar document is invalid.
type Problem struct {
	Pointer string // JSON pointer into the document ("/" for the root)
	Rule    string // the schema keyword or check that failed
	Message string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: %s (rule: %s)", p.Pointer, p.Message, p.Rule)
}

// ValidationError lists every problem found, in document order.
type ValidationError struct{ Problems []Problem }

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "invalid grammar: " + strings.Join(parts, "; ")
}

// SemanticProblems are the rules a schema cannot state: weights summing to
// 1, patterns that compile, a shape pattern that accepts its own examples,
// names that refer to entries that exist. grammar/schema runs them after the
// JSON Schema (kept out of this package: the validator's package init costs
// milliseconds in every binary that links it, hooks included).
func SemanticProblems(doc *Value) []Problem { return semanticProblems(doc) }

// PointerOrRoot is a JSON pointer as problems report it ("/" for the root).
func PointerOrRoot(p string) string { return pointerOrRoot(p) }

// HashMismatchError says the document's content no longer matches the hash
// it declares: it was edited without being re-hashed, or corrupted.
type HashMismatchError struct{ Stored, Computed string }

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("content hashes differ: stored %s, computed %s", e.Stored, e.Computed)
}

// RegexpOptions are the regexp2 options operator and ceiling patterns are
// compiled with: .NET mode (Unicode \b, \w, \s like Python's re), ignoring case.
const RegexpOptions = regexp2.IgnoreCase

func semanticProblems(doc *Value) []Problem {
	c := &semantic{doc: doc}
	c.numbers()
	c.patterns()
	c.phases()
	c.shapes()
	c.modulation()
	return c.probs
}

// semantic checks one grammar document against the rules its schema
// cannot state, collecting every problem it finds.
type semantic struct {
	doc   *Value
	probs []Problem
}

func (c *semantic) add(ptr, rule, format string, a ...any) {
	c.probs = append(c.probs, Problem{Pointer: ptr, Rule: rule, Message: fmt.Sprintf(format, a...)})
}

// num is the number at ptr (NaN where there is none).
func (c *semantic) num(ptr string) float64 {
	v, err := c.doc.Lookup(ptr)
	if err != nil {
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(v.Num, 64)
	return f
}

// str is the string at ptr ("" where there is none).
func (c *semantic) str(ptr string) string {
	v, err := c.doc.Lookup(ptr)
	if err != nil {
		return ""
	}
	return v.Str
}

// list is the array at ptr (nil where there is none).
func (c *semantic) list(ptr string) []Value {
	v, err := c.doc.Lookup(ptr)
	if err != nil {
		return nil
	}
	return v.Items
}

// numbers: the weights sum to 1 and the distance range is a range.
func (c *semantic) numbers() {
	if sum := c.num("/calibration/weights/goal") + c.num("/calibration/weights/distance") + c.num("/calibration/weights/progress"); math.Abs(sum-1) > 1e-9 {
		c.add("/calibration/weights", "weights-sum", "goal + distance + progress must sum to 1, got %v", sum)
	}
	if c.num("/distance_range/min") >= c.num("/distance_range/max") {
		c.add("/distance_range", "range", "min must be below max")
	}
}

// patterns: every regular expression compiles, in the engine that runs it.
func (c *semantic) patterns() {
	for _, p := range []string{"/normalizer/token_pattern", "/normalizer/stem_pattern"} {
		if _, err := regexp.Compile(c.str(p)); err != nil {
			c.add(p, "regexp", "does not compile: %v", err)
		}
	}
	for _, group := range []string{"irreversible", "allow"} {
		for i, item := range c.list("/operator_patterns/" + group) {
			p, _ := item.Get("pattern")
			if _, err := regexp2.Compile(p.Str, RegexpOptions); err != nil {
				c.add(fmt.Sprintf("/operator_patterns/%s/%d/pattern", group, i), "regexp2", "does not compile: %v", err)
			}
		}
	}
	for _, kind := range []string{"cause", "observation"} {
		for i, item := range c.list("/ceiling_patterns/" + kind) {
			if _, err := regexp2.Compile(`\b(?:`+item.Str+`)\b`, RegexpOptions); err != nil {
				c.add(fmt.Sprintf("/ceiling_patterns/%s/%d", kind, i), "regexp2", "does not compile: %v", err)
			}
		}
	}
}

// phases: the phase map speaks about declared verbs and declared phases.
func (c *semantic) phases() {
	steps, _ := c.doc.Lookup("/dictionary/steps")
	backbone := map[string]bool{}
	for _, b := range c.list("/dictionary/phases/backbone") {
		backbone[b.Str] = true
	}
	if ov, err := c.doc.Lookup("/dictionary/phases/of_verb"); err == nil && steps != nil {
		for _, m := range ov.Members {
			ptr := "/dictionary/phases/of_verb/" + escapePointer(m.Key)
			if _, ok := steps.Get(m.Key); !ok {
				c.add(ptr, "known-verb", "verb %q is not in /dictionary/steps", m.Key)
			}
			if !backbone[m.Value.Str] {
				c.add(ptr, "known-phase", "phase %q is not in /dictionary/phases/backbone", m.Value.Str)
			}
		}
	}
}

// shapes: the shape language accepts its listed shapes, rejects its
// verified rejects, and counts them right.
func (c *semantic) shapes() {
	shapePtr := "/dictionary/phases/shape_language"
	if re, err := regexp.Compile(c.str(shapePtr + "/pattern")); err != nil {
		c.add(shapePtr+"/pattern", "regexp", "does not compile: %v", err)
	} else {
		for i, s := range c.list(shapePtr + "/shapes") {
			if !re.MatchString(s.Str) {
				c.add(fmt.Sprintf("%s/shapes/%d", shapePtr, i), "shape-accepted", "the pattern rejects listed shape %q", s.Str)
			}
		}
		if rej, err := c.doc.Lookup(shapePtr + "/verified_rejects"); err == nil {
			for _, m := range rej.Members {
				if re.MatchString(m.Key) {
					c.add(shapePtr+"/verified_rejects/"+escapePointer(m.Key), "shape-rejected", "the pattern accepts verified reject %q", m.Key)
				}
			}
		}
	}
	if n := c.num(shapePtr + "/count"); int(n) != len(c.list(shapePtr+"/shapes")) {
		c.add(shapePtr+"/count", "count", "count %v does not match the %d listed shapes", n, len(c.list(shapePtr+"/shapes")))
	}
}

// modulation: depths and roles name declared modes, roles declared depths.
func (c *semantic) modulation() {
	modes := map[string]bool{}
	for _, m := range c.list("/modulation/modes") {
		modes[m.Str] = true
	}
	depths, _ := c.doc.Lookup("/modulation/depths")
	if depths != nil {
		for _, d := range depths.Members {
			for i, m := range d.Value.Items {
				if !modes[m.Str] {
					c.add(fmt.Sprintf("/modulation/depths/%s/%d", escapePointer(d.Key), i), "known-mode", "mode %q is not in /modulation/modes", m.Str)
				}
			}
		}
	}
	for i, p := range c.list("/modulation/presets") {
		roles, _ := p.Get("roles")
		if roles == nil {
			continue
		}
		for j, r := range roles.Items {
			ptr := fmt.Sprintf("/modulation/presets/%d/roles/%d", i, j)
			if rec, ok := r.Get("recurse"); ok && depths != nil {
				if _, ok := depths.Get(rec.Str); !ok {
					c.add(ptr+"/recurse", "known-depth", "depth %q is not in /modulation/depths", rec.Str)
				}
			}
			if ms, ok := r.Get("modes"); ok {
				for k, m := range ms.Items {
					if !modes[m.Str] {
						c.add(fmt.Sprintf("%s/modes/%d", ptr, k), "known-mode", "mode %q is not in /modulation/modes", m.Str)
					}
				}
			}
		}
	}
}
