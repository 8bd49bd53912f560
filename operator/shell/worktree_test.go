package shell

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// The index reader agrees with git ls-files -s on every entry, in index
// versions 2, 3 and 4 (4 compresses each path against the one before).
func TestIndexEntryAgreesWithGit(t *testing.T) {
	testenv.LookPath(t, "git")
	dir := t.TempDir()
	git := func(args ...string) string {
		c := exec.Command("git", args...)
		c.Dir, c.Env = dir, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", ".")
	for _, p := range []string{"a.go", "dir/b.go", "dir/sub/c.go", "dir/sub/cc.go", "longer-name-that-pads/x.txt", "z"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", ".")
	git("update-index", "--skip-worktree", "z") // an extended flag: version 3
	for _, v := range []string{"2", "3", "4"} {
		if v != "3" {
			git("update-index", "--no-skip-worktree", "z")
		}
		git("update-index", "--index-version", v)
		for _, line := range strings.Split(strings.TrimSpace(git("ls-files", "-s")), "\n") {
			f := strings.Fields(line)
			id, size, found := indexEntry(filepath.Join(dir, ".git", "index"), f[3], false)
			if !found || hex.EncodeToString(id) != f[1] || int(size) != len(f[3])+1 {
				t.Errorf("index version %s, %s: found %v id %x size %d; git says %s", v, f[3], found, id, size, f[1])
			}
			if uncommitted(filepath.Join(dir, f[3])) {
				t.Errorf("index version %s: %s reads as changed, and git status says it is not", v, f[3])
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "dir/sub/c.go"), []byte("dir/sub/c.gX\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := git("status", "--porcelain"); !uncommitted(filepath.Join(dir, "dir/sub/c.go")) || !strings.Contains(st, "M dir/sub/c.go") {
		t.Errorf("a change of the same size: uncommitted %v; git status says %q", uncommitted(filepath.Join(dir, "dir/sub/c.go")), st)
	}
}
