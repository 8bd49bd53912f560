package main

// The real Claude Code CLI under laserbrain run, its model on this
// machine's loopback: a recipe the gate cannot see through force-pushes to
// a remote on the loopback too. Behind the boundary the remote keeps its
// refs; the same session with the boundary off moves them, so the push is
// real and the gate alone does not stop it.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
)

func TestClaudeMakePushLeavesRemote(t *testing.T) {
	needTools(t, "git", "make", "python3")
	lb, _ := confinedBinaries(t)
	for _, tc := range []struct {
		name     string
		confined bool
	}{{"confined", true}, {"boundary off", false}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSupervised(t, agenttest.Bash("toolu_make", "make push"), agenttest.Say("Done."))
			s.lb = lb
			remote := claudePushWorld(t, s.Dir)
			before := refs(t, remote)
			if !tc.confined {
				s.Env = append(s.Env, "LASERBRAIN_CONFINE=off")
			}
			r := s.Run(t, s.lb, append([]string{"run", "--agent", "pusher", "--", s.Claude}, agenttest.ClaudeArgs("ship it", "Bash")...)...)
			if r.JSON == nil {
				t.Fatalf("claude printed no result (exit %d)\n%s\n%s", r.ExitCode, r.Stdout, r.Stderr)
			}
			tr := s.toolResult(t, "toolu_make")
			if strings.Contains(tr.Text, "laserbrain operator gate") {
				t.Fatalf("the gate refused make push itself, so this proves nothing of the boundary: %q", tr.Text)
			}
			if tc.confined && strings.Contains(r.Stderr, "not confined") {
				t.Fatalf("the run was not confined: %s", r.Stderr)
			}
			t.Logf("make push, as the model was shown it: %q", tr.Text)
			after := refs(t, remote)
			if tc.confined && after != before {
				t.Errorf("behind the boundary the remote's refs changed:\nbefore %s\nafter  %s\nthe tool's output: %q", before, after, tr.Text)
			}
			if !tc.confined && after == before {
				t.Errorf("with the boundary off the push did not land (the recipe proves nothing): %q", tr.Text)
			}
		})
	}
}

// claudePushWorld makes repo a git repository whose origin, a bare
// repository served by a git daemon on the loopback, has main at one
// commit while the work tree is a commit ahead; its Makefile's push
// recipe force-pushes through a program whose words the gate does not see
// (python reading the command from a JSON file). It returns the bare
// repository.
func claudePushWorld(t *testing.T, repo string) string {
	t.Helper()
	srv := t.TempDir()
	remote := filepath.Join(srv, "app.git")
	git := []string{"-c", "user.name=t", "-c", "user.email=t@t"}
	mustRun(t, "", nil, "git", "init", "-q", "--bare", remote)
	if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
		mustRun(t, repo, nil, "git", "init", "-q", "-b", "main")
	}
	writeFile(t, filepath.Join(repo, "README.md"), "the app\n")
	mustRun(t, repo, nil, "git", append(git, "add", "README.md")...)
	mustRun(t, repo, nil, "git", append(git, "commit", "-qm", "one")...)
	mustRun(t, repo, nil, "git", "remote", "add", "origin", gitDaemon(t, srv)+"/app.git")
	mustRun(t, repo, nil, "git", "push", "-q", "origin", "HEAD:main")
	writeFile(t, filepath.Join(repo, "two.txt"), "two\n")
	mustRun(t, repo, nil, "git", append(git, "add", "two.txt")...)
	mustRun(t, repo, nil, "git", append(git, "commit", "-qm", "two")...)
	writeFile(t, filepath.Join(repo, "ship.json"), `["git","-c","user.name=t","push","-f","origin","HEAD:main"]`+"\n")
	writeFile(t, filepath.Join(repo, "Makefile"), "push:\n\tpython3 -c 'import subprocess,json; subprocess.run(json.load(open(\"ship.json\")))'\n")
	return remote
}
