package verdict

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseAccepts(t *testing.T) {
	for name, in := range map[string]string{
		"pass, no findings":        `{"sufficient": true, "summary": "Done.", "findings": []}`,
		"pass with a suggestion":   `{"sufficient": true, "summary": "Done.", "findings": [{"severity": "suggestion", "where": "a.go", "what": "Rename x", "why": "clarity"}]}`,
		"fail with a blocker":      `{"sufficient": false, "summary": "No.", "findings": [{"severity": "blocker", "where": "a.go:3", "what": "Add the check", "why": "plan step 2"}]}`,
		"fail with a required one": `{"sufficient": false, "summary": "No.", "findings": [{"severity": "suggestion", "where": "x", "what": "y", "why": "z"}, {"severity": "required", "where": "b", "what": "Do b", "why": "plan"}], "acceptance": ["b exists"]}`,
		"extra keys are ignored":   `{"sufficient": true, "summary": "Done.", "findings": [], "confidence": 0.9}`,
	} {
		v, err := Parse([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if v.Summary == "" || v.Findings == nil {
			t.Errorf("%s: decoded %+v", name, v)
		}
	}
}

// Each refusal names what was wrong, in words a model can act on.
func TestParseRefuses(t *testing.T) {
	for name, c := range map[string]struct{ in, want string }{
		"not JSON":              {`sufficient: yes`, "not JSON"},
		"two values":            {`{} {}`, "more than one JSON value"},
		"no summary":            {`{"sufficient": true, "findings": []}`, "summary"},
		"empty summary":         {`{"sufficient": true, "summary": "", "findings": []}`, "summary"},
		"no findings":           {`{"sufficient": true, "summary": "x"}`, "findings"},
		"sufficient as string":  {`{"sufficient": "yes", "summary": "x", "findings": []}`, "sufficient"},
		"unknown severity":      {`{"sufficient": false, "summary": "x", "findings": [{"severity": "critical", "where": "a", "what": "b", "why": "c"}]}`, "findings.0.severity"},
		"finding without why":   {`{"sufficient": false, "summary": "x", "findings": [{"severity": "blocker", "where": "a", "what": "b"}]}`, "why"},
		"rejection, no mandate": {`{"sufficient": false, "summary": "x", "findings": [{"severity": "suggestion", "where": "a", "what": "b", "why": "c"}]}`, "insufficient verdict needs at least one blocker or required finding"},
		"rejection, empty":      {`{"sufficient": false, "summary": "x", "findings": []}`, "insufficient verdict needs at least one blocker or required finding"},
		"pass with a blocker":   {`{"sufficient": true, "summary": "x", "findings": [{"severity": "blocker", "where": "a", "what": "b", "why": "c"}]}`, "sufficient verdict can carry only suggestion findings"},
	} {
		_, err := Parse([]byte(c.in))
		var me *MalformedError
		if !errors.As(err, &me) {
			t.Errorf("%s: got %v, want a malformed verdict", name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q does not say %q", name, err, c.want)
		}
	}
}

func TestPasses(t *testing.T) {
	withSuggestion := Verdict{Sufficient: true, Findings: []Finding{{Severity: Suggestion}}}
	if !withSuggestion.Passes(false) || withSuggestion.Passes(true) {
		t.Error("a pass with a suggestion passes, but not under --pedantic")
	}
	clean := Verdict{Sufficient: true, Findings: []Finding{}}
	if !clean.Passes(true) {
		t.Error("a clean pass passes under --pedantic")
	}
	if (Verdict{Sufficient: false}).Passes(false) {
		t.Error("an insufficient verdict passed")
	}
}

// The advertised tool schema is the object part: the four fields, the
// three required, no if/then (which some services refuse in a tool).
func TestToolSchema(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(ToolSchema(), &s); err != nil {
		t.Fatal(err)
	}
	if s["type"] != "object" || s["allOf"] != nil || s["$schema"] != nil {
		t.Fatalf("tool schema: %v", s)
	}
	props := s["properties"].(map[string]any)
	for _, k := range []string{"sufficient", "summary", "findings", "acceptance"} {
		if props[k] == nil {
			t.Errorf("no %s", k)
		}
	}
	req, _ := json.Marshal(s["required"])
	if string(req) != `["sufficient","summary","findings"]` {
		t.Errorf("required: %s", req)
	}
	if !strings.Contains(Description(), "work order, not a judgment") {
		t.Errorf("description: %q", Description())
	}
}

func TestRender(t *testing.T) {
	v := Verdict{Sufficient: false, Summary: "The parser is missing.\n",
		Findings: []Finding{
			{Severity: Suggestion, Where: "README", What: "Mention the parser", Why: "users"},
			{Severity: Blocker, Where: "parse.go:1", What: "Add  the\nparser", Why: "plan step 1"},
		},
		Acceptance: []string{"go test ./parse passes"}}
	want := "## Verdict: insufficient\n\nThe parser is missing.\n\n### Findings\n\n" +
		"1. **blocker** — `parse.go:1`: Add the parser\n   Why: plan step 1\n" +
		"2. **suggestion** — `README`: Mention the parser\n   Why: users\n" +
		"\n### Acceptance (checked on the next pass)\n\n- go test ./parse passes\n"
	if got := Render(v); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSignatureIgnoresOrder(t *testing.T) {
	a := Verdict{Findings: []Finding{{Severity: Blocker, Where: "a", What: "x"}, {Severity: Required, Where: "b", What: "y"}}}
	b := Verdict{Findings: []Finding{{Severity: Required, Where: "b", What: "y", Why: "other words"}, {Severity: Blocker, Where: "a", What: "x"}}}
	if a.Signature() != b.Signature() {
		t.Error("the same findings in another order differ")
	}
	c := Verdict{Findings: []Finding{{Severity: Blocker, Where: "a", What: "z"}}}
	if a.Signature() == c.Signature() {
		t.Error("other findings read the same")
	}
}

// The call directory: malformed verdicts are counted across the turns of
// one call, the first valid verdict stands, an escalation is kept.
func TestCallDirectory(t *testing.T) {
	dir := t.TempDir()
	_, n, err := Submit(dir, []byte(`{"sufficient": false, "summary": "x", "findings": []}`))
	if n != 1 || err == nil {
		t.Fatalf("first malformed: n=%d err=%v", n, err)
	}
	_, n, err = Submit(dir, []byte(`not json`))
	if n != 2 || err == nil {
		t.Fatalf("second malformed: n=%d err=%v", n, err)
	}
	c, err := Read(dir)
	if err != nil || c.Verdict != nil || len(c.Malformed) != 2 || !strings.Contains(c.Malformed[1], "not JSON") {
		t.Fatalf("read: %+v %v", c, err)
	}
	v, _, err := Submit(dir, []byte(`{"sufficient": true, "summary": "ok", "findings": []}`))
	if err != nil || !v.Sufficient {
		t.Fatalf("valid: %v", err)
	}
	if _, _, err := Submit(dir, []byte(`{"sufficient": true, "summary": "again", "findings": []}`)); !errors.Is(err, ErrAlreadyRecorded) {
		t.Fatalf("a second verdict: %v", err)
	}
	if err := Escalate(dir, "  "); err == nil {
		t.Fatal("an escalation without a reason was taken")
	}
	if err := Escalate(dir, "the database is down"); err != nil {
		t.Fatal(err)
	}
	c, err = Read(dir)
	if err != nil || c.Verdict == nil || c.Verdict.Summary != "ok" || c.Escalated != "the database is down" {
		t.Fatalf("read: %+v %v", c, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "verdict.json")); !json.Valid(b) {
		t.Fatalf("verdict.json: %s", b)
	}
}
