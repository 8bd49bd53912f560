package vectors

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// ThisImpl names this implementation in reports.
const ThisImpl = "laserkit (Go, in process)"

// Report is the result of one implementation on one vector file (or, from
// the runner, on every case of one kind it was sent).
type Report struct {
	// Impl is the implementation's name (its handshake's, or ThisImpl).
	Impl string
	// File is the vector file, when the report is of one.
	File string
	Kind string
	// Passed counts the cases (or sequence steps) that agreed.
	Passed int
	// Failures are the cases that did not: answers that differ, and
	// cases the implementation failed to answer (Error set).
	Failures []Failure
	// Skipped counts cases not run, and SkipWhy says why (the
	// implementation does not support the kind; the kind has no per-case
	// form).
	Skipped int
	SkipWhy string
	// Tally counts what comparisons did beyond comparing exactly.
	Tally map[string]int
}

// Failure is one case (or step) whose answer differed or never came.
type Failure struct {
	Label    string
	In       string
	Expected string
	Actual   string
	// Error is set when the implementation did not answer the case: its
	// error, a crash or a timeout. Actual is then empty.
	Error string
	// Diff lists what differs, one line per JSON pointer.
	Diff []string
}

// Failed counts the answers that differed.
func (r *Report) Failed() int {
	n := 0
	for _, f := range r.Failures {
		if f.Error == "" {
			n++
		}
	}
	return n
}

// Errored counts the cases the implementation did not answer.
func (r *Report) Errored() int { return len(r.Failures) - r.Failed() }

func (r *Report) tally(key string, n int) {
	if n == 0 {
		return
	}
	if r.Tally == nil {
		r.Tally = map[string]int{}
	}
	r.Tally[key] += n
}

// Score compares an implementation's answer to a case (or its failure to
// answer, err) and adds the result to the report.
func (r *Report) Score(k *Kind, c Case, got json.RawMessage, err error) {
	in := compact(c.In)
	if c.Want == nil {
		r.Failures = append(r.Failures, Failure{Label: c.Label, In: in, Expected: `(no "out" in the vector)`, Actual: actual(got, err), Error: errText(err)})
		return
	}
	labels := c.Parts
	if len(labels) == 0 {
		labels = []string{c.Label}
	}
	if err != nil {
		for _, l := range labels {
			r.Failures = append(r.Failures, Failure{Label: l, In: in, Expected: compact(c.Want), Error: err.Error()})
		}
		return
	}
	if k.Compare != nil {
		cmp := k.Compare(c, got)
		for key, n := range cmp.Tally {
			r.tally(key, n)
		}
		if len(cmp.Diff) == 0 {
			r.Passed++
			return
		}
		r.Failures = append(r.Failures, Failure{Label: c.Label, In: in, Expected: compact(c.Want), Actual: compact(got), Diff: cmp.Diff})
		return
	}
	if len(c.Parts) == 0 {
		r.judge(c.Label, in, c.Want, got, k.Strict)
		return
	}
	// A sequence: the answer is a list with one element per step.
	var wants, gots []json.RawMessage
	if err := json.Unmarshal(c.Want, &wants); err != nil || len(wants) != len(c.Parts) {
		r.Failures = append(r.Failures, Failure{Label: c.Label, In: in, Expected: compact(c.Want), Error: "the vector's expected steps do not match its inputs"})
		return
	}
	if err := json.Unmarshal(got, &gots); err != nil || len(gots) != len(wants) {
		for _, l := range c.Parts {
			r.Failures = append(r.Failures, Failure{Label: l, In: in, Expected: compact(c.Want), Actual: compact(got),
				Diff: []string{fmt.Sprintf("the answer must be a list of %d outputs, one per step", len(wants))}})
		}
		return
	}
	var steps []json.RawMessage
	_ = json.Unmarshal(c.In, &steps)
	for i, l := range c.Parts {
		stepIn := in
		if i < len(steps) {
			stepIn = compact(steps[i])
		}
		r.judge(l, stepIn, wants[i], gots[i], k.Strict)
	}
}

func (r *Report) judge(label, in string, want, got json.RawMessage, strict bool) {
	if d := diffMode(want, got, strict); len(d) > 0 {
		r.Failures = append(r.Failures, Failure{Label: label, In: in, Expected: compact(want), Actual: compact(got), Diff: d})
		return
	}
	r.Passed++
}

// addOutcome scores one outcome of a kind checked a whole file at a time.
func (r *Report) addOutcome(k *Kind, o Outcome) {
	in := compact(o.In)
	switch {
	case o.Want == nil:
		r.Failures = append(r.Failures, Failure{Label: o.Label, In: in, Expected: `(no "out" in the vector)`, Actual: actual(nil, o.Err), Error: errText(o.Err)})
	case o.Err != nil:
		r.Failures = append(r.Failures, Failure{Label: o.Label, In: in, Expected: compact(o.Want), Error: o.Err.Error()})
	default:
		got, err := json.Marshal(o.Got)
		if err != nil {
			r.Failures = append(r.Failures, Failure{Label: o.Label, In: in, Expected: compact(o.Want), Error: err.Error()})
			return
		}
		r.judge(o.Label, in, o.Want, got, k.Strict)
	}
}

func actual(got json.RawMessage, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	if got == nil {
		return ""
	}
	return compact(got)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// WriteReport prints a report's failures, one block per failure: the case,
// its input, the expected and actual answers (or the error) and what
// differs.
func WriteReport(w io.Writer, name string, r *Report) {
	for _, f := range r.Failures {
		if f.Error != "" {
			fmt.Fprintf(w, "ERROR %s: %s (%s)\n  in:       %s\n  expected: %s\n  error:    %s\n", name, f.Label, r.Kind, shorten(f.In), shorten(f.Expected), f.Error)
			continue
		}
		fmt.Fprintf(w, "FAIL %s: %s (%s)\n  in:       %s\n  expected: %s\n  actual:   %s\n", name, f.Label, r.Kind, shorten(f.In), shorten(f.Expected), shorten(f.Actual))
		for _, d := range f.Diff {
			fmt.Fprintf(w, "  diff:     %s\n", d)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(r.Tally)) {
		fmt.Fprintf(w, "note %s: %d %s\n", name, r.Tally[key], key)
	}
}

// shorten keeps a report line readable: the whole value goes to --json.
func shorten(s string) string {
	const max = 2000
	if len(s) <= max {
		return s
	}
	return s[:max] + fmt.Sprintf("… (%d bytes more; --json has all of it)", len(s)-max)
}

// Summary is the report's one line: "N passed, M failed, E errored, S
// skipped".
func (r *Report) Summary() string {
	parts := []string{fmt.Sprintf("%d passed", r.Passed), fmt.Sprintf("%d failed", r.Failed())}
	if e := r.Errored(); e > 0 {
		parts = append(parts, fmt.Sprintf("%d errored", e))
	}
	if r.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped (%s)", r.Skipped, r.SkipWhy))
	}
	return strings.Join(parts, ", ")
}

// JSONReport is a report as --json prints it: in, expected and actual are
// JSON values, not strings holding JSON.
type JSONReport struct {
	Impl     string         `json:"impl"`
	File     string         `json:"file,omitempty"`
	Kind     *string        `json:"kind"`
	Passed   int            `json:"passed"`
	Failed   int            `json:"failed"`
	Errored  int            `json:"errored"`
	Skipped  int            `json:"skipped"`
	SkipWhy  string         `json:"skip_why,omitempty"`
	Failures []JSONFailure  `json:"failures"`
	Tally    map[string]int `json:"tally,omitempty"`
	Error    *string        `json:"error"`
}

// JSONFailure is one failure as --json prints it.
type JSONFailure struct {
	Case     string          `json:"case"`
	In       json.RawMessage `json:"in"`
	Expected json.RawMessage `json:"expected"`
	Actual   json.RawMessage `json:"actual"`
	Error    *string         `json:"error"`
	Diff     []string        `json:"diff"`
}

// JSON is the report's --json form.
func (r *Report) JSON() JSONReport {
	out := JSONReport{Impl: r.Impl, File: r.File, Passed: r.Passed, Failed: r.Failed(), Errored: r.Errored(),
		Skipped: r.Skipped, SkipWhy: r.SkipWhy, Failures: []JSONFailure{}, Tally: r.Tally}
	if r.Kind != "" {
		k := r.Kind
		out.Kind = &k
	}
	for _, f := range r.Failures {
		jf := JSONFailure{Case: f.Label, In: asJSON(f.In), Expected: asJSON(f.Expected), Actual: asJSON(f.Actual), Diff: f.Diff}
		if jf.Diff == nil {
			jf.Diff = []string{}
		}
		if f.Error != "" {
			e := f.Error
			jf.Error = &e
		}
		out.Failures = append(out.Failures, jf)
	}
	return out
}

// asJSON is text that holds JSON as that JSON, other text as a JSON
// string, nothing as null.
func asJSON(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("null")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}
