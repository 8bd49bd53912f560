package operator

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/operator/shell"
)

// Uncommitted work, proven with real git: each variant runs with bash in
// a copy of a repository whose main.go has a change nobody staged
// (marker LOSTMARK), staged.go a staged change, clean.go none, and an
// untracked file. A variant lost the work when LOSTMARK is in no file of
// the work tree and in no object git can reach from the index or a
// stash. It must then be asked attended and refused unattended; a
// variant that lost nothing goes ahead unattended and is never refused
// attended.
var worktreeCases = []string{
	"rm -f main.go",
	"rm main.go",
	"truncate -s 0 main.go",
	"truncate -s 1 main.go",
	"git diff --output=main.go",
	"git diff --output main.go",
	"git log -p --output=main.go",
	"git show --output=main.go",
	"mkdir -p sub && cd sub && rm -f ../main.go",
	// What arrives on a pipe: the paths are only the running shell's.
	"git ls-files | xargs git checkout --",
	"git diff --name-only | xargs git restore",
	"git diff --name-only | xargs -r git checkout",
	// Neighbours: nothing uncommitted is lost.
	"rm -f clean.go",
	"rm -f staged.go",
	"rm -f untracked.txt",
	"truncate -s 0 clean.go",
	"truncate -s +10 main.go",
	"git diff --output=changes.diff",
	"git diff --output=clean.go",
	"cp main.go main.go.bak && rm -f main.go",
	"git diff --name-only | xargs git add",
	"git ls-files | xargs wc -l",
}

// worktreeFailClosed are harmless variants refused on purpose, with why.
var worktreeFailClosed = map[string]string{
	"cp main.go main.go.bak && rm -f main.go": "the copy keeps the changes, but the gate does not follow content from file to file",
}

func TestUncommittedWorkOracle(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testenv.SkipOrFail(t, "git is not on PATH")
	}
	root := t.TempDir()
	tmpl := filepath.Join(root, "template")
	gitEnv := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
	run := func(dir, script string) string {
		c := exec.Command("bash", "-c", script)
		c.Dir, c.Env = dir, gitEnv
		out, err := c.CombinedOutput()
		if err != nil && dir == tmpl {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		return string(out)
	}
	if err := os.MkdirAll(tmpl, 0o755); err != nil {
		t.Fatal(err)
	}
	run(tmpl, `git init -q . && printf 'package main\n' > main.go && printf 'c\n' > clean.go && printf 's\n' > staged.go &&
		git add . && git -c user.name=o -c user.email=o@example.invalid commit -qm fixture &&
		printf 'LOSTMARK\n' >> main.go && printf 'STAGEDMARK\n' >> staged.go && git add staged.go && printf 'u\n' > untracked.txt`)
	if err := os.MkdirAll(filepath.Join(root, "v"), 0o755); err != nil {
		t.Fatal(err)
	}
	lost, harmless := 0, 0
	for i, cmd := range worktreeCases {
		dir := filepath.Join(root, "v", string(rune('a'+i)))
		if out, err := exec.Command("cp", "-a", tmpl, dir).CombinedOutput(); err != nil {
			t.Fatalf("copy: %v\n%s", err, out)
		}
		an := shell.Analyze(cmd, dir)
		att := Decide(an, Attended, RunState{Read: true}, Policy{Root: dir})
		una := Decide(an, Unattended, RunState{Read: true}, Policy{Root: dir})
		run(dir, cmd)
		kept := strings.Contains(run(dir, `grep -rah LOSTMARK --exclude-dir=.git . ; for o in $(git ls-files -s | awk '{print $2}') $(git stash list --format=%H); do git cat-file -p $o; done 2>/dev/null`), "LOSTMARK")
		switch {
		case !kept:
			lost++
			if una.Action != Deny || att.Action == Allow {
				t.Errorf("%q lost uncommitted work, but the gate says %s attended, %s unattended (%s)", cmd, att.Action, una.Action, an.Why)
			}
		case worktreeFailClosed[cmd] != "":
			harmless++
			if una.Action != Deny {
				t.Errorf("%q is refused on purpose (%s), but the gate says %s unattended", cmd, worktreeFailClosed[cmd], una.Action)
			}
		default:
			harmless++
			if una.Action != Allow || att.Action == Deny {
				t.Errorf("%q lost nothing uncommitted, but the gate says %s attended, %s unattended (%s)", cmd, att.Action, una.Action, an.Why)
			}
		}
	}
	t.Logf("uncommitted-work oracle: %d variants: %d lost work (all must be refused unattended), %d lost nothing", lost+harmless, lost, harmless)
	if lost == 0 || harmless == 0 {
		t.Errorf("the fixture proved nothing: %d lost, %d harmless", lost, harmless)
	}
}
