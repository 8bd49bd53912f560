package scan

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// Known and Hashes against real git: after `git mv a.go c.go` the old name
// is still known (in HEAD, with its blob id), the new one only to the
// index, a name git never saw is unknown; the file on disk under its new
// name hashes to the old name's blob. Outside a work tree nothing is known.
func TestKnownAndHashes(t *testing.T) {
	testenv.LookPath(t, "git")
	root := t.TempDir()
	write(t, root, "src/a.go", "src/b.go")
	for _, args := range [][]string{{"init", "-q"}, {"add", "src"}, {"commit", "-q", "-m", "init"}, {"mv", "src/a.go", "src/c.go"}} {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	src := filepath.Join(root, "src")
	known, ok := Known(src, []string{"a.go", "c.go", "never.go", "b.go"})
	if !ok || len(known) != 3 || known["a.go"] == "" || known["c.go"] != "" || known["b.go"] == "" {
		t.Fatalf("Known = %v, %v", known, ok)
	}
	if _, seen := known["never.go"]; seen {
		t.Errorf("a name git never saw is known: %v", known)
	}
	if h := Hashes(src, []string{"c.go", "missing.go"}); h["c.go"] != known["a.go"] || len(h) != 1 {
		t.Errorf("Hashes = %v; want c.go to hash to a.go's blob %s", h, known["a.go"])
	}
	if _, ok := Known(t.TempDir(), []string{"a.go"}); ok {
		t.Error("Known answered outside a work tree")
	}
}
