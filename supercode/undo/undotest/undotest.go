// Package undotest builds the repository the undo tests destroy and takes
// its picture with real git and the real files, so a test can tell, byte
// for byte, whether an undo brought everything back.
package undotest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// DB is the ignored database the fixture's policy names.
const DB = "data/app.db"

// Policy is the fixture's project policy: the database is named data.
const Policy = `{"version": 1, "undo": {"include": ["data/app.db"]}}` + "\n"

// Git runs git in dir and returns its output; a failure fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Write writes a file of the fixture, making its directory.
func Write(t testing.TB, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Repo makes the fixture in dir (created): two commits on main, a
// feature branch one commit ahead, two stash entries, a staged change
// changed again in the tree, a modified file, untracked files, the
// ignored database the policy names (a real sqlite3 table) and ignored
// build output it does not name.
func Repo(t testing.TB, dir string) {
	t.Helper()
	sqlite := testenv.LookPath(t, "sqlite3")
	Git(t, dir, "init", "-q", "-b", "main", ".")
	Write(t, dir, ".gitignore", "data/*.db\nbuild/\n")
	Write(t, dir, ".laserbrain/policy.json", Policy)
	Write(t, dir, "README.md", "# shop\n")
	for i := 0; i < 6; i++ {
		Write(t, dir, fmt.Sprintf("src/pkg%d/file.go", i), fmt.Sprintf("package pkg%d\n\nconst N = %d\n", i, i))
	}
	Write(t, dir, "src/main.go", "package main\n\nfunc main() {}\n")
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", "first")
	Write(t, dir, "src/util.go", "package main\n\nfunc util() int { return 1 }\n")
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", "second")
	Git(t, dir, "checkout", "-q", "-b", "feature")
	Write(t, dir, "src/feature.go", "package main\n\n// only on feature\n")
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", "feature work")
	Git(t, dir, "checkout", "-q", "main")
	Write(t, dir, "README.md", "# shop\n\nstashed once\n")
	Git(t, dir, "stash", "push", "-q", "-m", "first stash")
	Write(t, dir, "src/main.go", "package main\n\n// stashed twice\nfunc main() {}\n")
	Git(t, dir, "stash", "push", "-q", "-m", "second stash")
	Write(t, dir, "src/pkg1/file.go", "package pkg1\n\nconst N = 100 // staged\n")
	Git(t, dir, "add", "src/pkg1/file.go")
	Write(t, dir, "src/pkg1/file.go", "package pkg1\n\nconst N = 101 // staged, then changed again\n")
	Write(t, dir, "src/main.go", "package main\n\n// a day's uncommitted work\nfunc main() { println(\"hi\") }\n")
	Write(t, dir, "src/new.go", "package main\n\n// untracked, not ignored\n")
	Write(t, dir, "notes.txt", "untracked notes\n")
	Write(t, dir, "build/out.o", "ignored build output\n")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sqlite, filepath.Join(dir, DB),
		"CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES ('ada'), ('grace'), ('linus');")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
}

// Picture is a work tree as git and the file system show it: every file
// but .git's and the ignored build output, by mode and content; the refs
// (git for-each-ref) and HEAD; the stash list (git stash list, and its
// reflog's bytes); the index (git ls-files -s).
type Picture struct {
	Files map[string]string
	Refs  string
	Stash string
	Index string
}

// Take takes the picture of the work tree at dir.
func Take(t testing.TB, dir string) Picture {
	t.Helper()
	p := Picture{Files: map[string]string{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if rel == ".git" || rel == "build" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		var data []byte
		if fi.Mode()&fs.ModeSymlink != 0 {
			s, err := os.Readlink(path)
			if err != nil {
				return err
			}
			data = []byte(s)
		} else if data, err = os.ReadFile(path); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		p.Files[rel] = fmt.Sprintf("%v %s", fi.Mode(), hex.EncodeToString(sum[:]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	head, err := os.ReadFile(filepath.Join(dir, ".git", "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	p.Refs = "HEAD " + string(head) + Git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)")
	p.Stash = Git(t, dir, "stash", "list", "--format=%H %gd %gs")
	if b, err := os.ReadFile(filepath.Join(dir, ".git", "logs", "refs", "stash")); err == nil {
		sum := sha256.Sum256(b)
		p.Stash += "reflog " + hex.EncodeToString(sum[:]) + "\n"
	}
	p.Index = Git(t, dir, "ls-files", "-s")
	return p
}

// Diff is what differs between two pictures, in words ("" when nothing).
func Diff(want, got Picture) string {
	var out []string
	both := map[string]string{}
	maps.Copy(both, want.Files)
	maps.Copy(both, got.Files)
	for _, n := range slices.Sorted(maps.Keys(both)) {
		w, ok1 := want.Files[n]
		g, ok2 := got.Files[n]
		switch {
		case !ok2:
			out = append(out, "missing "+n)
		case !ok1:
			out = append(out, "extra "+n)
		case w != g:
			out = append(out, "differs "+n)
		}
	}
	for _, f := range []struct{ what, w, g string }{{"refs", want.Refs, got.Refs}, {"stash", want.Stash, got.Stash}, {"index", want.Index, got.Index}} {
		if f.w != f.g {
			out = append(out, fmt.Sprintf("%s:\nwant:\n%s\ngot:\n%s", f.what, f.w, f.g))
		}
	}
	return strings.Join(out, "\n")
}

// Rows are the users table's rows, as sqlite3 prints them.
func Rows(t testing.TB, dir string) string {
	t.Helper()
	out, err := exec.Command(testenv.LookPath(t, "sqlite3"), filepath.Join(dir, DB), "SELECT id, name FROM users ORDER BY id").CombinedOutput()
	if err != nil {
		return "error: " + strings.TrimSpace(string(out))
	}
	return string(out)
}
