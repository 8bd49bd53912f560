package vectors

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// tree.json is the reference's own answer too (its generator, run against
// the reference, writes it byte for byte).
func TestTreeVectorsAreTheReferences(t *testing.T) {
	sdk := testenv.Shared(t, "reference/laserbrain-sdk-0.53.0")
	py := testenv.LookPath(t, "python3")
	cmd := exec.Command(py, "testdata/tree_reference.py", "--sdk", sdk)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the generator failed: %v\n%s", err, stderr.String())
	}
	committed, err := os.ReadFile("tree.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, committed) {
		t.Fatalf("vectors/tree.json is not what the reference says now: run python3 vectors/testdata/tree_reference.py --sdk DIR > vectors/tree.json")
	}
}
