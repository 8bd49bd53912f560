package confine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/testenv"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == HelperArg {
		os.Exit(int(cli.CodeOf(Main(os.Args[2:]))))
	}
	if len(os.Args) > 1 && os.Args[1] == "where" {
		fmt.Print(Where())
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(exe); err != nil {
		testenv.SkipOrFail(t, "the kernel cannot confine a process here: %v", err)
	}
	return exe
}

// confined runs script under sh in a tree confined by spec and returns
// its combined output.
func confined(t *testing.T, spec Spec, script string, env ...string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = filepath.Dir(spec.ReadOnly[0])
	cmd.Env = append(os.Environ(), env...)
	if _, err := Wrap(cmd, self(t), spec); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	return out.String()
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every way a same-user process has of changing a protected file, tried
// from inside the tree: each fails at the kernel, and the file is as it
// was; the writable place takes writes.
func TestConfinementHolds(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	home := filepath.Join(root, "user", ".config", "laserbrain")
	halt := filepath.Join(home, "fleet", "halts", "active", "h1")
	write(t, halt, "h1\n")
	write(t, filepath.Join(work, "f"), "x")
	outside := filepath.Join(root, "outside")
	write(t, filepath.Join(outside, "g"), "y")
	spec := Spec{ReadOnly: []string{home}, Writable: []string{work, filepath.Join(root, "user")}, Root: os.Geteuid() == 0}
	spec.Pin = pins(spec.ReadOnly, spec.Writable)
	if want := filepath.Join(root, "user", ".config"); len(spec.Pin) != 1 || spec.Pin[0] != want {
		t.Fatalf("pins %v, want [%s] (the directory above the home, in a writable place)", spec.Pin, want)
	}
	steps := []struct{ name, sh, want string }{
		{"write", "echo forged > " + halt, "Read-only file system"},
		{"write by a relative path", "echo forged > " + strings.TrimPrefix(halt, filepath.Dir(home)+"/"), "Read-only file system"},
		{"remove", "rm -f " + halt, "Read-only file system"},
		{"truncate", "truncate -s0 " + halt, "Read-only file system"},
		{"rename the home", "mv " + home + " " + home + ".x", "busy"},
		{"rename the directory above it", "mv " + filepath.Dir(home) + " " + filepath.Dir(home) + ".x", "busy"},
		{"unmount", "umount " + home, ""},
		{"remount", "mount -o remount,rw " + home, ""},
		{"write outside the writable places", "echo z > " + filepath.Join(outside, "g"), "ermission denied"},
		{"the parent's root", "ls /proc/$PPID_OUTER/root/", "ermission denied"},
	}
	for _, s := range steps {
		out := confined(t, spec, s.sh+"; echo status=$?", fmt.Sprintf("PPID_OUTER=%d", os.Getpid()))
		if strings.Contains(out, "status=0") {
			t.Errorf("%s: succeeded inside the confinement: %s", s.name, out)
		}
		if s.want != "" && !strings.Contains(out, s.want) {
			t.Errorf("%s: %q, want the kernel's %q", s.name, out, s.want)
		}
	}
	if b, err := os.ReadFile(halt); err != nil || string(b) != "h1\n" {
		t.Errorf("the halt is %q (%v) after the attempts", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "g")); string(b) != "y" {
		t.Errorf("the file outside was changed: %q", b)
	}
	out := confined(t, spec, "echo ok > "+filepath.Join(work, "new")+" && echo written")
	if !strings.Contains(out, "written") {
		t.Errorf("a write into the writable place failed: %s", out)
	}
}

// Where finds the confinement from inside however the process was made
// (a fresh environment, a double fork, a new session), and nothing
// outside.
func TestWhere(t *testing.T) {
	exe := self(t)
	if w := Where(); w != "" {
		t.Fatalf("the test itself is inside: %s", w)
	}
	run := filepath.Join(t.TempDir(), Marker+"x")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := Spec{ReadOnly: []string{run}, Writable: []string{os.TempDir()}, Root: os.Geteuid() == 0}
	for _, how := range []string{
		exe + " where",
		"env -i " + exe + " where",
		// A double fork in a new session: the poll has a deadline (10 s).
		"f=" + filepath.Join(t.TempDir(), "where") + "; setsid sh -c '(" + exe + " where > $0.tmp && mv $0.tmp $0 &)' $f; " +
			"i=0; while [ ! -e $f ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; cat $f",
	} {
		out := confined(t, spec, how)
		if !strings.Contains(out, "confinement") {
			t.Errorf("%s: %q, want the confinement named", how, out)
		}
	}
}

// A directory Plan made to hold an absent settings path, and the pin above
// it, can be gone by the time the setup step runs: another run on the
// project that found them made removes them when its agent is done. The
// setup step makes both again, binds them, and the held one is read-only.
func TestEnsuredDirsMadeAgain(t *testing.T) {
	work := t.TempDir()
	write(t, filepath.Join(work, "f"), "x")
	hooks := filepath.Join(work, ".github", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := Spec{ReadOnly: []string{hooks}, Writable: []string{work}, Ensure: []string{hooks}, Root: os.Geteuid() == 0}
	spec.Pin = pins(spec.ReadOnly, spec.Writable)
	if want := filepath.Join(work, ".github"); len(spec.Pin) != 1 || spec.Pin[0] != want {
		t.Fatalf("pins %v, want [%s]", spec.Pin, want)
	}
	ensurePins(&spec, work) // as Plan does
	// What the other run's Release does: both removed, deepest first.
	for _, d := range []string{hooks, filepath.Dir(hooks)} {
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("/bin/sh", "-c", "touch .github/hooks/x; echo status=$?; mv .github .github.x; echo moved=$?")
	cmd.Dir = work
	if _, err := Wrap(cmd, self(t), spec); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the confined command did not run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "status=1") || !strings.Contains(string(out), "Read-only file system") {
		t.Errorf("a write into the held directory made again: %s (want the kernel's refusal)", out)
	}
	if strings.Contains(string(out), "moved=0") {
		t.Errorf("the pin above the held directory was renamed: %s", out)
	}
	if _, err := os.Stat(hooks); err != nil {
		t.Errorf("the held directory is not there after the run: %v", err)
	}
}

// A run that finds another run's placeholders in the repository (the
// directory standing for an absent .mcp.json, a directory of hooks) makes
// them again at its setup step, the pins above them too: the other run
// removes them when its agent is done.
func TestFoundPlaceholdersEnsured(t *testing.T) {
	work := t.TempDir()
	mcp, hooks := filepath.Join(work, ".mcp.json"), filepath.Join(work, ".github", "hooks")
	for _, d := range []string{mcp, hooks} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := &planner{o: Options{Create: true}, repo: work, writable: []string{work}}
	p.hold(mcp, "Claude Code's project MCP servers")
	p.hold(hooks, "Copilot CLI's project hooks")
	p.spec.Pin = pins([]string{mcp, hooks}, p.writable)
	ensurePins(&p.spec, work)
	for _, d := range []string{mcp, hooks, filepath.Dir(hooks)} {
		if !slices.Contains(p.spec.Ensure, d) {
			t.Errorf("%s is not made again at the setup step (ensure %v)", d, p.spec.Ensure)
		}
	}
}

// The setup step makes again only what another run on the project made
// and removes: a held directory and the pins inside the repository above
// it. The repository itself, gone from a writable directory by the time
// the setup step runs (moved or removed by its owner), is not made again,
// empty, for the agent to work in: the setup fails, naming it.
func TestMissingRepositoryNotMadeAgain(t *testing.T) {
	work := t.TempDir()
	outer := filepath.Join(work, "outer")
	repo := filepath.Join(outer, "repo")
	hooks := filepath.Join(repo, ".github", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Carve: []string{work}, ReadOnly: []string{hooks}, Writable: []string{outer, repo}, Ensure: []string{hooks}, Root: os.Geteuid() == 0}
	spec.Pin = pins(spec.ReadOnly, spec.Writable)
	if !slices.Contains(spec.Pin, repo) {
		t.Fatalf("pins %v: the repository, in a writable directory, is one", spec.Pin)
	}
	ensurePins(&spec, repo)
	if want := []string{hooks, filepath.Dir(hooks)}; !slices.Equal(spec.Ensure, want) {
		t.Fatalf("ensured %v, want %v", spec.Ensure, want)
	}
	if err := os.RemoveAll(repo); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "ls -a outer/repo")
	cmd.Dir = work
	if _, err := Wrap(cmd, self(t), spec); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), repo) {
		t.Errorf("the setup step went on without the repository: %v\n%s", err, out)
	}
	if _, err := os.Stat(repo); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the repository was made again: %v", err)
	}
}
