package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkParse reads a 100,000-record ledger both ways in one run: with
// encoding/json line by line (the baseline) and with Parse (the scanner,
// with its batch and seq checks). The ratio is the decoder's share of
// judge's speed.
func BenchmarkParse(b *testing.B) {
	const n = 100_000
	recs := make([]Record, n)
	text, rec, ev := "the handler reads the request body twice and drops the second error", "read once into a buffer", "src/pkg/file.go:42"
	for i := range recs {
		c := 0.75
		recs[i] = Record{Type: Finding, Voice: Dreamer, Op: OpAdd, FindingID: fmt.Sprintf("f%04d", i+1), UnitID: fmt.Sprintf("u%04d", i%10000+1),
			Severity: "should", Confidence: &c, Text: &text, Recommendation: &rec, Evidence: &ev}
	}
	for i := 0; i < n; i += 100 {
		Stamp(recs[i:i+100], i+1, 2, time.Now())
	}
	data, _, err := Seal(recs, testGenesis)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			count := 0
			for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'}) {
				var r Record
				if err := json.Unmarshal(line, &r); err != nil {
					b.Fatal(err)
				}
				count++
			}
			if count != n {
				b.Fatal(count)
			}
		}
	})
	b.Run("Parse", func(b *testing.B) {
		for b.Loop() {
			if l := Parse(data, testChain, func(*Record) {}); l.Count != n || l.Damage != nil {
				b.Fatal(l.Count, l.Damage)
			}
		}
	})
}
