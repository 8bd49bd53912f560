package vectors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/laserkit/laserkit/internal/cli"
)

// A Kind is one vector format: how a file of it splits into cases, how this
// implementation answers a case, and how an answer is compared with the
// expected one. Adding a kind is one file (a function building its Kind,
// listed in kinds), and one schema (schemas/KIND.schema.json).
type Kind struct {
	// Name is the value of the file's "kind" field.
	Name string
	// Doc is one line saying what a case's in and out are.
	Doc string
	// Cases splits a decoded file into self-contained cases; nil reads the
	// generic layout {"cases": [{"in", "out"}]}.
	Cases func(f *File) ([]Case, error)
	// Compute is this implementation's answer to one case's input, the
	// answer any implementation gives through the runner protocol.
	Compute func(in json.RawMessage) (any, error)
	// Compare, when set, decides a case itself (the mcp kind's rules);
	// otherwise the answer is compared field by field (see Strict).
	Compare func(c Case, got json.RawMessage) Comparison
	// Run is for a kind that is checked a whole file at a time: it computes
	// every outcome itself, and the kind has no per-case form for the
	// runner. A kind has Compute or Run.
	Run func(f *File) ([]Outcome, error)
	// Emit, when set, replaces the default emitter (which writes
	// {"kind","cases":[{"in","out"}]}) for kinds with a different layout.
	Emit func(f *File) (any, error)
	// Strict compares objects key for key: an answer may not carry keys
	// the expected one lacks. Otherwise extra keys are ignored, so older
	// files with fewer fields still run.
	Strict bool
	// Parallel says cases share nothing (each has its own stores), so
	// Check may compute several at once.
	Parallel bool
}

// Case is one self-contained case of a vector file: what an
// implementation is sent, and what it must answer.
type Case struct {
	// Label finds the case again: "case 3", "seq 2".
	Label string
	// In is the request: everything an implementation needs to answer.
	In json.RawMessage
	// Want is the expected answer; nil when the file has none (inputs to
	// emit for).
	Want json.RawMessage
	// Parts, for a sequence, label the elements of the answer (a list,
	// one element per step), which are compared one by one.
	Parts []string
}

// Comparison is a Compare function's reading of one answer.
type Comparison struct {
	// Diff lists what differs; empty when the answer agrees.
	Diff []string
	// Tally counts what the comparison did beyond comparing exactly
	// ("answers compared by error status only": 3), for the report.
	Tally map[string]int
}

// Outcome is what an implementation said for one case (or one part of a
// sequence) of a kind checked a whole file at a time.
type Outcome struct {
	Label string          // how to find the case again, e.g. "case 3" or "seq 2 step 4"
	In    json.RawMessage // the case's input
	Want  json.RawMessage // the expected output, nil when emitting
	Got   any             // our output
	Err   error           // our implementation refused the input
}

// File is a decoded vector file. Cases holds the generic layout; kinds with
// another layout read Raw themselves.
type File struct {
	Kind   string          `json:"kind"`
	Source string          `json:"source,omitempty"`
	Cases  []GenericCase   `json:"cases"`
	Raw    json.RawMessage `json:"-"`

	inferred bool // no "kind" field: read as drift for its "vectors"
}

// GenericCase is one input and, in a vector file, its expected output.
type GenericCase struct {
	In  json.RawMessage `json:"in"`
	Out json.RawMessage `json:"out,omitempty"`
}

// The kinds are built on first use rather than registered from inits: a
// Kind holds closures that are allocated when it is built, and every hook
// process links this package without checking a vector.
var (
	registryOnce sync.Once
	registry     map[string]*Kind
)

// kinds returns every kind by name.
func kinds() map[string]*Kind {
	registryOnce.Do(func() {
		all := [...]*Kind{ceilingKind(), classifyKind(), collisionsKind(), coverageKind, driftKind(), driftFullKind(),
			laserscoreKind(), lintKind(), mcpKind, normaliseKind(), observeKind(), phronesisKind(), shapeKind(), supercodeKind(), treeKind()}
		registry = make(map[string]*Kind, len(all))
		for _, k := range all {
			if _, dup := registry[k.Name]; dup {
				panic("vectors: two kinds called " + k.Name)
			}
			registry[k.Name] = k
		}
	})
	return registry
}

// Kinds lists the registered kinds, sorted by name.
func Kinds() []*Kind {
	out := make([]*Kind, 0, len(kinds()))
	for _, k := range kinds() {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// KindNames lists the registered kinds' names, sorted.
func KindNames() []string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Name)
	}
	return names
}

// Lookup returns the kind called name.
func Lookup(name string) (*Kind, error) {
	k, ok := kinds()[name]
	if !ok {
		return nil, fmt.Errorf("unknown vector kind %q (known: %s)", name, strings.Join(KindNames(), ", "))
	}
	return k, nil
}

// Runnable reports whether the kind can be sent case by case to another
// implementation.
func (k *Kind) Runnable() bool { return k.Compute != nil }

// Decode reads a vector file and validates it against its kind's schema. A
// file without "kind" but with "vectors" is a drift file (the upstream
// reference files have no kind field).
func Decode(data []byte) (*File, error) {
	kind, inferred, err := kindOf(data)
	if err != nil {
		return nil, err
	}
	if err := ValidateFile(kind, data); err != nil {
		return nil, err
	}
	return decodeBody(data, kind, inferred)
}

// kindOf reads which kind a file says it is.
func kindOf(data []byte) (kind string, inferred bool, err error) {
	var head struct {
		Kind    *json.RawMessage `json:"kind"`
		Vectors json.RawMessage  `json:"vectors"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", false, fmt.Errorf("not a vector file: %s", jsonProblem(err))
	}
	switch {
	case head.Kind != nil:
		if err := json.Unmarshal(*head.Kind, &kind); err != nil {
			return "", false, fmt.Errorf("not a vector file: /kind is %s, not a kind's name", compact(*head.Kind))
		}
	case head.Vectors != nil:
		kind, inferred = "drift", true
	default:
		return "", false, errors.New(`not a vector file: no "kind" field (and no "vectors" list to read it as drift)`)
	}
	if _, err := Lookup(kind); err != nil {
		return "", false, err
	}
	return kind, inferred, nil
}

func decodeHead(data []byte) (*File, error) {
	kind, inferred, err := kindOf(data)
	if err != nil {
		return nil, err
	}
	return decodeBody(data, kind, inferred)
}

func decodeBody(data []byte, kind string, inferred bool) (*File, error) {
	var body struct {
		Source string          `json:"source"`
		Cases  json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, fmt.Errorf("not a vector file: %s", jsonProblem(err))
	}
	f := &File{Kind: kind, Raw: data, Source: body.Source, inferred: inferred}
	if body.Cases != nil {
		if err := json.Unmarshal(body.Cases, &f.Cases); err != nil {
			return nil, fmt.Errorf(`/cases: %s`, jsonProblem(err))
		}
		for i, c := range f.Cases {
			if c.In == nil {
				return nil, fmt.Errorf(`/cases/%d: no "in"`, i)
			}
		}
	}
	return f, nil
}

// CasesOf splits a decoded file into its cases.
func CasesOf(k *Kind, f *File) ([]Case, error) {
	if k.Cases != nil {
		return k.Cases(f)
	}
	out := make([]Case, len(f.Cases))
	for i, c := range f.Cases {
		out[i] = Case{Label: fmt.Sprintf("case %d", i), In: c.In, Want: c.Out}
	}
	return out, nil
}

// Check runs every case of a vector file against this implementation. A
// case passes when every field of its expected output equals ours (for a
// kind that is not Strict, fields we emit beyond those are not compared, so
// older files with fewer fields still run).
func Check(data []byte) (*Report, error) {
	f, err := Decode(data)
	if err != nil {
		return nil, err
	}
	k, _ := Lookup(f.Kind)
	r := &Report{Impl: ThisImpl, Kind: f.Kind}
	if k.Run != nil && k.Compute == nil {
		outcomes, err := k.Run(f)
		if err != nil {
			return nil, err
		}
		for _, o := range outcomes {
			r.addOutcome(k, o)
		}
		return r, nil
	}
	cases, err := CasesOf(k, f)
	if err != nil {
		return nil, err
	}
	answers := computeAll(k, cases)
	for i, c := range cases {
		r.Score(k, c, answers[i].out, answers[i].err)
	}
	return r, nil
}

type computed struct {
	out json.RawMessage
	err error
}

// computeAll answers every case, several at a time for a Parallel kind.
func computeAll(k *Kind, cases []Case) []computed {
	out := make([]computed, len(cases))
	one := func(i int) {
		got, err := k.Compute(cases[i].In)
		if err == nil {
			out[i].out, err = json.Marshal(got)
		}
		out[i].err = err
	}
	workers := 1
	if k.Parallel {
		workers = runtime.GOMAXPROCS(0)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				one(i)
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// Emit computes our outputs for the inputs in data (a vector file of kind, or
// a bare {"cases":[{"in":...}]}) and returns a vector file in the same format.
func Emit(kind string, data []byte) ([]byte, error) {
	k, err := Lookup(kind)
	if err != nil {
		return nil, err
	}
	var f *File
	if probe, err := decodeHead(data); err == nil {
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
			Cases []GenericCase `json:"cases"`
		}
		if err := json.Unmarshal(data, &body); err != nil {
			return nil, fmt.Errorf("input is not JSON of the form {\"cases\": [{\"in\": ...}]}: %v", jsonProblem(err))
		}
		f.Cases = body.Cases
	}
	var doc any
	if k.Emit != nil {
		if doc, err = k.Emit(f); err != nil {
			return nil, err
		}
	} else {
		cases, err := CasesOf(k, f)
		if err != nil {
			return nil, err
		}
		type emitted struct {
			In  json.RawMessage `json:"in"`
			Out any             `json:"out"`
		}
		out := make([]emitted, len(cases))
		for i, c := range cases {
			got, err := k.Compute(c.In)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", c.Label, err)
			}
			out[i] = emitted{In: c.In, Out: got}
		}
		doc = struct {
			Kind   string    `json:"kind"`
			Source string    `json:"source"`
			Cases  []emitted `json:"cases"`
		}{kind, EmitSource, out}
	}
	return Marshal(doc)
}

// jsonProblem says what is wrong with input encoding/json refused, without
// Go type names.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		where := "/" + strings.ReplaceAll(te.Field, ".", "/")
		if te.Field == "" {
			where = "the document"
		}
		return fmt.Sprintf("%s is a JSON %s", where, te.Value)
	case errors.As(err, &se):
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	return err.Error()
}

// EmitSource is the source line written into emitted files.
const EmitSource = "emitted by laserbrain vectors emit (github.com/laserkit/laserkit)"

// Marshal renders v as indented JSON without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := cli.WriteJSON(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// matches reports whether got, rendered as JSON, agrees with want on every
// field want has. Arrays must match element by element and in length.
func matches(want json.RawMessage, got any) bool { return len(diffMode(want, got, false)) == 0 }

// diffMode lists where got, rendered as JSON, differs from want; with strict
// an object of got may not have a key want's lacks.
func diffMode(want json.RawMessage, got any, strict bool) []string {
	var w, g any
	if err := decodeNumbers(want, &w); err != nil {
		return []string{"the expected output is not JSON: " + err.Error()}
	}
	gb, ok := got.(json.RawMessage)
	if !ok {
		var err error
		if gb, err = json.Marshal(got); err != nil {
			return []string{"the answer has no JSON form: " + err.Error()}
		}
	}
	if err := decodeNumbers(gb, &g); err != nil {
		return []string{"the answer is not JSON: " + err.Error()}
	}
	var d differ
	d.strict = strict
	d.walk("", w, g)
	return d.lines
}

func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// numbersEqual compares two JSON numbers by value (0.3 and 0.30 agree).
func numbersEqual(w, g json.Number) bool {
	wf, err1 := w.Float64()
	gf, err2 := g.Float64()
	return err1 == nil && err2 == nil && (wf == gf || (math.IsNaN(wf) && math.IsNaN(gf)))
}

func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

// caseKind builds a Kind for the generic {"cases":[{"in","out"}]} layout from
// a function of one decoded input.
func caseKind[In any](name, doc string, run func(in In) (any, error)) *Kind {
	return &Kind{
		Name: name,
		Doc:  doc,
		Compute: func(raw json.RawMessage) (any, error) {
			var in In
			if err := strictUnmarshal(raw, &in); err != nil {
				return nil, fmt.Errorf("bad input: %w", err)
			}
			return run(in)
		},
	}
}

// strictUnmarshal rejects unknown fields, so a misspelt input key is an error
// rather than a silently absent field.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New(jsonProblem(err))
	}
	return nil
}
