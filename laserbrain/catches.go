package laserbrain

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dlclark/regexp2"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// A Catch is drift in how an agent verifies, read from what was observed
// (Events) rather than from what the agent says: a check that has never
// failed, a tool that keeps returning nothing, a claim nothing was run
// against. The reference's six signatures, with its texts.
type Catch struct {
	Signature string   `json:"signature"`
	Detail    string   `json:"detail"`
	Evidence  []string `json:"evidence"`
}

// The catch signatures.
const (
	CatchUnfalsified     = "unfalsified"
	CatchInstrumentBlind = "instrument-blind"
	CatchUnrun           = "unrun"
	CatchResidue         = "residue"
	CatchContaminated    = "contaminated"
	CatchStaleGate       = "stale-gate"
)

// InstrumentBlindRepeats is how many degenerate results in a row make a
// tool blind.
const InstrumentBlindRepeats = 3

// Catches runs the three catches an event log can show, in the reference's
// order: Unfalsified, InstrumentBlind (3 repeats), Unrun. The other three
// need an input a log does not carry and are called directly: Residue (a
// transform), Contaminated (a piece of output), StaleGate (a gate).
func Catches(events []Event) []Catch {
	var out []Catch
	out = append(out, Unfalsified(events)...)
	out = append(out, InstrumentBlind(events, InstrumentBlindRepeats)...)
	out = append(out, Unrun(events)...)
	return out
}

// Unfalsified reports each check that has passed and never once failed: a
// check that cannot go red is not evidence. Checks with an unknown outcome
// are not counted; checks are reported in the order first seen.
func Unfalsified(events []Event) []Catch {
	var names []string
	passes := map[string]int{}
	failed := map[string]bool{}
	for _, e := range events {
		if e.Kind != EventCheck || !e.OK.Known() {
			continue
		}
		if _, seen := passes[e.Name]; !seen && !failed[e.Name] {
			names = append(names, e.Name)
		}
		if e.OK == OKTrue {
			passes[e.Name]++
		} else {
			failed[e.Name] = true
		}
	}
	var out []Catch
	for _, name := range names {
		if failed[name] {
			continue
		}
		n := passes[name]
		out = append(out, Catch{CatchUnfalsified,
			fmt.Sprintf("%s has passed %d× and never failed — break it and watch it go red", PyRepr(name), n),
			[]string{fmt.Sprintf("%s: %d pass, 0 fail", name, n)}})
	}
	return out
}

// InstrumentBlind reports a tool that returned a degenerate result
// (Degenerate) repeats times running, each believed: check the instrument
// before the subject. A tool fires once per unbroken run.
func InstrumentBlind(events []Event, repeats int) []Catch {
	runs := map[string]int{}
	var out []Catch
	for _, e := range events {
		if e.Kind != EventTool {
			continue
		}
		if !Degenerate(e.Result) {
			runs[e.Name] = 0
			continue
		}
		runs[e.Name]++
		if runs[e.Name] == repeats {
			ev := fmt.Sprintf("%s -> %s", e.Name, PyRepr(e.Result))
			out = append(out, Catch{CatchInstrumentBlind,
				fmt.Sprintf("%s returned nothing %d× running — check the instrument before the subject", PyRepr(e.Name), repeats),
				slices.Repeat([]string{ev}, max(repeats, 0))})
		}
	}
	return out
}

// Unrun reports each claim about a subject no tool was run against (a tool
// event of that name with a non-degenerate result, anywhere in the log).
func Unrun(events []Event) []Catch {
	ran := map[string]bool{}
	for _, e := range events {
		if e.Kind == EventTool && !Degenerate(e.Result) {
			ran[e.Name] = true
		}
	}
	var out []Catch
	for _, e := range events {
		if e.Kind == EventClaim && !ran[e.Name] {
			out = append(out, Catch{CatchUnrun,
				fmt.Sprintf("claim about %s with nothing executed against it — run behaviour, do not read it", PyRepr(e.Name)),
				[]string{firstRunes(e.Text, 120)}})
		}
	}
	return out
}

// Degenerate reports a tool result that carries no information: null, "",
// 0, an empty list or object, "blank", "empty", or an object whose every
// value is 0, false, null or "" ({"y": 0, "vh": 0}: no viewport). A bool
// result is never degenerate.
func Degenerate(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return false
	case string:
		return x == "" || x == "blank" || x == "empty"
	case map[string]any:
		for _, e := range x {
			if !zeroish(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	if isZeroNumber(v) {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return rv.Len() == 0
	case reflect.Map:
		for it := rv.MapRange(); it.Next(); {
			if !zeroish(it.Value().Interface()) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		return rv.IsNil()
	}
	return false
}

// zeroish: 0, null, false or the empty string (the reference tests
// membership in (0, None, empty string), and False equals 0 in Python).
func zeroish(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	}
	return isZeroNumber(v)
}

func isZeroNumber(v any) bool {
	switch x := v.(type) {
	case interface{ Float64() (float64, error) }: // json.Number
		f, err := x.Float64()
		return err == nil && f == 0
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() == 0 && !math.IsNaN(rv.Float())
	}
	return false
}

// Residue reports what a bulk transform did not touch: every match of
// pattern still in after, with how many the sweep changed. pattern is Go
// regexp syntax (RE2), not Python's.
func Residue(before, after string, pattern *regexp.Regexp) []Catch {
	left := pattern.FindAllString(after, -1)
	if len(left) == 0 {
		return nil
	}
	changed := len(pattern.FindAllStringIndex(before, -1)) - len(left)
	uniq := slices.Compact(slices.Sorted(slices.Values(left)))
	if len(uniq) > 12 {
		uniq = uniq[:12]
	}
	return []Catch{{CatchResidue,
		fmt.Sprintf("the sweep changed %d and left %d still matching — justify each", changed, len(left)),
		uniq}}
}

// contaminants are authoring residue that has no business in output
// someone reads, in the reference's order and words. Case-insensitive,
// Unicode \b and \s as in Python (regexp2's default mode).
// Compiled on first use: a hook process that never sweeps output does not
// pay for them.
var contaminantRules = firstuse.Value[[]contaminantRule]{New: compileContaminants}

func contaminants() []contaminantRule { return contaminantRules.Get() }

func compileContaminants() []contaminantRule {
	return []contaminantRule{
		{contaminant(`/\*[\s\S]{0,400}?\*/`), "a block comment"},
		{contaminant(`\b(?:TODO|FIXME|XXX|HACK)\b[:\s]`), "a work note"},
		{contaminant(`\blorem ipsum\b`), "placeholder text"},
		{contaminant(`\b(?:PLACEHOLDER|REPLACE ME|TBD)\b`), "an unreplaced placeholder"},
		{contaminant(`\[object Object\]`), "a stringified object"},
		{contaminant(`>\s*(?:undefined|null|NaN)\s*<`), "a leaked value"},
	}
}

type contaminantRule struct {
	re  *regexp2.Regexp
	why string
}

func contaminant(pattern string) *regexp2.Regexp {
	re := regexp2.MustCompile(pattern, regexp2.IgnoreCase)
	re.MatchTimeout = 100 * time.Millisecond
	return re
}

// Contaminated reports authoring residue in text that is shown to someone
// (a block comment, a TODO, lorem ipsum, a placeholder, "[object Object]",
// a leaked undefined): at most one catch per kind, with the first sample.
// A match that times out counts as found.
func Contaminated(text string) []Catch {
	var out []Catch
	for _, c := range contaminants() {
		m, err := c.re.FindStringMatch(text)
		var sample string
		switch {
		case err != nil:
			sample = "(match timed out)"
		case m == nil:
			continue
		default:
			sample = firstRunes(strings.Join(strings.FieldsFunc(m.String(), pyIsSpace), " "), 64)
		}
		out = append(out, Catch{CatchContaminated, c.why + " is visible in the output", []string{sample}})
	}
	return out
}

// StaleGate asks whether a gate still watches what it names: it must pass
// its clean sample, and fail on mutate(sample). A gate that fails the clean
// sample is broken; one that passes the mutant is stale.
func StaleGate[T any](gate func(T) bool, mutate func(T) T, sample T) []Catch {
	if !gate(sample) {
		return []Catch{{CatchStaleGate, "the gate fails its own clean sample — it is broken, not stale", []string{}}}
	}
	mutant := mutate(sample)
	if !gate(mutant) {
		return nil
	}
	return []Catch{{CatchStaleGate,
		"the gate still passes a deliberately broken input — it is green for a reason other than the thing being correct",
		[]string{firstRunes(pyStr(mutant), 80)}}}
}

// pyStr is Python's str(): text as is, other values as repr.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return PyRepr(v)
}

// firstRunes is Python's s[:n].
func firstRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
