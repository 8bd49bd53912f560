package method

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/laserkit/laserkit/grammar"
	"github.com/laserkit/laserkit/laserbrain"
)

// Shelf is where methods are handed out from: the ones laserbrain ships and
// a user's own, NAME.json files in a local directory, a local file
// shadowing a shipped one of its name (your release process is more
// specific than the generic one). Specs come off it as data, exactly as
// stored; nothing on a shelf runs.
type Shelf struct {
	// Local is the user's directory of methods; "" or a missing directory
	// means none.
	Local string
}

// LocalDir is the reference's place for a user's methods under home:
// ~/.laserbrain/workflows.
func LocalDir(home string) string { return filepath.Join(home, ".laserbrain", "workflows") }

// shelved is one method on the shelf: its name and where its spec is.
type shelved struct {
	name  string
	local string // the file, when the user's
}

// entries lists the shelf in the reference's order: the shipped names
// sorted, then the local names sorted that ship with no method; a local file
// takes the place of the shipped one it shadows.
func (s Shelf) entries() ([]shelved, map[string]bool, error) {
	_, names := Shipped()
	out := make([]shelved, 0, len(names))
	at := map[string]int{}
	for _, n := range names {
		at[n] = len(out)
		out = append(out, shelved{name: n})
	}
	local := map[string]bool{}
	if s.Local == "" {
		return out, local, nil
	}
	files, err := filepath.Glob(filepath.Join(s.Local, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		n := strings.TrimSuffix(filepath.Base(f), ".json")
		local[n] = true
		if i, ok := at[n]; ok {
			out[i].local = f
			continue
		}
		at[n] = len(out)
		out = append(out, shelved{name: n, local: f})
	}
	return out, local, nil
}

// Names lists every method on the shelf, shipped and local, sorted.
func (s Shelf) Names() ([]string, error) {
	es, _, err := s.entries()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.name
	}
	sort.Strings(out)
	return out, nil
}

// NotShelvedError is Vend's answer for a name the shelf does not hold.
type NotShelvedError struct {
	Name string
	Have []string
}

func (e *NotShelvedError) Error() string {
	have := make([]any, len(e.Have))
	for i, n := range e.Have {
		have[i] = n
	}
	return fmt.Sprintf("no workflow %s — have %s", laserbrain.PyRepr(e.Name), laserbrain.PyRepr(have))
}

// Vend returns the spec of the method called name as stored: the shipped
// file, or the user's file in its place.
func (s Shelf) Vend(name string) (json.RawMessage, error) {
	es, _, err := s.entries()
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		if e.name == name {
			return s.read(e)
		}
	}
	names, _ := s.Names()
	return nil, &NotShelvedError{Name: name, Have: names}
}

func (s Shelf) read(e shelved) (json.RawMessage, error) {
	var data []byte
	var err error
	if e.local != "" {
		data, err = os.ReadFile(e.local)
	} else {
		data, err = fs.ReadFile(shipped, "methods/"+e.name+".json")
	}
	if err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s: not JSON", e.local)
	}
	return json.RawMessage(data), nil
}

// Match is one method found for a task.
type Match struct {
	Name  string          `json:"name"`
	Score float64         `json:"score"`
	Goal  json.RawMessage `json:"goal"`
	Steps int             `json:"steps"`
	// Gated names the steps declared irreversible or outward.
	Gated []string `json:"gated"`
	// Shipped is false for a method from the user's directory.
	Shipped bool `json:"shipped"`
}

// Find ranks the shelf for a task in words, best first: 0.7 × the overlap
// of its tokens with a method's goal + 0.3 × with its steps' goals and
// names, rounded to 3 places (the rounded score ranks; ties keep the
// shelf's order), zero scores left out. A task of stopwords alone finds
// nothing. A spec that is not readable JSON is an error naming it.
func (s Shelf) Find(task string) ([]Match, error) {
	want := laserbrain.Norm(task)
	out := []Match{}
	if len(want) == 0 {
		return out, nil
	}
	es, local, err := s.entries()
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		raw, err := s.read(e)
		if err != nil {
			return nil, err
		}
		spec, err := grammar.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("method %s: %w", e.name, err)
		}
		goal := grammar.Value{Kind: grammar.Null}
		if g, ok := spec.Get("goal"); ok {
			goal = *g
		}
		var stepWords []string
		m := Match{Name: e.name, Goal: json.RawMessage("null"), Gated: []string{}, Shipped: !local[e.name]}
		if goal.Kind != grammar.Null {
			m.Goal, _ = json.Marshal(valueJSON(goal))
		}
		if st, ok := spec.Get("steps"); ok && st.Kind == grammar.Array {
			m.Steps = len(st.Items)
			for _, step := range st.Items {
				stepWords = append(stepWords, laserbrain.Norm(pyOrEmpty(step, "goal"))...)
				stepWords = append(stepWords, laserbrain.Norm(pyOrEmpty(step, "name"))...)
				if truthy(step, "irreversible") || truthy(step, "outward") {
					m.Gated = append(m.Gated, pyOrEmpty(step, "name"))
				}
			}
		}
		score := 0.7*laserbrain.Overlap(want, laserbrain.Norm(pyOrEmptyValue(goal))) + 0.3*laserbrain.Overlap(want, laserbrain.SortedSet(stepWords))
		if score > 0 {
			m.Score = laserbrain.PyRound(score, 3)
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out, nil
}

// pyOrEmpty is str(obj.get(key) or ”) for an object's member.
func pyOrEmpty(obj grammar.Value, key string) string {
	v, ok := obj.Get(key)
	if !ok {
		return ""
	}
	return pyOrEmptyValue(*v)
}

func pyOrEmptyValue(v grammar.Value) string {
	if !laserbrain.PyTruthy(v) {
		return ""
	}
	return laserbrain.PyStr(v)
}

func truthy(obj grammar.Value, key string) bool {
	v, ok := obj.Get(key)
	return ok && laserbrain.PyTruthy(*v)
}

// valueJSON turns an ordered value back into something encoding/json
// writes (objects lose their order; a spec's goal is a string in practice).
func valueJSON(v grammar.Value) any {
	switch v.Kind {
	case grammar.Bool:
		return v.Bool
	case grammar.Number:
		return json.Number(v.Num)
	case grammar.String:
		return v.Str
	case grammar.Array:
		out := make([]any, len(v.Items))
		for i, e := range v.Items {
			out[i] = valueJSON(e)
		}
		return out
	case grammar.Object:
		out := make(map[string]any, len(v.Members))
		for _, m := range v.Members {
			out[m.Key] = valueJSON(m.Value)
		}
		return out
	}
	return nil
}
