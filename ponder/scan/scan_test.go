package scan

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
)

func write(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWalkOutsideARepository(t *testing.T) {
	root := t.TempDir()
	write(t, root, "b.go", "A.go", "_x", "sub/c.go", "é.txt",
		".git/config", ".ponder/s/ledger.jsonl", "node_modules/m/i.js", "deep/node_modules/n.js", "deep/.gitkeep")
	var counts []int
	r, err := Dir(root, func(n int) { counts = append(counts, n) })
	if err != nil {
		t.Fatal(err)
	}
	// Bytewise: '.' 0x2e < 'A' 0x41 < '_' 0x5f < 'b' 0x62 < 'd' < 's' < 'é' 0xc3.
	want := "A.go _x b.go deep/.gitkeep sub/c.go é.txt"
	if r.Method != Walk || strings.Join(r.Paths, " ") != want {
		t.Errorf("walk = %s %v, want %s", r.Method, r.Paths, want)
	}
	if len(counts) != len(r.Paths) || counts[len(counts)-1] != len(r.Paths) {
		t.Errorf("progress calls %v", counts)
	}
}

func TestGitListsFilesOnDiskNotIgnored(t *testing.T) {
	testenv.LookPath(t, "git")
	root := t.TempDir()
	write(t, root, "z.go", "a/b.go", "gone.go", "untracked.go", "sub/x.go", "sub/new.go", ".gitignore", "build/out.o", "sub/debug.log",
		".ponder/s/session.json")
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "z.go", "a/b.go", "gone.go", "sub/x.go", ".gitignore")
	git("commit", "-q", "-m", "x")
	if err := os.Remove(filepath.Join(root, "gone.go")); err != nil {
		t.Fatal(err)
	}
	r, err := Dir(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Tracked files still on disk and untracked files git does not ignore;
	// not the deleted one, not the ignored ones, not ponder's own state.
	if want := ".gitignore a/b.go sub/new.go sub/x.go untracked.go z.go"; r.Method != Git || strings.Join(r.Paths, " ") != want {
		t.Errorf("git scan = %s %v; want %s", r.Method, r.Paths, want)
	}
	// A subdirectory lists relative to itself.
	r, err = Dir(filepath.Join(root, "sub"), nil)
	if err != nil || r.Method != Git || strings.Join(r.Paths, " ") != "new.go x.go" {
		t.Errorf("git scan of sub = %+v, %v", r, err)
	}
}

func TestSymlinkRootIsFollowedOnce(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	write(t, real, "a.go", "d/b.go")
	other := filepath.Join(base, "other")
	write(t, other, "hidden.go")
	if err := os.Symlink(other, filepath.Join(real, "d", "link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(real, filepath.Join(base, "root")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(base, "root"), filepath.Join(base, "root") + "/"} {
		r, err := Dir(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The inner symlink is an entry of its own, not followed.
		if got := strings.Join(r.Paths, " "); got != "a.go d/b.go d/link" {
			t.Errorf("scan of %s = %s, want the root followed once", dir, got)
		}
	}
}

func TestDirErrors(t *testing.T) {
	if _, err := Dir(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("scanning a missing directory succeeded")
	}
	file := filepath.Join(t.TempDir(), "f")
	write(t, filepath.Dir(file), "f")
	if _, err := Dir(file, nil); err == nil {
		t.Error("scanning a file succeeded")
	}
}

func TestProgressRedrawsAtMostEvery100ms(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, "scanning src")
	now := time.Unix(0, 0)
	p.now = func() time.Time { return now }
	for n := 1; n <= 1000; n++ {
		if n%100 == 0 {
			now = now.Add(50 * time.Millisecond)
		}
		p.Update(n)
	}
	p.Done(1000)
	// 1000 updates over 500 ms: the first draw, then one per 100 ms (at
	// n = 200, 400, 600, 800, 1000), then Done's final line.
	draws := strings.Count(buf.String(), "\r")
	if draws != 7 || !strings.HasSuffix(buf.String(), "\rscanning src: 1000 files\n") {
		t.Errorf("%d draws: %q", draws, buf.String())
	}
}
