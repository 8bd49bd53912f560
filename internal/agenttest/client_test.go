package agenttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/install-agents.sh installs exactly the clients, versions and
// paths the runners look for: its table and Clients agree row by row, and
// its --path is each client's CachePath.
func TestInstallScriptPinsTheSameClients(t *testing.T) {
	script := filepath.Join("..", "..", "scripts", "install-agents.sh")
	out, err := exec.Command("bash", script, "--list").Output()
	if err != nil {
		t.Fatalf("install-agents.sh --list: %v", err)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	var want []string
	for _, c := range Clients {
		want = append(want, strings.Join([]string{c.Name, c.Package, c.Version, c.CacheDir, c.Bin}, " "))
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("install-agents.sh pins\n%s\nthe runners\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	cache := t.TempDir()
	cmd := exec.Command("bash", script, "--path")
	cmd.Env = append(os.Environ(), "LASERKIT_CACHE="+cache)
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("install-agents.sh --path: %v", err)
	}
	t.Setenv("LASERKIT_CACHE", cache)
	var paths []string
	for _, c := range Clients {
		paths = append(paths, c.CachePath())
	}
	if got := strings.TrimSpace(string(out)); got != strings.Join(paths, "\n") {
		t.Fatalf("--path printed\n%s\nthe runners look in\n%s", got, strings.Join(paths, "\n"))
	}
}

// An explicit binary variable wins over the cache; one that names nothing
// runnable is reported, never silently replaced.
func TestLocateHonoursTheClientVariable(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fake-codex")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LASERKIT_CODEX", bin)
	if p, why := Codex.Locate(); p != bin || why != "" {
		t.Fatalf("Locate = %q, %q; want %s", p, why, bin)
	}
	t.Setenv("LASERKIT_CODEX", filepath.Join(t.TempDir(), "absent"))
	if p, why := Codex.Locate(); p != "" || !strings.Contains(why, "LASERKIT_CODEX=") {
		t.Fatalf("Locate = %q, %q; want the variable named as the problem", p, why)
	}
	// With no variable, no cache and nothing on PATH: not found, with where it looked.
	t.Setenv("LASERKIT_CODEX", "")
	t.Setenv("LASERKIT_CACHE", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	if p, why := Codex.Locate(); p != "" || !strings.Contains(why, "nor on PATH") {
		t.Fatalf("Locate = %q, %q", p, why)
	}
}

// recorder is a testing.TB that notes Fatalf and Skipf instead of acting.
type recorder struct {
	testing.TB
	calls []string
}

func (r *recorder) Fatalf(f string, a ...any) {
	r.calls = append(r.calls, "fatal: "+fmt.Sprintf(f, a...))
}
func (r *recorder) Skipf(f string, a ...any) {
	r.calls = append(r.calls, "skip: "+fmt.Sprintf(f, a...))
}

// A missing client skips the test (with a banner on stderr), and fails it
// when CI=true.
func TestRequireSkipsLoudlyOrFailsUnderCI(t *testing.T) {
	t.Setenv("LASERKIT_CACHE", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	t.Setenv("LASERKIT_GEMINI", "")
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		GeminiCLI.Require(r)
		if len(r.calls) == 0 {
			t.Fatalf("CI=%q: neither skipped nor failed", ci)
		}
		first := r.calls[0]
		if ci == "true" && !strings.HasPrefix(first, "fatal: CI=true and the gemini CLI is missing") {
			t.Errorf("CI=true: %q; want a failure", r.calls)
		}
		if ci == "" && !strings.HasPrefix(first, "skip: no gemini CLI") {
			t.Errorf("CI unset: %q; want a skip", r.calls)
		}
	}
}
