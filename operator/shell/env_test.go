package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// A long-lived process (laserbrain run) answers for a session whose
// environment is not its own. The session's home holds a git alias that
// force-pushes; real git, run with that home, moves the remote's branch
// to a commit that does not contain its old one. The analysis given the
// session's environment reads that alias; the analysis given only this
// process's environment (another home) cannot see it.
func TestAnalyzeInReadsTheSessionsHome(t *testing.T) {
	testenv.LookPath(t, "git")
	root := t.TempDir()
	session, other := filepath.Join(root, "session-home"), filepath.Join(root, "other-home")
	for _, d := range []string{session, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(session, ".gitconfig"), []byte("[alias]\n\tship = push --force origin main\n[user]\n\tname = t\n\temail = t@t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	work, remote := filepath.Join(root, "work"), filepath.Join(root, "origin.git")
	git := func(home, dir string, args ...string) string {
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"))
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(session, root, "init", "-q", "--bare", "-b", "main", remote)
	git(session, root, "init", "-q", "-b", "main", work)
	git(session, work, "commit", "-q", "--allow-empty", "-m", "base")
	git(session, work, "remote", "add", "origin", remote)
	git(session, work, "commit", "-q", "--allow-empty", "-m", "pushed")
	git(session, work, "push", "-q", "origin", "main")
	old := git(session, remote, "rev-parse", "main")
	git(session, work, "reset", "-q", "--hard", "HEAD~1")
	git(session, work, "commit", "-q", "--allow-empty", "-m", "diverged")

	t.Setenv("HOME", other)
	t.Setenv("XDG_CONFIG_HOME", "")
	sessionEnv := func(k string) (string, bool) {
		if k == "HOME" {
			return session, true
		}
		return os.LookupEnv(k)
	}
	in := AnalyzeIn("git ship", work, Session{Env: sessionEnv})
	own := Analyze("git ship", work)

	git(session, work, "ship")
	kept := exec.Command("git", "merge-base", "--is-ancestor", old, "main")
	kept.Dir = remote
	if kept.Run() == nil {
		t.Fatal("the oracle: git ship kept the remote's old commit; the fixture does not force-push")
	}
	if in.Classification.Reversible {
		t.Errorf("git ship with the session's home (alias ship = push --force): reversible; findings %+v", in.Findings)
	}
	if !own.Classification.Reversible {
		t.Errorf("git ship with another home: irreversible, so the analysis did not read the home it was given: %+v", own.Findings)
	}
}
