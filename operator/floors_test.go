package operator

import (
	"testing"

	"github.com/laserkit/laserkit/internal/filegraph"
)

// TestFilesStandOnFloors: inside the gate and inside the shell model no
// file uses a file that uses it, directly or through others, so each
// package reads one floor at a time (the shell model's programs call the
// walk back through its walker interface).
func TestFilesStandOnFloors(t *testing.T) {
	for _, dir := range []string{".", "shell"} {
		g, err := filegraph.Read(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, c := range g.Circles() {
			t.Errorf("%s: files in a circle of use %v:\n%s", dir, c, g.Explain(c))
		}
	}
}
