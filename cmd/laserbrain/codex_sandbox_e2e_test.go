package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/supercode/confine"
)

// laserbrain install codex, into a config that names no sandbox_mode,
// turns on Codex's own workspace-write sandbox (no laserbrain run, no
// kernel confinement of ours): the real Codex's shell, in forms the gate
// cannot see the target of (a symbolic link made on the spot, a variable
// name put together by eval), is refused at the sandbox (EROFS) writing
// into the laserbrain home, and the halt there is unchanged; a write in the
// workspace goes through. Codex runs our hooks outside its sandbox: they
// still record the session's events.
func TestCodexInstalledSandboxHoldsTheHome(t *testing.T) {
	cx := agenttest.Codex
	lb := laserbrainBinary(t)
	s := agenttest.NewAgent(t, cx,
		cx.Shell("call_link", `ln -s "$LASERBRAIN_HOME" lbh && echo '{}' > lbh/halts/writer.json`),
		cx.Shell("call_eval", `x=LASERBRAIN; y=_HOME; eval "d=\$$x$y"; echo '{}' > "$d/halts/writer.json"`),
		cx.Shell("call_plain", `echo a note > plain.txt`),
		agenttest.Say("Done."))
	a := &installedAgent{Session: s, lb: lb, lbHome: filepath.Join(s.Home, "laserbrain")}
	s.Env = append(s.Env, "LASERBRAIN_HOME="+a.lbHome)
	// The harness's config names danger-full-access; this user names none.
	cfg, err := os.ReadFile(s.UserConfig)
	if err != nil {
		t.Fatal(err)
	}
	user := strings.Replace(string(cfg), "sandbox_mode = \"danger-full-access\"\n", "", 1)
	if user == string(cfg) {
		t.Fatalf("the harness's config names no danger-full-access to take out:\n%s", cfg)
	}
	if err := os.WriteFile(s.UserConfig, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	halt := filepath.Join(a.lbHome, "halts", "writer.json")
	if err := os.MkdirAll(filepath.Dir(halt), 0o755); err != nil {
		t.Fatal(err)
	}
	const held = `{"agent":"writer","reason":"held by a person"}` + "\n"
	if err := os.WriteFile(halt, []byte(held), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := s.Install(t, lb); !strings.Contains(r.Stdout, "codex sandbox: workspace-write (laserbrain's") {
		t.Fatalf("install did not say it turned Codex's sandbox on:\n%s", r.Stdout)
	}

	r := s.Run(t, s.Bin, s.Args("work")...)
	if r.ExitCode != 0 {
		t.Fatalf("codex exit %d\n%s", r.ExitCode, clipOut(r.Stderr))
	}
	for _, id := range []string{"call_link", "call_eval"} {
		tr := a.Model.ResultAfter(t, id)
		if strings.Contains(tr.Text, "blocked by PreToolUse hook") || !strings.Contains(tr.Text, "Read-only file system") {
			t.Errorf("%s was not refused by Codex's sandbox: %q", id, tr.Text)
		}
	}
	if b, _ := os.ReadFile(halt); string(b) != held {
		t.Errorf("the agent's shell changed the halt: %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, "plain.txt")); err != nil || string(b) != "a note\n" {
		t.Errorf("the write in the workspace did not happen (the control): %v %q", err, a.Model.ResultAfter(t, "call_plain").Text)
	}
	// Our hooks, outside Codex's sandbox, wrote the store.
	rows := a.runs(t)
	if len(rows) != 1 {
		t.Fatalf("runs: %v (hook errors: %s)", rows, a.hookErrors())
	}
	kinds := map[string]int{}
	for _, e := range a.events(t, rows[0]["run"].(string)) {
		kinds[string(e.Kind)]++
	}
	if kinds["session"] == 0 || kinds["prompt"] == 0 || kinds["tool"] < 3 || kinds["stop"] == 0 {
		t.Errorf("the hooks did not record the session: %v (hook errors: %s)", kinds, a.hookErrors())
	}
	if e := a.hookErrors(); e != "" {
		t.Errorf("hook errors: %s", e)
	}
}

// laserbrain run -- codex, with a config that names no sandbox_mode (so
// Codex would put its shell under bubblewrap, which cannot start inside
// our confinement), still gives the agent a working shell: under the
// kernel's boundary the run's layer takes Codex's own sandbox off, and the
// boundary holds the laserbrain home instead (the halt there unchanged).
func TestCodexRunConfinedShellWorks(t *testing.T) {
	cx := agenttest.Codex
	lb := laserbrainBinary(t)
	s := agenttest.NewAgent(t, cx,
		cx.Shell("call_make", `echo made > made.txt`),
		cx.Shell("call_halt", `echo '{}' > "$LASERBRAIN_HOME/halts/runner.json"`),
		agenttest.Say("Done."))
	home := filepath.Join(s.Home, "laserbrain")
	s.Env = append(s.Env, "LASERBRAIN_HOME="+home)
	cfg, err := os.ReadFile(s.UserConfig)
	if err != nil {
		t.Fatal(err)
	}
	user := strings.Replace(string(cfg), "sandbox_mode = \"danger-full-access\"\n", "", 1)
	if user == string(cfg) {
		t.Fatalf("the harness's config names no danger-full-access to take out:\n%s", cfg)
	}
	if err := os.WriteFile(s.UserConfig, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	halt := filepath.Join(home, "halts", "runner.json")
	if err := os.MkdirAll(filepath.Dir(halt), 0o755); err != nil {
		t.Fatal(err)
	}
	const held = `{"agent":"runner","reason":"held by a person"}` + "\n"
	if err := os.WriteFile(halt, []byte(held), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := confine.Check(lb); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the kernel's confinement must work in CI: %v", err)
		}
		t.Skipf("SKIP (loudly): %v", err)
	}
	r := s.PromptVia(t, lb, []string{"run", "--agent", "runner", "--"}, "work")
	if strings.Contains(r.Stderr, "not confined by the kernel") {
		t.Fatalf("laserbrain run did not confine the agent: %s", r.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, "made.txt")); err != nil || string(b) != "made\n" {
		t.Fatalf("the agent's shell did not run a plain write (%v): %q", err, s.Model.ResultAfter(t, "call_make").Text)
	}
	if b, _ := os.ReadFile(halt); string(b) != held {
		t.Errorf("the agent's shell changed the halt: %q", b)
	}
}
