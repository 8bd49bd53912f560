package method

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
)

// SpecVersion is the only method format this package reads.
const SpecVersion = 1

// Method is a workflow method: what it is for and its steps, in order.
type Method struct {
	SpecVersion int    `json:"spec_version"`
	Goal        string `json:"goal"`
	Steps       []Step `json:"steps"`
}

// Step is one declared step. Goal defaults to Name when empty.
type Step struct {
	Name         string `json:"name"`
	Goal         string `json:"goal"`
	Irreversible bool   `json:"irreversible"`
	Outward      bool   `json:"outward"`
}

// Parse reads a method spec. It refuses what it cannot read faithfully: a
// different spec_version, a missing goal, unknown fields, wrong types, a step
// without a name and duplicate step names.
func Parse(data []byte) (*Method, error) {
	var raw struct {
		SpecVersion *json.RawMessage `json:"spec_version"`
		Goal        *json.RawMessage `json:"goal"`
		Steps       *json.RawMessage `json:"steps"`
	}
	if err := strict(data, &raw); err != nil {
		return nil, err
	}
	if raw.SpecVersion == nil {
		return nil, errors.New(`no "spec_version" (this reads spec_version 1)`)
	}
	// A number equal to 1 (1 or 1.0, as the reference compares), nothing else.
	var version float64
	if err := json.Unmarshal(*raw.SpecVersion, &version); err != nil || version != SpecVersion {
		return nil, fmt.Errorf("spec_version is %s; this reads spec_version 1 only", compact(*raw.SpecVersion))
	}
	m := &Method{SpecVersion: SpecVersion}
	if raw.Goal == nil {
		return nil, errors.New(`no "goal": a method needs a goal to be measured against`)
	}
	if err := json.Unmarshal(*raw.Goal, &m.Goal); err != nil {
		return nil, fmt.Errorf("goal: want a string, got %s", compact(*raw.Goal))
	}
	if strings.TrimSpace(m.Goal) == "" {
		return nil, errors.New("goal is empty: a method needs a goal to be measured against")
	}
	if raw.Steps == nil {
		return m, nil
	}
	var steps []json.RawMessage
	if err := json.Unmarshal(*raw.Steps, &steps); err != nil {
		return nil, fmt.Errorf("steps: want a list, got %s", compact(*raw.Steps))
	}
	names := map[string]int{}
	for i, sr := range steps {
		var s struct {
			Name         *string `json:"name"`
			Goal         *string `json:"goal"`
			Irreversible *bool   `json:"irreversible"`
			Outward      *bool   `json:"outward"`
		}
		if err := strict(sr, &s); err != nil {
			return nil, fmt.Errorf("steps[%d]: %w", i, err)
		}
		if s.Name == nil || *s.Name == "" {
			return nil, fmt.Errorf("steps[%d]: no name", i)
		}
		if j, dup := names[*s.Name]; dup {
			return nil, fmt.Errorf("steps[%d]: name %q is also steps[%d]'s; names are how steps are reported, so they must be unique", i, *s.Name, j)
		}
		names[*s.Name] = i
		st := Step{Name: *s.Name}
		if s.Goal != nil {
			st.Goal = *s.Goal
		}
		if st.Goal == "" {
			st.Goal = st.Name
		}
		st.Irreversible = s.Irreversible != nil && *s.Irreversible
		st.Outward = s.Outward != nil && *s.Outward
		m.Steps = append(m.Steps, st)
	}
	return m, nil
}

// strict decodes one JSON value, rejecting unknown fields, wrong types and
// trailing data, with a message that names the field.
func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return fmt.Errorf("want a JSON object, got JSON %s", te.Value)
			}
			return fmt.Errorf("%s: want %s, got JSON %s", te.Field, strings.TrimPrefix(te.Type.String(), "*"), te.Value)
		}
		if err == io.EOF {
			return errors.New("empty input: want a JSON object")
		}
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

//go:embed methods/*.json
var shipped embed.FS

// Shipped returns the methods laserbrain ships, by name (file name without
// .json), sorted.
func Shipped() (map[string]*Method, []string) {
	paths, _ := fs.Glob(shipped, "methods/*.json")
	sort.Strings(paths)
	out := map[string]*Method{}
	var names []string
	for _, p := range paths {
		data, _ := shipped.ReadFile(p)
		m, err := Parse(data)
		if err != nil {
			panic("method: shipped " + p + ": " + err.Error())
		}
		name := strings.TrimSuffix(strings.TrimPrefix(p, "methods/"), ".json")
		out[name] = m
		names = append(names, name)
	}
	return out, names
}
