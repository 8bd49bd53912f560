package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/proctest"
	"github.com/laserkit/laserkit/internal/testenv"
)

// A test file the agent wrote (or changed) and then staged and committed
// is still code the agent wrote: the index and HEAD hold it, but the
// session's first checkpoint does not. Through the real installed hook
// (Claude Code's payloads, nobody there), go test of a package whose test
// the session wrote, or changed, and committed is refused and names the
// file; real go test then shows what it would have done (data/keep.txt
// gone). A session that starts with the files already committed finds
// them the project's own.
func TestStagedTestCodeIsStillChanged(t *testing.T) {
	testenv.LookPath(t, "git")
	testenv.LookPath(t, "go")
	lb := laserbrainBinary(t)
	root := t.TempDir()
	repo, home := filepath.Join(root, "repo"), filepath.Join(root, "home")
	env := append(os.Environ(), "HOME="+home, "LASERBRAIN_HOME="+filepath.Join(root, "lbhome"), "LASERBRAIN_STORE=", "LASERBRAIN_RUN=",
		"XDG_CONFIG_HOME=", "CLAUDE_CODE_SESSION_ATTENDED=0", "CI=", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GOCACHE="+goCache(t), "GOTOOLCHAIN=local", "GOFLAGS=", "GOENV=off", "GOPROXY=off", "GO111MODULE=")
	sh := func(script string) {
		t.Helper()
		c := exec.Command("bash", "-c", "set -e\n"+script)
		c.Dir, c.Env = repo, env
		if out, errOut, code := proctest.Run(t, c); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", script, code, out, errOut)
		}
	}
	for _, d := range []string{repo, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sh(`git init -q -b main
mkdir -p pkg/a pkg/b data
printf 'module example.com/fx\n\ngo 1.22\n' > go.mod
printf 'package a\n\nfunc Two() int { return 2 }\n' > pkg/a/a.go
printf 'package a\n\nimport "testing"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal("two")\n\t}\n}\n' > pkg/a/a_test.go
printf 'package b\n' > pkg/b/b.go
printf 'package b\n\nimport "testing"\n\nfunc TestB(t *testing.T) {}\n' > pkg/b/b_test.go
echo keep > data/keep.txt
git add -A && git commit -qm start`)
	pre := func(session, id, tool string, input map[string]string) (string, int) {
		t.Helper()
		ev, err := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": session, "tool_use_id": id,
			"cwd": repo, "tool_name": tool, "tool_input": input})
		if err != nil {
			t.Fatal(err)
		}
		c := exec.Command(lb, "hook", "pre-tool-use")
		c.Dir, c.Env, c.Stdin = repo, env, strings.NewReader(string(ev))
		out, errOut, code := proctest.Run(t, c)
		return out + errOut, code
	}
	wipe := filepath.Join(repo, "pkg", "a", "wipe_test.go")

	// The session's first call writes the test; it then stages and commits it.
	if out, code := pre("s1", "toolu_1", "Write", map[string]string{"file_path": wipe, "content": "…"}); code != 0 {
		t.Fatalf("the Write of a test file: exit %d\n%s", code, out)
	}
	sh(`printf 'package a\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestWipe(t *testing.T) { os.RemoveAll("../../data") }\n' > pkg/a/wipe_test.go
printf 'package b\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestB(t *testing.T) { os.RemoveAll("../../data") }\n' > pkg/b/b_test.go
git add pkg/a/wipe_test.go pkg/b/b_test.go && git commit -qm tests`)
	out, code := pre("s1", "toolu_2", "Bash", map[string]string{"command": "go test ./pkg/a"})
	if code != 2 || !strings.Contains(out, "wipe_test.go") {
		t.Errorf("go test of a test file the session wrote and committed: exit %d, want 2 naming wipe_test.go\n%s", code, out)
	}

	// A test the session found, changed and committed.
	if out, code := pre("s1", "toolu_2b", "Bash", map[string]string{"command": "go test ./pkg/b"}); code != 2 || !strings.Contains(out, "b_test.go") {
		t.Errorf("go test of a test file the session changed and committed: exit %d, want 2 naming b_test.go\n%s", code, out)
	}

	// A session that found the file committed: the project's own.
	if out, code := pre("s2", "toolu_3", "Bash", map[string]string{"command": "go test ./pkg/a"}); code != 0 || strings.Contains(out, "wipe_test.go") {
		t.Errorf("go test in a session that started with the file committed: exit %d, want 0\n%s", code, out)
	}

	// The oracle: what the refused call would have done.
	sh(`go test ./pkg/a > /dev/null`)
	if _, err := os.Stat(filepath.Join(repo, "data", "keep.txt")); !os.IsNotExist(err) {
		t.Fatalf("the oracle: go test ./pkg/a left data/keep.txt (%v); the fixture's test destroys nothing", err)
	}
}
