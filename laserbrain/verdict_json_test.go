package laserbrain

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func stdJSON(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// AppendJSON writes exactly what encoding/json writes, for verdicts of
// every kind (the bench mix, claims, a rejected parent, an oscillation).
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	r := NewRun(RunOptions{})
	var verdicts []CheckResult
	for i := 0; i < 40; i++ {
		s := benchSteps[i%len(benchSteps)]
		if i%5 == 0 {
			s.Doing, s.Blocked = "I think it should work", "tests failed \u2028 \x01 \xff"
		}
		if i%7 == 0 {
			s.ParentGoal = "paint the shed"
		}
		v, _ := r.Step(s)
		verdicts = append(verdicts, v)
	}
	a, b := StepInput{Goal: "read auth.py", Progress: adv}, StepInput{Goal: "read session.py", Progress: adv}
	o := NewRun(RunOptions{})
	for i := 0; i < 6; i++ {
		v, _ := o.Step([]StepInput{a, b}[i%2])
		verdicts = append(verdicts, v)
	}
	if verdicts[len(verdicts)-1].Period != 2 {
		t.Fatal("the oscillation case did not oscillate")
	}
	for i, v := range verdicts {
		if got, want := v.AppendJSON(nil), stdJSON(t, v); !bytes.Equal(got, want) {
			t.Errorf("verdict %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("⟨x⟩ \"q\" \\ \n\t\b\f\x00\x1f\u2028\u2029\xc3", 0.125, 1e-7)
	f.Fuzz(func(t *testing.T, s string, x, y float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			return // encoding/json refuses them; verdicts never hold them
		}
		v := CheckResult{Reason: s, Why: s, Laserscore: &s, Phi: x, Anchored: y, Scores: Scores{Drift: x, Language: &y},
			Claims: &Claims{Grounded: &x, Hits: []Claim{{Kind: s, Text: s}}}, ParentOverlap: &y, Run: s, Step: 3}
		if got, want := v.AppendJSON(nil), stdJSON(t, v); !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

// StepRecord.AppendJSON writes what encoding/json writes.
func TestStepRecordAppendJSON(t *testing.T) {
	r := NewRun(RunOptions{})
	for i := 0; i < 40; i++ {
		s := benchSteps[i%len(benchSteps)]
		if i%3 == 0 {
			s.Distance = NoDistance
			s.UserTurn = true
			s.Goal += " \u2028\x7f\xff"
		}
		if _, err := r.Step(s); err != nil {
			t.Fatal(err)
		}
	}
	for i, rec := range r.Steps() {
		if got, want := rec.AppendJSON(nil), stdJSON(t, &rec); !bytes.Equal(got, want) {
			t.Errorf("record %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
