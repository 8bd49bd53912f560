package laserbrain

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/jsonl"
)

// FuzzParseStepRecord: the hand reading of a history line gives what
// encoding/json gives, record and error alike, whatever the line, with or
// without an interner kept from earlier lines.
func FuzzParseStepRecord(f *testing.F) {
	ls := "⟨ship⟩ advancing d5"
	for _, r := range []StepRecord{
		{N: 1, At: time.Date(2026, 8, 24, 15, 0, 0, 123456789, time.UTC), Goal: "ship the sky billboard", Progress: "advancing", Distance: Dist(5), Reason: "grounded", Phi: 0.03, Laserscore: &ls, Anchored: 0.5},
		{N: 12, Goal: "x", Progress: "stuck", Distance: NoDistance, ParentGoal: "y", UserTurn: true, Reason: "oscillating", Drifting: true, Phi: 1, Underlying: "stalled", Advice: "re-ground on the importer", Resumed: "ship the sky billboard"},
	} {
		f.Add(r.AppendJSON(nil))
	}
	for _, s := range []string{`{}`, `{"n":1.0}`, `{"N":2}`, `{"goal":"a\"b"}`, `{"phi":1e400}`, `{"n":01}`, `{"at":null}`, `{"laserscore":null,"laserscore":"a"}`,
		`{"distance":"7.9"}`, `{"drifting":1}`, `{"goal":"\xff"}`, ` {"n":3} `, `{"n":3}x`, `{"n":-0}`, `{"distance":[1,2]}`, `{"goal":"é"}`} {
		f.Add([]byte(s))
	}
	shared := StepReader{Strings: &jsonl.Interner{}} // kept across lines, as a run's reader keeps it
	f.Fuzz(func(t *testing.T, line []byte) {
		var want StepRecord
		werr := json.Unmarshal(line, &want)
		for _, r := range []StepReader{{}, shared} {
			got, gerr := r.Parse(line)
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("%q: error %v, encoding/json %v", line, gerr, werr)
			}
			if werr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%q:\n got %+v\nwant %+v", line, got, want)
			}
		}
	})
}
