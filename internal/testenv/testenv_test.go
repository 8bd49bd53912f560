package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "FALSE": false, "true": true, "1": true, "yes": true} {
		t.Setenv("CI", v)
		if got := CI(); got != want {
			t.Errorf("CI=%q: CI() = %v, want %v", v, got, want)
		}
	}
}

// env is the environment for a child process: this one's without CI and
// the skip file, plus extra.
func env(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, SkipsEnv+"=") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// makeTest runs the real `make test` on the skipper package (testdata),
// with no PostgreSQL to start and CI as given.
func makeTest(t *testing.T, ci string, extra ...string) (string, error) {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	goBin := LookPath(t, "go")
	LookPath(t, "make")
	cmd := exec.Command("make", "--no-print-directory", "-C", root, "test",
		"PKGS=./internal/testenv/testdata/skipper", "GO="+goBin)
	cmd.Env = env(append([]string{"CI=" + ci, "LASERKIT_NO_PG=1", "LASERKIT_REQUIRE_PG=0"}, extra...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// make test ends with one line per reason a test was skipped, however go
// test summed the packages up ("ok" for the skipper package).
func TestMakeTestEndsWithTheSkips(t *testing.T) {
	out, err := makeTest(t, "false")
	if err != nil {
		t.Fatalf("make test: %v\n%s", err, out)
	}
	if !strings.Contains(out, "ok  \tgithub.com/laserkit/laserkit/internal/testenv/testdata/skipper") {
		t.Fatalf("go test did not report the package ok:\n%s", out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	want := []string{
		"--- SKIPPED for want of what they need (under CI=true these fail instead):",
		"SKIPPED 2 tests in ./internal/testenv/testdata/skipper: the frobnicator is not on PATH (apt-get install frobnicator)",
		"SKIPPED 1 test in ./internal/testenv/testdata/skipper: no server",
	}
	if len(lines) < len(want) {
		t.Fatalf("make test printed %d lines:\n%s", len(lines), out)
	}
	if got := lines[len(lines)-len(want):]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("make test ends with\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A failing run still ends with the skips, and make test fails.
func TestMakeTestFailsAndStillListsTheSkips(t *testing.T) {
	out, err := makeTest(t, "false", "SKIPPER_FAIL=1")
	if err == nil {
		t.Fatalf("make test passed with a failing test:\n%s", out)
	}
	if !strings.Contains(out, "failing as asked") {
		t.Fatalf("the failure is not in the output:\n%s", out)
	}
	i := strings.LastIndex(out, "SKIPPED 2 tests in ./internal/testenv/testdata/skipper: the frobnicator")
	if i < 0 || i < strings.LastIndex(out, "FAIL") {
		t.Errorf("the skips are not listed after go test's last line:\n%s", out)
	}
}

// Under CI the same tests fail, and nothing is recorded as skipped.
func TestUnderCITheSkipsFail(t *testing.T) {
	out, err := makeTest(t, "true")
	if err == nil {
		t.Fatalf("make test passed under CI=true with a missing tool:\n%s", out)
	}
	if !strings.Contains(out, "the frobnicator is not on PATH (apt-get install frobnicator) (CI=true: CI must provide it)") {
		t.Errorf("the failure does not say what is missing:\n%s", out)
	}
	if !strings.Contains(out, "--- no test was skipped for want of a tool, a server or the reference material\n") {
		t.Errorf("a skip was recorded under CI:\n%s", out)
	}
}

// SkipPartOrFail records and goes on outside CI; Condition answers a
// testscript without t.
func TestRecordLines(t *testing.T) {
	file := filepath.Join(t.TempDir(), "skips")
	t.Setenv(SkipsEnv, file)
	t.Setenv("CI", "")
	SkipPartOrFail(t, "no\tfifo here:\n%s", "EPERM")
	if ok, err := Condition(false, "python3 is not on PATH"); ok || err != nil {
		t.Errorf("Condition(false) = %v, %v; want false, nil outside CI", ok, err)
	}
	if ok, err := Condition(true, "unused"); !ok || err != nil {
		t.Errorf("Condition(true) = %v, %v", ok, err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := "no fifo here: EPERM\t./internal/testenv\tTestRecordLines\n" +
		"python3 is not on PATH\t./internal/testenv\ttestscript\n"
	if string(b) != want {
		t.Errorf("recorded\n%q\nwant\n%q", b, want)
	}
	t.Setenv("CI", "true")
	if ok, err := Condition(false, "python3 is not on PATH"); ok || err == nil || !strings.Contains(err.Error(), "python3 is not on PATH") {
		t.Errorf("Condition(false) under CI = %v, %v; want an error naming it", ok, err)
	}
}

// The shared folder is found beside the root, or beside the main checkout
// of a worktree, or where LASERKIT_SHARED says.
func TestSharedPath(t *testing.T) {
	top := t.TempDir()
	mainRoot := filepath.Join(top, "main")
	wt := filepath.Join(top, "wt", "x")
	for _, d := range []string{filepath.Join(top, "shared", "seeds"), filepath.Join(mainRoot, ".git", "worktrees", "x"), filepath.Join(wt, "pkg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(mainRoot, "go.mod"), filepath.Join(wt, "go.mod")} {
		if err := os.WriteFile(f, []byte("module x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(mainRoot, ".git", "worktrees", "x")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(SharedEnv, "")
	want := filepath.Join(top, "shared", "seeds")
	for _, dir := range []string{mainRoot, filepath.Join(wt, "pkg")} {
		t.Chdir(dir)
		if got, err := SharedPath("seeds"); err != nil || got != want {
			t.Errorf("from %s: SharedPath = %q, %v; want %q", dir, got, err, want)
		}
	}
	if _, err := SharedPath("reference"); err == nil || !strings.Contains(err.Error(), SharedEnv) {
		t.Errorf("a missing part: %v; want an error naming %s", err, SharedEnv)
	}
	t.Setenv(SharedEnv, filepath.Join(top, "elsewhere"))
	if _, err := SharedPath("seeds"); err == nil {
		t.Errorf("%s points elsewhere and the seeds were found", SharedEnv)
	}
}
