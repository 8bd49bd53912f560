package vectors

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/supercode/coverage"
)

const coverageCopy = "coverage-upstream-0.53.0.json.gz"

func shippedCoverage(t *testing.T) []byte {
	t.Helper()
	for _, f := range Shipped() {
		if f.Name == coverageCopy {
			if f.Data == nil {
				t.Fatalf("%s does not decompress", f.Name)
			}
			return f.Data
		}
	}
	t.Fatalf("%s is not in the built-in set", coverageCopy)
	return nil
}

// The reference's coverage sessions pass, every step and every state, and
// the built-in copy holds exactly them.
func TestCoverageVectorsUpstream(t *testing.T) {
	data := shippedCoverage(t)
	if n := checkFile(t, coverageCopy, data).Passed; n != 5787+150 { // 5,787 hook calls and 150 end states
		t.Errorf("%d passed; want all 5937", n)
	}
	holdsUpstream(t, coverageCopy, data, "coverage-vectors.json", "kind", "source", "cases")
}

// A wrong expectation is caught, in a step's answer and in a state.
func TestCoverageVectorsCatchWrongExpectations(t *testing.T) {
	data := shippedCoverage(t)
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	cases := doc["cases"].([]any)
	c0 := cases[0].(map[string]any)
	for _, s := range c0["steps"].([]any) {
		st := s.(map[string]any)
		if st["decision"] == "warn" {
			out := st["out"].(map[string]any)
			out["stderr"] = strings.Replace(out["stderr"].(string), "Reads still pass", "Reads pass", 1)
			break
		}
	}
	sess := c0["state"].(map[string]any)["sessions"].(map[string]any)["s1"].(map[string]any)
	sess["agent"] = "someone"
	doc["cases"] = cases[:1]
	bad, _ := json.Marshal(doc)
	r, err := Check(bad)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, f := range r.Failures {
		labels = append(labels, f.Label)
	}
	if len(labels) != 2 || !strings.HasSuffix(labels[0], "PreToolUse") || labels[1] != "case 0 state" {
		t.Errorf("failures %v, want one warn step and case 0's state", labels)
	}
	if !bytes.Contains(data, []byte(`"kind":"coverage"`)) {
		t.Error("the copy is not a coverage file")
	}
}

// A run keeps its coverage record between hook calls with only the rows
// the engine reads (coverage.Record.Kept). Replayed that way, every one of
// the reference's 5,787 hook calls still gets the reference's answer, and
// each session ends with the counts, ground and last checks of the record
// kept whole.
func TestCoverageVectorsOnKeptRecords(t *testing.T) {
	var cf covFile
	if err := json.Unmarshal(shippedCoverage(t), &cf); err != nil {
		t.Fatal(err)
	}
	calls, trimmed := 0, 0
	for i, c := range cf.Cases {
		outs, kept := replayCoverageAs(i, c, true)
		_, whole := replayCoverageAs(i, c, false)
		for _, o := range outs[:len(outs)-1] {
			calls++
			if o.Err != nil || !matches(o.Want, o.Got) {
				got, _ := json.Marshal(o.Got)
				t.Fatalf("%s on a kept record: %s (%v), the reference: %s", o.Label, got, o.Err, o.Want)
			}
		}
		for sid, w := range whole.records {
			k := kept.records[sid]
			if w == nil || k == nil {
				if (w == nil) != (k == nil) {
					t.Fatalf("case %d session %s: whole %v, kept %v", i, sid, w, k)
				}
				continue
			}
			if len(w.Checks) > len(k.Checks) {
				trimmed++
			}
			last := func(r *coverage.Record) string {
				b, _ := json.Marshal(r.Checks[max(0, len(r.Checks)-2):])
				return string(b)
			}
			if w.Steps != k.Steps || w.NumChecks() != k.NumChecks() || w.Goal != k.Goal || w.Inferred != k.Inferred ||
				len(w.Segments) != len(k.Segments) || last(w) != last(k) || w.Since() != k.Since() || w.Coverage() != k.Coverage() {
				t.Fatalf("case %d session %s: kept %+v, whole %+v", i, sid, k, w)
			}
			for j := range w.Segments {
				if a, b := w.Segments[j], k.Segments[j]; len(a.Checks)+a.EarlierChecks != len(b.Checks)+b.EarlierChecks || a.Steps != b.Steps {
					t.Fatalf("case %d session %s segment %d: kept %+v, whole %+v", i, sid, j, b, a)
				}
			}
		}
	}
	if calls != 5787 || trimmed == 0 {
		t.Fatalf("%d hook calls replayed, %d records trimmed; want 5787 and some", calls, trimmed)
	}
	t.Logf("%d hook calls, %d sessions ending with rows a kept record does not list", calls, trimmed)
}
