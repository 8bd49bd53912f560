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
func TestObserveVectorsAreTheReferences(t *testing.T) { writtenByTheReference(t, "observe") }

// tree.json is the reference's own answer too (its generator, run against
// the reference, writes it byte for byte).
func TestTreeVectorsAreTheReferences(t *testing.T) { writtenByTheReference(t, "tree") }

// writtenByTheReference fails t unless KIND.json is what its generator,
// testdata/KIND_reference.py, writes when run against the reference.
func writtenByTheReference(t *testing.T, kind string) {
	t.Helper()
	sdk := testenv.Shared(t, "reference/laserbrain-sdk-0.53.0")
	py := testenv.LookPath(t, "python3")
	cmd := exec.Command(py, "testdata/"+kind+"_reference.py", "--sdk", sdk)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the generator failed: %v\n%s", err, stderr.String())
	}
	committed, err := os.ReadFile(kind + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, committed) {
		t.Fatalf("vectors/%s.json is not what the reference says now: run python3 vectors/testdata/%s_reference.py --sdk DIR > vectors/%s.json", kind, kind, kind)
	}
}
