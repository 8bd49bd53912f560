package coverage

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Count on a record the caller owns ends where Checked, copying at every
// check, ends; Checked leaves its input as it was.
func TestCountIsCheckedInPlace(t *testing.T) {
	c := Config{Mode: On}
	ins := []CheckInput{
		{Goal: "ship the parser", Progress: "advancing", Distance: json.RawMessage("5"), Reason: "grounded"},
		{Goal: "ship the parser", Progress: "stuck", Distance: json.RawMessage("5")},
		{Goal: "", Progress: "advancing", Reason: "goal-drift"},
	}
	var checked, counted *Record
	for _, in := range ins {
		before := checked.clone()
		checked = c.Checked(checked, "worker", in)
		if before != nil && len(before.Checks)+1 != len(checked.Checks) {
			t.Fatalf("Checked counted %d checks after %d", len(checked.Checks), len(before.Checks))
		}
		counted = c.Count(counted, "worker", in)
	}
	if !reflect.DeepEqual(checked, counted) {
		t.Fatalf("Count ended at %+v; Checked at %+v", counted, checked)
	}
	if len(counted.Checks) != 3 || counted.Agent != "worker" {
		t.Fatalf("%d checks as %q; want 3 as worker", len(counted.Checks), counted.Agent)
	}
	first := &Record{Goal: "g"}
	kept := first.clone()
	_ = c.Checked(first, "worker", ins[0])
	if !reflect.DeepEqual(first, kept) {
		t.Fatal("Checked changed the record it was given")
	}
}
