package undo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// FindRepo finds the work tree git finds: a directory named .git with no
// HEAD (placeholders left behind), or a HEAD and no objects or refs, is
// passed over, as git passes it over.
func TestFindRepoAsGitSees(t *testing.T) {
	testenv.LookPath(t, "git")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"stray/.git/hooks", "stray/work", "outer/inner"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitIn := func(dir string, args ...string) (string, bool) { return testenv.Git(dir, filepath.Dir(root), args...) }

	if _, ok := gitIn(filepath.Join(root, "outer"), "init", "-q"); !ok {
		t.Fatal("git init failed")
	}
	// A stray .git (hooks only) inside a real repository: git finds the outer one.
	if err := os.MkdirAll(filepath.Join(root, "outer", "inner", ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	// One with a HEAD but no objects or refs: git passes it over too.
	headOnly := filepath.Join(root, "outer", "headonly", ".git")
	if err := os.MkdirAll(headOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(headOnly, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"stray/work", "stray", "outer/inner", "outer/headonly", "outer"} {
		dir := filepath.Join(root, d)
		want, ok := gitIn(dir, "rev-parse", "--show-toplevel")
		r, err := FindRepo(dir)
		switch {
		case !ok && !errors.Is(err, ErrNoRepo):
			t.Errorf("%s: git finds no repository; FindRepo: %+v, %v", d, r, err)
		case ok && (err != nil || r.Top != want):
			t.Errorf("%s: git finds %s; FindRepo: %+v, %v", d, want, r, err)
		}
	}
}
