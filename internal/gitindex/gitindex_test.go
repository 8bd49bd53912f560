package gitindex

import (
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// gitIn runs git in dir, with no user or system configuration, and returns
// its output; a failure fails the test.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitCmd(dir, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	return cmd
}

// fixture is a repository with long, nested and non-ASCII paths, an entry
// with an extended flag (intent to add) and a merge conflict (stages 1 to
// 3), in the object format given.
func fixture(t *testing.T, format string) string {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "--object-format="+format, "-b", "main")
	files := map[string]string{"a": "", "b.txt": "hello\n", "deep/er/still/file.go": strings.Repeat("x", 5000),
		"deep/er/other.go": "y", strings.Repeat("a-long-dir/", 25) + "file.txt": "z\n", "sp ace/ü.txt": "unicode\n",
		"both.txt": "base\n"}
	for p, data := range files {
		write(t, dir, p, data)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "base")
	gitIn(t, dir, "checkout", "-q", "-b", "side")
	write(t, dir, "both.txt", "side\n")
	gitIn(t, dir, "commit", "-q", "-am", "side")
	gitIn(t, dir, "checkout", "-q", "main")
	write(t, dir, "both.txt", "main, longer\n")
	gitIn(t, dir, "commit", "-q", "-am", "main")
	if out, err := gitCmd(dir, "merge", "-q", "side").CombinedOutput(); err == nil || !strings.Contains(string(out), "CONFLICT") {
		t.Fatalf("the merge was meant to conflict:\n%s", out)
	}
	write(t, dir, "intent.txt", "later\n")
	gitIn(t, dir, "add", "-N", "intent.txt") // an extended flag: intent to add
	return dir
}

func write(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitSays is each entry as git ls-files lists it: "stage id path" from -s
// and the size from --debug, in the index's order.
func gitSays(t *testing.T, dir string) (entries []string, sizes []uint32) {
	for _, line := range strings.Split(strings.TrimSpace(gitIn(t, dir, "-c", "core.quotePath=false", "ls-files", "-s")), "\n") {
		_, rest, _ := strings.Cut(line, " ") // the mode
		id, rest, _ := strings.Cut(rest, " ")
		stage, path, _ := strings.Cut(rest, "\t")
		entries = append(entries, stage+" "+id+" "+path)
	}
	for _, line := range strings.Split(gitIn(t, dir, "-c", "core.quotePath=false", "ls-files", "--debug"), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "size:" {
			n, err := strconv.ParseUint(f[1], 10, 32)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, uint32(n))
		}
	}
	return entries, sizes
}

// Each reads what git ls-files reads, entry for entry (stage, id, path,
// size), in each index version git writes (2; 3 with an extended flag; 4
// with its path prefixes) and in both object formats.
func TestEachAgreesWithGit(t *testing.T) {
	testenv.LookPath(t, "git")
	for format, hashLen := range map[string]int{"sha1": SHA1Len, "sha256": SHA256Len} {
		dir := fixture(t, format)
		for _, v := range []string{"2", "3", "4"} {
			gitIn(t, dir, "update-index", "--index-version", v)
			want, sizes := gitSays(t, dir)
			var got []string
			var gotSizes []uint32
			err := Each(filepath.Join(dir, ".git", "index"), hashLen, func(e Entry) bool {
				got = append(got, strconv.Itoa(e.Stage)+" "+hex.EncodeToString(e.ID)+" "+string(e.Path))
				gotSizes = append(gotSizes, e.Size)
				return true
			})
			if err != nil {
				t.Fatalf("%s, version %s: %v", format, v, err)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s, version %s: read\n%s\ngit lists\n%s", format, v, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if len(want) < 10 || len(sizes) != len(want) || len(gotSizes) != len(sizes) {
				t.Fatalf("%s, version %s: %d entries, %d sizes from git, %d read", format, v, len(want), len(sizes), len(gotSizes))
			}
			for i := range sizes {
				if gotSizes[i] != sizes[i] {
					t.Errorf("%s, version %s: %s size %d, git says %d", format, v, got[i], gotSizes[i], sizes[i])
				}
			}
		}
	}
}

// Visit's false stops the reading; a file that is not an index, or one
// cut short, is ErrFormat, and a missing one is the file system's error.
func TestEachStopsAndRefuses(t *testing.T) {
	testenv.LookPath(t, "git")
	dir := fixture(t, "sha1")
	index := filepath.Join(dir, ".git", "index")
	n := 0
	if err := Each(index, SHA1Len, func(Entry) bool { n++; return n < 2 }); err != nil || n != 2 {
		t.Errorf("stopping after two: visited %d, err %v", n, err)
	}
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{"not an index": []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01"),
		"cut short": data[:200], "version 5": append([]byte("DIRC\x00\x00\x00\x05"), data[8:]...)} {
		p := filepath.Join(t.TempDir(), "index")
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Each(p, SHA1Len, func(Entry) bool { return true }); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want ErrFormat", name, err)
		}
	}
	if err := Each(filepath.Join(dir, "absent"), SHA1Len, func(Entry) bool { return true }); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: err %v", err)
	}
}
