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
	var probs []Problem
	add := func(ptr, rule, format string, a ...any) {
		probs = append(probs, Problem{Pointer: ptr, Rule: rule, Message: fmt.Sprintf(format, a...)})
	}
	num := func(ptr string) float64 {
		v, err := doc.Lookup(ptr)
		if err != nil {
			return math.NaN()
		}
		f, _ := strconv.ParseFloat(v.Num, 64)
		return f
	}
	str := func(ptr string) string {
		v, err := doc.Lookup(ptr)
		if err != nil {
			return ""
		}
		return v.Str
	}
	list := func(ptr string) []Value {
		v, err := doc.Lookup(ptr)
		if err != nil {
			return nil
		}
		return v.Items
	}

	if sum := num("/calibration/weights/goal") + num("/calibration/weights/distance") + num("/calibration/weights/progress"); math.Abs(sum-1) > 1e-9 {
		add("/calibration/weights", "weights-sum", "goal + distance + progress must sum to 1, got %v", sum)
	}
	if num("/distance_range/min") >= num("/distance_range/max") {
		add("/distance_range", "range", "min must be below max")
	}

	for _, p := range []string{"/normalizer/token_pattern", "/normalizer/stem_pattern"} {
		if _, err := regexp.Compile(str(p)); err != nil {
			add(p, "regexp", "does not compile: %v", err)
		}
	}
	for _, group := range []string{"irreversible", "allow"} {
		for i, item := range list("/operator_patterns/" + group) {
			p, _ := item.Get("pattern")
			if _, err := regexp2.Compile(p.Str, RegexpOptions); err != nil {
				add(fmt.Sprintf("/operator_patterns/%s/%d/pattern", group, i), "regexp2", "does not compile: %v", err)
			}
		}
	}
	for _, kind := range []string{"cause", "observation"} {
		for i, item := range list("/ceiling_patterns/" + kind) {
			if _, err := regexp2.Compile(`\b(?:`+item.Str+`)\b`, RegexpOptions); err != nil {
				add(fmt.Sprintf("/ceiling_patterns/%s/%d", kind, i), "regexp2", "does not compile: %v", err)
			}
		}
	}

	// The phase map must speak about declared verbs and declared phases.
	steps, _ := doc.Lookup("/dictionary/steps")
	backbone := map[string]bool{}
	for _, b := range list("/dictionary/phases/backbone") {
		backbone[b.Str] = true
	}
	if ov, err := doc.Lookup("/dictionary/phases/of_verb"); err == nil && steps != nil {
		for _, m := range ov.Members {
			ptr := "/dictionary/phases/of_verb/" + escapePointer(m.Key)
			if _, ok := steps.Get(m.Key); !ok {
				add(ptr, "known-verb", "verb %q is not in /dictionary/steps", m.Key)
			}
			if !backbone[m.Value.Str] {
				add(ptr, "known-phase", "phase %q is not in /dictionary/phases/backbone", m.Value.Str)
			}
		}
	}

	shapePtr := "/dictionary/phases/shape_language"
	if re, err := regexp.Compile(str(shapePtr + "/pattern")); err != nil {
		add(shapePtr+"/pattern", "regexp", "does not compile: %v", err)
	} else {
		for i, s := range list(shapePtr + "/shapes") {
			if !re.MatchString(s.Str) {
				add(fmt.Sprintf("%s/shapes/%d", shapePtr, i), "shape-accepted", "the pattern rejects listed shape %q", s.Str)
			}
		}
		if rej, err := doc.Lookup(shapePtr + "/verified_rejects"); err == nil {
			for _, m := range rej.Members {
				if re.MatchString(m.Key) {
					add(shapePtr+"/verified_rejects/"+escapePointer(m.Key), "shape-rejected", "the pattern accepts verified reject %q", m.Key)
				}
			}
		}
	}
	if c := num(shapePtr + "/count"); int(c) != len(list(shapePtr+"/shapes")) {
		add(shapePtr+"/count", "count", "count %v does not match the %d listed shapes", c, len(list(shapePtr+"/shapes")))
	}

	modes := map[string]bool{}
	for _, m := range list("/modulation/modes") {
		modes[m.Str] = true
	}
	depths, _ := doc.Lookup("/modulation/depths")
	if depths != nil {
		for _, d := range depths.Members {
			for i, m := range d.Value.Items {
				if !modes[m.Str] {
					add(fmt.Sprintf("/modulation/depths/%s/%d", escapePointer(d.Key), i), "known-mode", "mode %q is not in /modulation/modes", m.Str)
				}
			}
		}
	}
	for i, p := range list("/modulation/presets") {
		roles, _ := p.Get("roles")
		if roles == nil {
			continue
		}
		for j, r := range roles.Items {
			ptr := fmt.Sprintf("/modulation/presets/%d/roles/%d", i, j)
			if rec, ok := r.Get("recurse"); ok && depths != nil {
				if _, ok := depths.Get(rec.Str); !ok {
					add(ptr+"/recurse", "known-depth", "depth %q is not in /modulation/depths", rec.Str)
				}
			}
			if ms, ok := r.Get("modes"); ok {
				for k, m := range ms.Items {
					if !modes[m.Str] {
						add(fmt.Sprintf("%s/modes/%d", ptr, k), "known-mode", "mode %q is not in /modulation/modes", m.Str)
					}
				}
			}
		}
	}
	return probs
}
