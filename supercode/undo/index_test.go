package undo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// The index reader agrees with git ls-files --debug on every path's size,
// in each index version git writes (2, 3 with an extended flag, 4 with its
// path prefixes), long and nested paths included.
func TestReadIndexSizesAgreesWithGit(t *testing.T) {
	testenv.LookPath(t, "git")
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("init", "-q")
	files := map[string]string{"a": "", "b.txt": "hello\n", "deep/er/still/file.go": strings.Repeat("x", 5000),
		"deep/er/other.go": "y", strings.Repeat("a-long-dir/", 25) + "file.txt": "z\n", "sp ace/ü.txt": "unicode\n"}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("add", "-A")
	if err := os.WriteFile(filepath.Join(dir, "intent.txt"), []byte("later\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "-N", "intent.txt") // an extended flag: intent to add
	for _, v := range []int{2, 3, 4} {
		run("update-index", "--index-version", strconv.Itoa(v))
		want := map[string]int64{}
		var cur string
		for _, line := range strings.Split(run("-c", "core.quotePath=false", "ls-files", "--debug"), "\n") {
			if !strings.HasPrefix(line, " ") && line != "" {
				cur = line
				continue
			}
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "size:" {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				want[cur] = n
			}
		}
		wanted := map[string]bool{"absent": true}
		for p := range want {
			wanted[p] = true
		}
		got, err := readIndexSizes(filepath.Join(dir, ".git", "index"), 20, wanted)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if len(got) != len(want) || len(want) != len(files)+1 {
			t.Errorf("version %d: read %d paths, git lists %d (%d files)", v, len(got), len(want), len(files)+1)
		}
		for p, n := range want {
			if got[p].Size != n {
				t.Errorf("version %d: %q size %d, git says %d", v, p, got[p].Size, n)
			}
		}
		if _, ok := got["absent"]; ok {
			t.Errorf("version %d: a path the index lacks was read as there", v)
		}
	}
}
