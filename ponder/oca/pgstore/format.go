package pgstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/laserkit/laserkit/ponder/oca"
)

// sessionContent is an episodic row's content: the
// bracketed slug first, so the session-list query can extract it, then the
// subject verbatim, so prior pondering can find it. pass > 0 adds pass=N.
func sessionContent(s oca.Session, pass int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s :: lens=%s project=%s passes=%d mode=deliberate",
		s.Slug, s.Subject, fieldValue(s.Lens), fieldValue(s.Project), s.Passes)
	if pass > 0 {
		fmt.Fprintf(&b, " pass=%d", pass)
	}
	return b.String()
}

// fieldValue writes a key=value value bare when it is one plain token and
// JSON-quoted otherwise (spaces, quotes, backslashes, control characters,
// or empty), so the fields stay splittable.
func fieldValue(v string) string {
	plain := v != "" && !strings.ContainsFunc(v, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == '"' || r == '\\'
	})
	if plain {
		return v
	}
	q, _ := compactJSON(v) // a string always encodes
	return q
}

// num formats a number for the human-readable text columns: the shortest
// representation that reads back as the same float64, never in exponent form.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// compactJSON encodes v compactly, map keys sorted, without HTML escaping,
// so stored text is byte-for-byte what a reader would write by hand.
func compactJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// canonicalJSON re-encodes caller-supplied JSON compactly with sorted keys,
// keeping numbers exactly as written. Invalid JSON is an error.
func canonicalJSON(raw json.RawMessage, what string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("%s is not valid JSON: %w", what, err)
	}
	if dec.More() {
		return "", fmt.Errorf("%s is not a single JSON value", what)
	}
	return compactJSON(v)
}

// nullableString maps "" to null.
func nullableString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// passOutcome is a ponder_pass row's actual_outcome: the actual churn, the
// per-op delta counts and every convergence signal, nulls explicit.
func passOutcome(m oca.PassMetrics) (string, error) {
	return compactJSON(map[string]any{
		"churn":           m.Churn,
		"novelty":         m.Novelty,
		"thrash":          m.Thrash,
		"coverage":        m.Coverage,
		"voices":          m.Voices,
		"deltaVoices":     m.DeltaVoices,
		"skeptic":         m.Skeptic,
		"confidenceFloor": m.ConfidenceFloor,
		"surprise":        m.Surprise,
		"ops": map[string]int{
			"add": m.Ops.Add, "edit": m.Ops.Edit, "change": m.Ops.Change, "delete": m.Ops.Delete,
		},
		"verdict": nullableString(m.Verdict),
	})
}

// passPrediction is a ponder_pass row's prediction: the agent's forecast
// churn and claim, or SQL NULL when the pass had no predict.json.
func passPrediction(f *oca.Forecast) (*string, error) {
	if f == nil {
		return nil, nil
	}
	s, err := compactJSON(map[string]any{"churn": f.Churn, "claim": nullableString(f.Claim)})
	return &s, err
}

// payload builds an event payload, dropping keys whose value is empty so a
// payload never carries an empty key.
func payload(kv map[string]any) (string, error) {
	for k, v := range kv {
		if s, ok := v.(string); ok && s == "" {
			delete(kv, k)
		}
		if v == nil {
			delete(kv, k)
		}
	}
	return compactJSON(kv)
}
