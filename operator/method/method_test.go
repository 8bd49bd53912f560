package method

import (
	"strings"
	"testing"
)

func TestShippedMethodsLintClean(t *testing.T) {
	methods, names := Shipped()
	if len(names) != 10 {
		t.Fatalf("shipped %d methods, want the ten laserbrain ships: %v", len(names), names)
	}
	for _, n := range names {
		if fs := Lint(methods[n]); len(fs) != 0 {
			t.Errorf("%s: %d findings, want none: %+v", n, len(fs), fs)
		}
	}
}

// The step tables the ten methods are specified with (I = irreversible,
// O = outward), written out by hand, against what the embedded files say.
func TestShippedMethodsMatchSpecTable(t *testing.T) {
	table := map[string]string{
		"audit":            "inspect, verify-claims",
		"build-and-ship":   "build, verify-artifact, commit, deploy (IO), verify-live",
		"diagnose-and-fix": "read, edit, verify-change, commit",
		"fix":              "edit, verify-change, commit",
		"full-release":     "test, build, verify-artifact, commit, publish (IO), verify-published",
		"investigate":      "read, measure",
		"new-repo":         "inspect-size, inspect-secrets, edit-gitignore, verify-staged, commit, push (IO), verify-remote",
		"promote":          "inspect, verify-artifact, commit, push (IO), verify-remote",
		"repo-surgery":     "inspect-history, inspect-secrets, verify-fastforward, commit, generate-backup, rewrite-history (I), verify-history, push (IO), verify-remote",
		"ship-built":       "verify-artifact, commit, publish (IO), verify-published",
	}
	methods, _ := Shipped()
	for name, want := range table {
		m := methods[name]
		if m == nil {
			t.Errorf("%s not shipped", name)
			continue
		}
		var got []string
		for _, s := range m.Steps {
			mark := ""
			switch {
			case s.Irreversible && s.Outward:
				mark = " (IO)"
			case s.Irreversible:
				mark = " (I)"
			case s.Outward:
				mark = " (O)"
			}
			got = append(got, s.Name+mark)
		}
		if g := strings.Join(got, ", "); g != want {
			t.Errorf("%s: steps %q, spec says %q", name, g, want)
		}
	}
}

func TestVerb(t *testing.T) {
	for in, want := range map[string]string{
		"verify-change": "verify", "Upload_PyPI": "upload", "  push remote ": "push",
		"pypi-upload": "pypi", "-x": "", "commit": "commit",
	} {
		if got := Verb(in); got != want {
			t.Errorf("Verb(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	cases := map[string]string{
		`{"spec_version":2,"goal":"g","steps":[]}`: "spec_version is 2",
		`{"goal":"g"}`:                 "no \"spec_version\"",
		`{"spec_version":1,"goal":""}`: "goal is empty",
		`{"spec_version":1}`:           "no \"goal\"",
		`{"spec_version":1,"goal":"g","steps":[{"name":"a"},{"name":"a"}]}`:     "name \"a\" is also steps[0]'s",
		`{"spec_version":1,"goal":"g","steps":[{"goal":"x"}]}`:                  "steps[0]: no name",
		`{"spec_version":1,"goal":"g","steps":[{"name":"a","irreversible":1}]}`: "irreversible",
		`{"spec_version":1,"goal":"g","extra":true}`:                            "unknown field \"extra\"",
		`{"spec_version":1,"goal":"g"} {}`:                                      "more than one JSON value",
		``:                                                                      "empty input",
		`[1]`:                                                                   "want a JSON object, got JSON array",
	}
	for in, want := range cases {
		_, err := Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) error = %v, want it to mention %q", in, err, want)
		}
	}
}

func TestGoalDefaultsToName(t *testing.T) {
	m, err := Parse([]byte(`{"spec_version":1,"goal":"g","steps":[{"name":"read"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Steps[0].Goal != "read" {
		t.Fatalf("goal = %q, want the name", m.Steps[0].Goal)
	}
}
