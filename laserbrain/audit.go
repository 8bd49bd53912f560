package laserbrain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/grammar"
)

// A run's audit chain is its checks as a tamper-evident ledger anyone can
// verify offline: each record carries the hash of the one before it and
// its own, the SHA-256 of the previous hash followed by the record (less
// its hash) as Python's json.dumps(record, sort_keys=True,
// separators=(",", ":")) writes it. The reference exports and verifies the
// same chain, so a chain written here verifies there and back.

// auditKeys are an audit record's fields in the order they are written.
var auditKeys = []string{"i", "run_id", "goal", "progress", "distance", "reason", "drifting", "phi", "prev", "hash"}

// AuditRecord is one check of a run as its audit chain holds it.
type AuditRecord struct {
	I        int     `json:"i"`
	RunID    string  `json:"run_id"`
	Goal     string  `json:"goal"`
	Progress string  `json:"progress"`
	Distance int     `json:"distance"` // an unknown distance is 5, the middle
	Reason   string  `json:"reason"`
	Drifting bool    `json:"drifting"`
	Phi      float64 `json:"phi"`
	Prev     string  `json:"prev"`
	Hash     string  `json:"hash"`
}

func (a AuditRecord) fields() map[string]any {
	return map[string]any{"i": a.I, "run_id": a.RunID, "goal": a.Goal, "progress": a.Progress, "distance": a.Distance,
		"reason": a.Reason, "drifting": a.Drifting, "phi": json.Number(grammar.PythonFloatRepr(a.Phi)), "prev": a.Prev, "hash": a.Hash}
}

// AuditChain is a run's checks as an audit chain.
func AuditChain(runID string, steps []StepRecord) []AuditRecord {
	out := make([]AuditRecord, 0, len(steps))
	prev := ""
	for i, s := range steps {
		d := distFallback
		if s.Distance.Known {
			d = s.Distance.Value
		}
		a := AuditRecord{I: i, RunID: runID, Goal: s.Goal, Progress: s.Progress, Distance: d, Reason: s.Reason,
			Drifting: s.Drifting, Phi: s.Phi, Prev: prev}
		body := a.fields()
		delete(body, "hash")
		a.Hash = auditLink(prev, body)
		out = append(out, a)
		prev = a.Hash
	}
	return out
}

// WriteAudit writes a chain as a JSON list, one record a line, its
// numbers and strings as Python writes them (so the reference reads back
// exactly the values that were hashed).
func WriteAudit(chain []AuditRecord) []byte {
	var b strings.Builder
	b.WriteString("[")
	for i, a := range chain {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  {")
		f := a.fields()
		for j, k := range auditKeys {
			if j > 0 {
				b.WriteString(", ")
			}
			writePyJSON(&b, k)
			b.WriteString(": ")
			writePyJSON(&b, f[k])
		}
		b.WriteString("}")
	}
	b.WriteString("\n]\n")
	return []byte(b.String())
}

// auditLink is a record's hash: SHA-256 of prev and the record's canonical
// JSON.
func auditLink(prev string, body map[string]any) string {
	var b strings.Builder
	b.WriteString(prev)
	writeCanonical(&b, body)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// writeCanonical writes v as Python's json.dumps(v, sort_keys=True,
// separators=(",", ":")): no spaces, keys sorted, non-ASCII escaped.
func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writePyJSON(b, k)
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	default:
		writePyJSON(b, v)
	}
}

// ErrNotAChain is an audit file that is not a JSON list of objects.
var ErrNotAChain = errors.New("not an audit chain (want a JSON list of records)")

// VerifyAudit checks an exported chain: every record's prev is the hash
// before it and its hash is its own link. It returns -1 when the chain
// holds, else the index of the first record that does not, with the
// number of records.
func VerifyAudit(data []byte) (firstBad int, n int, err error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var chain []any
	if err := d.Decode(&chain); err != nil {
		return 0, 0, fmt.Errorf("%w: %v", ErrNotAChain, err)
	}
	prev := ""
	for i, r := range chain {
		rec, ok := r.(map[string]any)
		if !ok {
			return i, len(chain), nil
		}
		body := make(map[string]any, len(rec))
		for k, v := range rec {
			if k != "hash" {
				body[k] = v
			}
		}
		p, hasPrev := rec["prev"].(string)
		h, _ := rec["hash"].(string)
		if !hasPrev || p != prev || auditLink(prev, body) != h {
			return i, len(chain), nil
		}
		prev = h
	}
	return -1, len(chain), nil
}
