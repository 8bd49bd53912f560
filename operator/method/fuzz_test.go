package method

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseLint: any bytes are either refused with an error or read as a
// method whose lint runs without panicking and reports only its own steps.
func FuzzParseLint(f *testing.F) {
	paths, _ := filepath.Glob("methods/*.json")
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Add([]byte(`{"spec_version":1,"goal":"g","steps":[{"name":"build","goal":"build"}]}`))
	f.Add([]byte(`{"spec_version":1.0,"goal":"g","steps":[{"name":" Push_x ","irreversible":true}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			if m != nil {
				t.Fatal("a refused spec came back with a method")
			}
			return
		}
		names := map[string]bool{}
		for _, s := range m.Steps {
			if s.Name == "" || s.Goal == "" || names[s.Name] {
				t.Fatalf("accepted a step without a name or goal, or a duplicate: %+v", s)
			}
			names[s.Name] = true
		}
		for _, fd := range Lint(m) {
			if !names[fd.Step] {
				t.Fatalf("finding on a step the method does not have: %+v", fd)
			}
		}
	})
}
