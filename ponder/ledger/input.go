package ledger

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/laserkit/laserkit/internal/schemas"
)

// DeltaSchema is the JSON Schema (2020-12) of a delta batch as an agent
// submits it.
//
//go:embed delta.schema.json
var DeltaSchema []byte

const deltaSchemaURL = "https://laserkit.invalid/ponder/delta.schema.json"

var deltaSchema = schemas.Lazy(deltaSchemaURL, DeltaSchema)

// Violation is one reason a batch is rejected. Record is 1-based (0 = the
// batch as a whole); Line is the input line for JSON Lines input (0 for an
// array).
type Violation struct {
	Record  int    `json:"record"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (v Violation) String() string {
	switch {
	case v.Record == 0:
		return v.Message
	case v.Line > 0:
		return fmt.Sprintf("record %d (line %d): %s", v.Record, v.Line, v.Message)
	}
	return fmt.Sprintf("record %d: %s", v.Record, v.Message)
}

// Delta is one record as submitted, after the schema accepted it.
type Delta struct {
	Type           string   `json:"type"`
	Voice          string   `json:"voice"`
	Op             string   `json:"op"`
	FindingID      string   `json:"findingId"`
	UnitID         string   `json:"unitId"`
	Path           *string  `json:"path"`
	Kind           string   `json:"kind"`
	Severity       string   `json:"severity"`
	Confidence     *float64 `json:"confidence"`
	Text           *string  `json:"text"`
	Recommendation *string  `json:"recommendation"`
	Evidence       *string  `json:"evidence"`
	Reason         *string  `json:"reason"`
	Phantom        *bool    `json:"phantom"`

	// Fields names the keys the record carried, for rule (4).
	Fields []string `json:"-"`
	Line   int      `json:"-"`
	// Invalid marks a record the schema rejected; the engine skips it but
	// still checks the others, so that every violation is reported at once.
	Invalid bool `json:"-"`
}

// ParseBatch reads a delta batch — JSON Lines, or one JSON array — and
// validates it whole against DeltaSchema. Every violation is returned; the
// batch is acceptable only when there are none. Records the schema rejected
// come back marked Invalid (unparseable input returns no deltas). A record
// without "type" but with "op" is a finding.
func ParseBatch(data []byte) ([]Delta, []Violation) {
	var (
		raws  []json.RawMessage
		lines []int
		viol  []Violation
	)
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, []Violation{{Message: "the batch is empty"}}
	}
	if !utf8.Valid(data) {
		// encoding/json would turn the bad bytes into U+FFFD silently, and
		// a name would then stop naming its file.
		line := bytes.Count(data[:invalidAt(data)], []byte{'\n'}) + 1
		return nil, []Violation{{Line: line, Message: fmt.Sprintf(`the batch is not UTF-8 (line %d): JSON is; write a file name that is not UTF-8 in ponder's quoted form, "\"caf\\xe9.go\"" (see ponder/SPEC.md)`, line)}}
	}
	if trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &raws); err != nil {
			return nil, []Violation{{Message: "the batch is not a JSON array of records: " + err.Error()}}
		}
		lines = make([]int, len(raws))
	} else {
		for i, l := range bytes.Split(data, []byte{'\n'}) {
			l = bytes.TrimSpace(l)
			if len(l) == 0 {
				continue
			}
			raws = append(raws, json.RawMessage(l))
			lines = append(lines, i+1)
			if !json.Valid(l) {
				var v any
				err := json.Unmarshal(l, &v)
				viol = append(viol, Violation{Record: len(raws), Line: i + 1, Message: "not valid JSON: " + err.Error()})
			}
		}
		if len(viol) > 0 {
			return nil, viol
		}
	}
	// The schema sees the batch as one array.
	docs := make([]any, len(raws))
	for i, r := range raws {
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		if err := d.Decode(&docs[i]); err != nil {
			viol = append(viol, Violation{Record: i + 1, Line: lines[i], Message: "not valid JSON: " + err.Error()})
		}
	}
	if len(viol) > 0 {
		return nil, viol
	}
	sch, err := deltaSchema()
	if err != nil {
		return nil, []Violation{{Message: "internal error: delta schema: " + err.Error()}}
	}
	invalid := map[int]bool{}
	if err := sch.Validate(docs); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, []Violation{{Message: "schema validation: " + err.Error()}}
		}
		viol = schemaViolations(ve, lines)
		for _, v := range viol {
			if v.Record == 0 {
				return nil, viol
			}
			invalid[v.Record] = true
		}
	}
	out := make([]Delta, len(raws))
	for i, r := range raws {
		if invalid[i+1] {
			out[i] = Delta{Invalid: true, Line: lines[i]}
			continue
		}
		if err := json.Unmarshal(r, &out[i]); err != nil {
			viol = append(viol, Violation{Record: i + 1, Line: lines[i], Message: err.Error()})
			continue
		}
		obj := docs[i].(map[string]any)
		for k := range obj {
			out[i].Fields = append(out[i].Fields, k)
		}
		sort.Strings(out[i].Fields)
		out[i].Line = lines[i]
		if out[i].Type == "" {
			out[i].Type = Finding
		}
	}
	return out, viol
}

// invalidAt is the offset of the first byte of data that is not UTF-8.
func invalidAt(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// schemaViolations flattens the validator's error tree into one message per
// record and place, keeping the leaves (the concrete complaints).
func schemaViolations(ve *jsonschema.ValidationError, lines []int) []Violation {
	type key struct {
		rec  int
		loc  string
		text string
	}
	seen := map[key]bool{}
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		// An anyOf of required-alternatives reads better as one line.
		if strings.HasSuffix(e.KeywordLocation, "/anyOf") && len(e.Causes) > 0 {
			var alts []string
			for _, c := range e.Causes {
				m, ok := strings.CutPrefix(c.Message, "missing properties: ")
				if len(c.Causes) > 0 || !ok {
					alts = nil
					break
				}
				alts = append(alts, m)
			}
			if alts != nil {
				e = &jsonschema.ValidationError{InstanceLocation: e.InstanceLocation, Message: "missing one of: " + strings.Join(alts, ", ")}
			}
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		rec, loc := splitLocation(e.InstanceLocation)
		msg := e.Message
		if loc != "" {
			msg = loc + ": " + msg
		}
		k := key{rec, loc, msg}
		if seen[k] {
			return
		}
		seen[k] = true
		v := Violation{Record: rec, Message: msg}
		if rec > 0 && rec <= len(lines) {
			v.Line = lines[rec-1]
		}
		out = append(out, v)
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Record < out[j].Record })
	return out
}

// splitLocation turns "/3/confidence" into record 4 and "confidence".
func splitLocation(loc string) (int, string) {
	loc = strings.TrimPrefix(loc, "/")
	if loc == "" {
		return 0, ""
	}
	first, rest, _ := strings.Cut(loc, "/")
	n, err := strconv.Atoi(first)
	if err != nil {
		return 0, loc
	}
	return n + 1, rest
}
