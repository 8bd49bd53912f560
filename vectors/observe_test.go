package vectors

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// observe.json is the reference's own answer: its generator, run against
// the reference beside the project, writes it byte for byte.
func TestObserveVectorsAreTheReferences(t *testing.T) {
	sdk := testenv.Shared(t, "reference/laserbrain-sdk-0.53.0")
	py := testenv.LookPath(t, "python3")
	cmd := exec.Command(py, "testdata/observe_reference.py", "--sdk", sdk)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the generator failed: %v\n%s", err, stderr.String())
	}
	committed, err := os.ReadFile("observe.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, committed) {
		t.Fatalf("vectors/observe.json is not what the reference says now: run python3 vectors/testdata/observe_reference.py --sdk DIR > vectors/observe.json")
	}
}

// Empty arguments are no arguments, whichever empty value: the five of
// them, recorded in turn, are one call made three times.
func TestObserveEmptyArgumentsAreOneCall(t *testing.T) {
	r, err := Check([]byte(`{"kind":"observe","source":"test","cases":[{"in":{"calls":[
		{"tool":"Read","args":{}},{"tool":"Read","args":null},{"tool":"Read","args":""}]},
		"out":{"signatures":["Read|","Read|","Read|"],"progress":["advancing","advancing","circling"]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Failures) != 0 || r.Passed != 1 {
		t.Fatalf("%+v", r)
	}
}
