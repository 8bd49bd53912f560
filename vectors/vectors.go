package vectors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// A Kind knows how to run the cases of one vector format.
type Kind struct {
	// Name is the value of the file's "kind" field.
	Name string
	// Doc is one line saying what a case's in and out are.
	Doc string
	// Run computes our output for every case of a decoded file, in order.
	// Each element of the result is the JSON our implementation produces for
	// the corresponding case's "in"; a per-case error is reported as such.
	Run func(f *File) ([]Outcome, error)
	// Emit, when set, replaces the default emitter (which writes
	// {"kind","cases":[{"in","out"}]}) for kinds with a different layout.
	Emit func(f *File) (any, error)
	// Strict compares objects key for key: our output may not carry keys
	// the expected one lacks. Otherwise extra keys are ignored, so older
	// files with fewer fields still run.
	Strict bool
}

// Outcome is what our implementation said for one case.
type Outcome struct {
	Label string          // how to find the case again, e.g. "case 3" or "seq 2 step 4"
	In    json.RawMessage // the case's input
	Want  json.RawMessage // the expected output, nil when emitting
	Got   any             // our output
	Err   error           // our implementation refused the input
}

// File is a decoded vector file. Cases holds the generic layout; kinds with
// another layout (drift) read Raw themselves.
type File struct {
	Kind   string          `json:"kind"`
	Source string          `json:"source,omitempty"`
	Cases  []Case          `json:"cases"`
	Raw    json.RawMessage `json:"-"`

	inferred bool // no "kind" field: read as drift for its "vectors"
}

// Case is one input and, in a vector file, its expected output.
type Case struct {
	In  json.RawMessage `json:"in"`
	Out json.RawMessage `json:"out,omitempty"`
}

var registry = map[string]*Kind{}

// register adds a kind; each kind's file calls it from init.
func register(k *Kind) {
	if _, dup := registry[k.Name]; dup {
		panic("vectors: kind registered twice: " + k.Name)
	}
	registry[k.Name] = k
}

// Kinds lists the registered kinds, sorted by name.
func Kinds() []*Kind {
	out := make([]*Kind, 0, len(registry))
	for _, k := range registry {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the kind called name.
func Lookup(name string) (*Kind, error) {
	k, ok := registry[name]
	if !ok {
		names := make([]string, 0, len(registry))
		for n := range registry {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown vector kind %q (known: %s)", name, strings.Join(names, ", "))
	}
	return k, nil
}

// Decode reads a vector file. A file without "kind" but with "vectors" is a
// drift file (the upstream reference files have no kind field).
func Decode(data []byte) (*File, error) {
	var head struct {
		Kind    *string         `json:"kind"`
		Source  string          `json:"source"`
		Vectors json.RawMessage `json:"vectors"`
		Cases   json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a vector file: %w", err)
	}
	f := &File{Raw: data, Source: head.Source}
	switch {
	case head.Kind != nil:
		f.Kind = *head.Kind
	case head.Vectors != nil:
		f.Kind, f.inferred = "drift", true
	default:
		return nil, errors.New(`not a vector file: no "kind" field (and no "vectors" list to read it as drift)`)
	}
	if _, err := Lookup(f.Kind); err != nil {
		return nil, err
	}
	if head.Cases != nil {
		if err := json.Unmarshal(head.Cases, &f.Cases); err != nil {
			return nil, fmt.Errorf(`"cases": %w`, err)
		}
		for i, c := range f.Cases {
			if c.In == nil {
				return nil, fmt.Errorf("case %d has no \"in\"", i)
			}
		}
	}
	return f, nil
}

// Report is the result of checking one file.
type Report struct {
	Kind     string
	Passed   int
	Failures []Failure
}

// Failure is one case whose output differed from the expected one.
type Failure struct {
	Label    string
	In       string
	Expected string
	Actual   string
}

// Check runs every case of a vector file against our implementation. A case
// passes when every field of its expected output equals ours (fields we emit
// beyond those are not compared, so older files with fewer fields still run).
func Check(data []byte) (*Report, error) {
	f, err := Decode(data)
	if err != nil {
		return nil, err
	}
	k, _ := Lookup(f.Kind)
	outcomes, err := k.Run(f)
	if err != nil {
		return nil, err
	}
	r := &Report{Kind: f.Kind}
	for _, o := range outcomes {
		if o.Want == nil {
			r.Failures = append(r.Failures, Failure{Label: o.Label, In: compact(o.In), Expected: "(no \"out\" in the vector)", Actual: render(o.Got, o.Err)})
			continue
		}
		if o.Err == nil && matchesMode(o.Want, o.Got, k.Strict) {
			r.Passed++
			continue
		}
		r.Failures = append(r.Failures, Failure{Label: o.Label, In: compact(o.In), Expected: compact(o.Want), Actual: render(o.Got, o.Err)})
	}
	return r, nil
}

// Emit computes our outputs for the inputs in data (a vector file of kind, or
// a bare {"cases":[{"in":...}]}) and returns a vector file in the same format.
func Emit(kind string, data []byte) ([]byte, error) {
	k, err := Lookup(kind)
	if err != nil {
		return nil, err
	}
	var f *File
	if probe, err := Decode(data); err == nil {
		switch {
		case probe.inferred:
			// {"vectors": [...]} without a kind: inputs for any kind of
			// that layout.
			probe.Kind = kind
		case probe.Kind != kind:
			return nil, fmt.Errorf("input is a %q vector file, not %q", probe.Kind, kind)
		}
		f = probe
	} else {
		// Inputs only: no kind field needed.
		f = &File{Kind: kind, Raw: data}
		var body struct {
			Cases []Case `json:"cases"`
		}
		if err := json.Unmarshal(data, &body); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		f.Cases = body.Cases
	}
	var doc any
	if k.Emit != nil {
		if doc, err = k.Emit(f); err != nil {
			return nil, err
		}
	} else {
		outcomes, err := k.Run(f)
		if err != nil {
			return nil, err
		}
		type emitted struct {
			In  json.RawMessage `json:"in"`
			Out any             `json:"out"`
		}
		cases := make([]emitted, len(outcomes))
		for i, o := range outcomes {
			if o.Err != nil {
				return nil, fmt.Errorf("%s: %v", o.Label, o.Err)
			}
			cases[i] = emitted{In: o.In, Out: o.Got}
		}
		doc = struct {
			Kind   string    `json:"kind"`
			Source string    `json:"source"`
			Cases  []emitted `json:"cases"`
		}{kind, EmitSource, cases}
	}
	return Marshal(doc)
}

// EmitSource is the source line written into emitted files.
const EmitSource = "emitted by laserbrain vectors emit (github.com/laserkit/laserkit)"

// Marshal renders v as indented JSON without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// matches reports whether got, rendered as JSON, agrees with want on every
// field want has. Arrays must match element by element and in length.
func matches(want json.RawMessage, got any) bool { return matchesMode(want, got, false) }

// matchesMode is matches, and with strict also requires every object of got
// to have no key want's lacks.
func matchesMode(want json.RawMessage, got any, strict bool) bool {
	var w, g any
	if err := decodeNumbers(want, &w); err != nil {
		return false
	}
	gb, err := json.Marshal(got)
	if err != nil {
		return false
	}
	if err := decodeNumbers(gb, &g); err != nil {
		return false
	}
	return subset(w, g, strict)
}

func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

func subset(want, got any, strict bool) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || (strict && len(g) != len(w)) {
			return false
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present || !subset(wv, gv, strict) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !subset(w[i], g[i], strict) {
				return false
			}
		}
		return true
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return false
		}
		wf, err1 := w.Float64()
		gf, err2 := g.Float64()
		return err1 == nil && err2 == nil && (wf == gf || (math.IsNaN(wf) && math.IsNaN(gf)))
	default:
		return want == got
	}
}

func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

func render(v any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	b, mErr := json.Marshal(v)
	if mErr != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// WriteReport prints a report's failures, one block per failure.
func WriteReport(w io.Writer, name string, r *Report) {
	for _, f := range r.Failures {
		fmt.Fprintf(w, "FAIL %s: %s (%s)\n  in:       %s\n  expected: %s\n  actual:   %s\n", name, f.Label, r.Kind, f.In, f.Expected, f.Actual)
	}
}

// caseKind builds a Kind for the generic {"cases":[{"in","out"}]} layout from
// a function of one decoded input.
func caseKind[In any](name, doc string, run func(in In) (any, error)) *Kind {
	return &Kind{
		Name: name,
		Doc:  doc,
		Run: func(f *File) ([]Outcome, error) {
			out := make([]Outcome, len(f.Cases))
			for i, c := range f.Cases {
				o := Outcome{Label: fmt.Sprintf("case %d", i), In: c.In, Want: c.Out}
				var in In
				if err := strictUnmarshal(c.In, &in); err != nil {
					o.Err = fmt.Errorf("bad input: %w", err)
				} else {
					o.Got, o.Err = run(in)
				}
				out[i] = o
			}
			return out, nil
		},
	}
}

// strictUnmarshal rejects unknown fields, so a misspelt input key is an error
// rather than a silently absent field.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
