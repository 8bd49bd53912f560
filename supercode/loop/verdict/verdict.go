package verdict

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/laserkit/laserkit/internal/schemas"
	"github.com/laserkit/laserkit/internal/text"
)

// Schema is verdict.schema.json as shipped.
//
//go:embed verdict.schema.json
var Schema []byte

const schemaURL = "https://laserkit.invalid/loop/verdict.schema.json"

// Severities, most severe first.
const (
	Blocker    = "blocker"
	Required   = "required"
	Suggestion = "suggestion"
)

// Verdict is a judge's answer: the work order for the next agent.
type Verdict struct {
	Sufficient bool      `json:"sufficient"`
	Summary    string    `json:"summary"`
	Findings   []Finding `json:"findings"`
	Acceptance []string  `json:"acceptance,omitempty"`
}

// Finding is one thing the judge found.
type Finding struct {
	Severity string `json:"severity"`
	Where    string `json:"where"`
	What     string `json:"what"`
	Why      string `json:"why"`
}

// Count returns how many findings have the severity.
func (v Verdict) Count(severity string) int {
	n := 0
	for _, f := range v.Findings {
		if f.Severity == severity {
			n++
		}
	}
	return n
}

// Passes reports whether the verdict passes: sufficient, and under
// pedantic (suggestions treated as required) without any finding at all.
func (v Verdict) Passes(pedantic bool) bool {
	if pedantic {
		return v.Sufficient && len(v.Findings) == 0
	}
	return v.Sufficient
}

// Suggestions are the verdict's suggestion findings.
func (v Verdict) Suggestions() []Finding {
	var out []Finding
	for _, f := range v.Findings {
		if f.Severity == Suggestion {
			out = append(out, f)
		}
	}
	return out
}

// Signature identifies what the verdict asks for, independent of wording
// order: its outcome and its findings' severities, places and orders. Two
// verdicts with one signature ask for the same work.
func (v Verdict) Signature() string {
	parts := make([]string, 0, len(v.Findings))
	for _, f := range v.Findings {
		parts = append(parts, f.Severity+"|"+strings.TrimSpace(f.Where)+"|"+strings.TrimSpace(f.What))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%t;%s", v.Sufficient, strings.Join(parts, ";"))
}

var schema = schemas.Lazy(schemaURL, Schema)

// MalformedError says why a verdict was refused, one reason a line, in
// words a model can act on.
type MalformedError struct{ Reasons []string }

func (e *MalformedError) Error() string {
	return "malformed verdict: " + strings.Join(e.Reasons, "; ")
}

// Parse validates raw JSON against the schema and decodes it. A refusal is
// a *MalformedError.
func Parse(raw []byte) (Verdict, error) {
	sch, err := schema()
	if err != nil {
		return Verdict{}, fmt.Errorf("the verdict schema does not compile: %w", err)
	}
	var doc any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return Verdict{}, &MalformedError{[]string{"not JSON: " + err.Error()}}
	}
	if d.More() {
		return Verdict{}, &MalformedError{[]string{"more than one JSON value"}}
	}
	if err := sch.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return Verdict{}, &MalformedError{reasons(ve)}
		}
		return Verdict{}, &MalformedError{[]string{err.Error()}}
	}
	var v Verdict
	if err := json.Unmarshal(raw, &v); err != nil {
		return Verdict{}, &MalformedError{[]string{err.Error()}}
	}
	if v.Findings == nil {
		v.Findings = []Finding{}
	}
	return v, nil
}

// reasons flattens the validator's error tree into its leaves, with the two
// rules on meaning said in words.
func reasons(ve *jsonschema.ValidationError) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch {
		case strings.Contains(e.KeywordLocation, "/allOf/0/"):
			add("an insufficient verdict needs at least one blocker or required finding saying what must change (a rejection without one is not a work order)")
			return
		case strings.Contains(e.KeywordLocation, "/allOf/1/"):
			add("a sufficient verdict can carry only suggestion findings; make it insufficient, or downgrade the blocker/required findings to suggestions")
			return
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		loc := strings.TrimPrefix(e.InstanceLocation, "/")
		if loc == "" {
			add(e.Message)
			return
		}
		add(strings.ReplaceAll(loc, "/", ".") + ": " + e.Message)
	}
	walk(ve)
	if len(out) == 0 {
		out = append(out, ve.Message)
	}
	return out
}

// ToolSchema is the input schema the `verdict` tool advertises: the
// shipped schema's object part, without the rules on meaning (if/then),
// which some model services do not accept in a tool definition. Arguments
// are still validated against the whole schema.
func ToolSchema() json.RawMessage {
	var s map[string]any
	if err := json.Unmarshal(Schema, &s); err != nil {
		panic("verdict.schema.json: " + err.Error()) // embedded, checked by tests
	}
	for _, k := range []string{"$schema", "$id", "title", "allOf", "description"} {
		delete(s, k)
	}
	b, _ := json.Marshal(s)
	return b
}

// Description is the `verdict` tool's description (the schema's).
func Description() string {
	var s struct {
		Description string `json:"description"`
	}
	_ = json.Unmarshal(Schema, &s)
	return s.Description
}

// Render writes a verdict as markdown: the outcome, the summary, the
// findings in severity order and the acceptance list.
func Render(v Verdict) string {
	var b strings.Builder
	outcome := "insufficient"
	if v.Sufficient {
		outcome = "sufficient"
	}
	fmt.Fprintf(&b, "## Verdict: %s\n\n%s\n", outcome, strings.TrimSpace(v.Summary))
	if len(v.Findings) > 0 {
		b.WriteString("\n### Findings\n\n")
		n := 0
		for _, sev := range []string{Blocker, Required, Suggestion} {
			for _, f := range v.Findings {
				if f.Severity != sev {
					continue
				}
				n++
				fmt.Fprintf(&b, "%d. **%s** — `%s`: %s\n   Why: %s\n", n, f.Severity, text.OneLine(f.Where), text.OneLine(f.What), text.OneLine(f.Why))
			}
		}
	}
	if len(v.Acceptance) > 0 {
		b.WriteString("\n### Acceptance (checked on the next pass)\n\n")
		for _, a := range v.Acceptance {
			fmt.Fprintf(&b, "- %s\n", text.OneLine(a))
		}
	}
	return b.String()
}
