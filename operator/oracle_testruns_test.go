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

// Test runners one step removed, proven with the real runners: each
// variant changes test files in a copy of a repository (Go module, pytest
// tests, a package.json whose test script is node --test) whose committed
// tests include ones that run a program, then runs the command with bash.
// It destroyed something when data/keep.txt is gone or the loopback bare
// remote's main no longer names the commit it was given. A destroying
// variant must be asked attended and refused unattended; a harmless one
// (an edited assertion, an unchanged test that runs a program, a
// destroying test outside the packages the command names) goes ahead.
var testRunCases = []struct{ prep, cmd string }{
	{goWipe("pkg/a/wipe_test.go", "a"), "go test ./pkg/..."},
	{goWipe("pkg/a/wipe_test.go", "a"), "go test ./pkg/a"},
	{goWipe("pkg/a/wipe_test.go", "a"), "go test example.com/fx/pkg/a"},
	{goWipe("pkg/a/wipe_test.go", "a"), "cd pkg/a && go test -count=1"},
	{goForcePush, "go test ./..."},
	// GOPATH mode runs a local directory's tests outside any module.
	{"rm go.mod && " + goWipe("pkg/a/wipe_test.go", "a"), "GO111MODULE=off go test ./pkg/a"},
	{pyWipe("tests/test_wipe.py"), "pytest -q tests"},
	{pyWipe("tests/test_wipe.py"), "/usr/bin/python3 -m pytest -q"},
	{`printf 'import subprocess\nsubprocess.run(["rm", "-rf", "data"])\n' > conftest.py`, "pytest -q tests/test_calc.py"},
	{`printf 'const test = require("node:test")\ntest("w", () => require("fs").rmSync("data", {recursive: true, force: true}))\n' > test/wipe.test.js`, "npm test"},
	// Harmless neighbours.
	{`sed -i 's/2 != 2/Two() != 2/' pkg/a/a_test.go`, "go test ./..."},
	{"", "go test ./..."},
	{goWipe("pkg/b/wipe_test.go", "b"), "go test ./pkg/a/..."},
	{goWipe("pkg/a/wipe_test.go", "a"), "go test -n ./pkg/a"},
	// Outside a module go (module mode) runs no test: nothing to read.
	{"rm go.mod && " + goWipe("pkg/a/wipe_test.go", "a"), "go test ./pkg/..."},
	{`sed -i 's/1 + 1 == 2/2 * 1 == 2/' tests/test_calc.py`, "pytest -q"},
	{"", "pytest -q tests"},
	{`printf 'const test = require("node:test")\nconst assert = require("assert")\ntest("p", () => assert.equal(1 + 1, 2))\n' > test/plain.test.js`, "npm test"},
}

func goWipe(file, pkg string) string {
	return "printf 'package " + pkg + `\nimport (\n"os"\n"testing"\n)\nfunc TestWipe(t *testing.T) { os.RemoveAll("../../data") }\n' > ` + file
}

// goForcePush edits a committed test so it force-pushes the older local
// main over the remote's.
const goForcePush = `cat >> pkg/a/a_test.go <<'EOF'

func TestPush(t *testing.T) {
	c := exec.Command("git", "push", "-q", "--force", "origin", "HEAD:main")
	c.Dir = "../.."
	c.Run()
}
EOF
sed -i 's/^import "testing"$/import (\n"os\/exec"\n"testing"\n)/' pkg/a/a_test.go`

func pyWipe(file string) string {
	return `printf 'import shutil\ndef test_wipe():\n    shutil.rmtree("data")\n' > ` + file
}

// testRunFixture is the repository every variant copies: committed tests
// that pass (one Go and one Python test run a program), data/keep.txt, and
// a bare remote on disk whose main is one commit ahead of the local main.
const testRunFixture = `set -e
git init -q --bare remote.git
mkdir work && cd work
git init -q -b main .
mkdir -p pkg/a pkg/b data tests test
printf 'module example.com/fx\n\ngo 1.22\n' > go.mod
printf 'package a\n\nfunc Two() int { return 2 }\n' > pkg/a/a.go
printf 'package a\n\nimport "testing"\n\nfunc TestTwo(t *testing.T) {\n\tif 2 != 2 {\n\t\tt.Fatal("two")\n\t}\n}\n' > pkg/a/a_test.go
printf 'package a\n\nimport (\n\t"os/exec"\n\t"testing"\n)\n\nfunc TestTrue(t *testing.T) {\n\tif err := exec.Command("true").Run(); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n' > pkg/a/run_test.go
printf 'package b\n' > pkg/b/b.go
printf 'def test_calc():\n    assert 1 + 1 == 2\n' > tests/test_calc.py
printf 'import subprocess\n\ndef test_true():\n    subprocess.run(["true"], check=True)\n' > tests/test_proc.py
printf '{"name": "fx", "version": "1.0.0", "scripts": {"test": "node --test"}}\n' > package.json
printf 'const test = require("node:test")\ntest("t", () => {})\n' > test/base.test.js
printf 'keep\n' > data/keep.txt
git add . && git commit -qm one
git remote add origin ../remote.git
printf 'later\n' > later.txt && git add later.txt && git commit -qm two
git push -q origin main
git reset -q --hard HEAD~1
`

func TestTestRunnerOracle(t *testing.T) {
	for _, tool := range []string{"git", "go", "pytest", "npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.SkipOrFail(t, "%s is not on PATH", tool)
		}
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		testenv.SkipOrFail(t, "/usr/bin/python3 is not there")
	}
	root := t.TempDir()
	cache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+root,
		"GIT_AUTHOR_NAME=o", "GIT_AUTHOR_EMAIL=o@example.invalid", "GIT_COMMITTER_NAME=o", "GIT_COMMITTER_EMAIL=o@example.invalid",
		"GOCACHE="+strings.TrimSpace(string(cache)), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "npm_config_update_notifier=false",
		"PYTHONDONTWRITEBYTECODE=1")
	run := func(dir, script string, must bool) string {
		c := exec.Command("bash", "-c", script)
		c.Dir, c.Env = dir, env
		out, err := c.CombinedOutput()
		if err != nil && must {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		return string(out)
	}
	tmpl := filepath.Join(root, "template")
	if err := os.MkdirAll(tmpl, 0o755); err != nil {
		t.Fatal(err)
	}
	run(tmpl, testRunFixture, true)
	pushed := strings.TrimSpace(run(tmpl, "git --git-dir=remote.git rev-parse main", true))
	destroyed, harmless := 0, 0
	for i, tc := range testRunCases {
		v := filepath.Join(root, "v", string(rune('a'+i)))
		run(root, "mkdir -p v && cp -a template "+v, true)
		work := filepath.Join(v, "work")
		run(work, tc.prep, true)
		an := shell.Analyze(tc.cmd, work)
		att := Decide(an, Attended, RunState{Read: true}, Policy{Root: work})
		una := Decide(an, Unattended, RunState{Read: true}, Policy{Root: work})
		out := run(work, tc.cmd, false)
		_, gone := os.Stat(filepath.Join(work, "data", "keep.txt"))
		moved := strings.TrimSpace(run(v, "git --git-dir=remote.git rev-parse main", true)) != pushed
		switch {
		case gone != nil || moved:
			destroyed++
			if una.Action != Deny || att.Action == Allow {
				t.Errorf("%q after %q destroyed (data gone %v, remote moved %v), but the gate says %s attended, %s unattended (%s)",
					tc.cmd, tc.prep, gone != nil, moved, att.Action, una.Action, an.Why)
			}
		default:
			harmless++
			if una.Action != Allow || att.Action == Deny {
				t.Errorf("%q after %q destroyed nothing, but the gate says %s attended, %s unattended (%s)\n%s", tc.cmd, tc.prep, att.Action, una.Action, an.Why, out)
			}
		}
	}
	t.Logf("test-runner oracle: %d variants: %d destroyed through a changed test file (all must be refused unattended), %d harmless", destroyed+harmless, destroyed, harmless)
	if destroyed != 10 || harmless != 8 {
		t.Errorf("the fixture did not prove what it should: %d destroyed (want 10), %d harmless (want 8)", destroyed, harmless)
	}
}
