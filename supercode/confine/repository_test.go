package confine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// The repository a run's work tree is in is the one git finds. A
// directory named .git that git does not take for a repository (a run's
// placeholders left behind in /tmp: only hooks/ in it) is passed over, as
// git passes it over; a real one, or a linked worktree's .git file, is
// found. Real git says which.
func TestRepositoryAsGitSees(t *testing.T) {
	testenv.LookPath(t, "git")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git := func(dir string, args ...string) (string, bool) { return testenv.Git(dir, filepath.Dir(root), args...) }
	mk := func(p string) string {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stray := mk(filepath.Join(root, "stray"))
	mk(filepath.Join(stray, ".git", "hooks"))
	work := mk(filepath.Join(stray, "work"))
	real := mk(filepath.Join(root, "real"))
	if _, ok := git(real, "init", "-q"); !ok {
		t.Fatal("git init failed")
	}
	sub := mk(filepath.Join(real, "a", "b"))
	if _, ok := git(real, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"); !ok {
		t.Fatal("git commit failed")
	}
	linked := filepath.Join(root, "linked")
	if _, ok := git(real, "worktree", "add", "-q", linked); !ok {
		t.Fatal("git worktree add failed")
	}
	for _, dir := range []string{work, stray, sub, real, linked} {
		want, isRepo := git(dir, "rev-parse", "--show-toplevel")
		got, gitDirs := repository(dir)
		if !isRepo {
			want = ""
		}
		if got != want {
			t.Errorf("%s: repository %q, git says %q", dir, got, want)
		}
		if (got == "") != (len(gitDirs) == 0) {
			t.Errorf("%s: repository %q with git directories %v", dir, got, gitDirs)
		}
	}
}
