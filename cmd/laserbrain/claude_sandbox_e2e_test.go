package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/supercode/confine"
)

// needBwrap skips (loudly; fails under CI=true) where Claude Code's
// sandbox cannot start: it needs bubblewrap and socat on PATH.
func needBwrap(t *testing.T) {
	t.Helper()
	for _, p := range []string{"bwrap", "socat"} {
		if _, err := exec.LookPath(p); err != nil {
			testenv.SkipOrFail(t, "%s is not on PATH: Claude Code's sandbox cannot start (bubblewrap 0.9 or newer, and socat)", p)
		}
	}
}

// laserbrain install claude alone (no laserbrain run, no kernel
// confinement of ours) turns on Claude Code's own sandbox for Bash: the
// real CLI's Bash, in forms the gate cannot see the target of (a symbolic
// link made on the spot, a variable name put together by eval), fails at
// the kernel writing the laserbrain home's halt, and so does a call that
// asks to run outside the sandbox (dangerouslyDisableSandbox, ignored as
// the settings say); a write into the project's own .laserbrain/ (a
// protected path inside the writable project, denied by the rules the
// sandbox reads) fails too. The halt is unchanged, a write in the project
// goes through, and our hooks, which Claude Code runs outside its
// sandbox, record the session.
func TestClaudeInstalledSandboxHoldsTheHome(t *testing.T) {
	needBwrap(t)
	cc := agenttest.ClaudeCode
	lb := laserbrainBinary(t)
	s := agenttest.NewAgent(t, cc,
		cc.Shell("toolu_link", `ln -s "$LASERBRAIN_HOME" lbh && echo '{}' > lbh/halts/writer.json`),
		cc.Shell("toolu_eval", `x=LASERBRAIN; y=_HOME; eval "d=\$$x$y"; echo '{}' > "$d/halts/writer.json"`),
		agenttest.CallID("toolu_out", "Bash", map[string]any{"description": "scripted", "dangerouslyDisableSandbox": true,
			"command": `x=LASERBRAIN; y=_HOME; eval "d=\$$x$y"; echo '{}' > "$d/halts/writer.json"`}),
		cc.Shell("toolu_policy", `ln -s "$PWD/.laserbrain" lbp && echo '{}' > lbp/policy.json`),
		cc.Shell("toolu_plain", `echo a note > plain.txt`),
		agenttest.Say("Done."))
	a := &installedAgent{Session: s, lb: lb, lbHome: filepath.Join(s.Home, "laserbrain")}
	s.Env = append(s.Env, "LASERBRAIN_HOME="+a.lbHome)
	halt := filepath.Join(a.lbHome, "halts", "writer.json")
	if err := os.MkdirAll(filepath.Dir(halt), 0o755); err != nil {
		t.Fatal(err)
	}
	const held = `{"agent":"writer","reason":"held by a person"}` + "\n"
	if err := os.WriteFile(halt, []byte(held), 0o644); err != nil {
		t.Fatal(err)
	}
	// The project's own .laserbrain/ (where its policy would go).
	if err := os.Mkdir(filepath.Join(s.Dir, ".laserbrain"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := s.Install(t, lb); !strings.Contains(r.Stdout, "claude sandbox: on (laserbrain's") {
		t.Fatalf("install did not say it turned Claude Code's sandbox on:\n%s", r.Stdout)
	}

	r := s.Prompt(t, "work")
	if r.JSON == nil {
		t.Fatalf("claude printed no result (exit %d)\n%s\n%s", r.ExitCode, r.Stdout, clipOut(r.Stderr))
	}
	if strings.Contains(r.Stderr, "Sandbox disabled") {
		t.Fatalf("Claude Code's sandbox did not start: %s", clipOut(r.Stderr))
	}
	for _, id := range []string{"toolu_link", "toolu_eval", "toolu_out", "toolu_policy"} {
		tr := a.Model.ResultAfter(t, id)
		if strings.Contains(tr.Text, "operator gate") || !strings.Contains(tr.Text, "Read-only file system") {
			t.Errorf("%s was not refused by Claude Code's sandbox: %q", id, tr.Text)
		}
	}
	if b, _ := os.ReadFile(halt); string(b) != held {
		t.Errorf("the agent's Bash changed the halt: %q", b)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, ".laserbrain", "policy.json")); err == nil {
		t.Errorf("the agent's Bash wrote the project's policy")
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, "plain.txt")); err != nil || string(b) != "a note\n" {
		t.Errorf("the write in the project did not happen (the control): %v %q", err, a.Model.ResultAfter(t, "toolu_plain").Text)
	}
	// Our hooks, outside Claude Code's sandbox, wrote the store.
	rows := a.runs(t)
	if len(rows) != 1 {
		t.Fatalf("runs: %v (hook errors: %s)", rows, a.hookErrors())
	}
	kinds := map[string]int{}
	for _, e := range a.events(t, rows[0]["run"].(string)) {
		kinds[string(e.Kind)]++
	}
	if kinds["session"] == 0 || kinds["prompt"] == 0 || kinds["tool"] < 5 || kinds["stop"] == 0 {
		t.Errorf("the hooks did not record the session: %v (hook errors: %s)", kinds, a.hookErrors())
	}
	if e := a.hookErrors(); e != "" {
		t.Errorf("hook errors: %s", e)
	}
}

// Without allowUnsandboxedCommands false the same Bash call that asks to
// run outside the sandbox is not sandboxed: Claude Code takes it to its
// permission flow instead (refused here, in print mode, "Run outside of
// the sandbox"; a person at the prompt, or a mode that skips prompts,
// would let it out). That is why install closes it.
func TestClaudeSandboxOpenLetsTheModelAskOut(t *testing.T) {
	needBwrap(t)
	cc := agenttest.ClaudeCode
	lb := laserbrainBinary(t)
	s := agenttest.NewAgent(t, cc,
		agenttest.CallID("toolu_out", "Bash", map[string]any{"description": "scripted", "dangerouslyDisableSandbox": true,
			"command": `echo out > "$HOME/outside.txt"`}),
		agenttest.Say("Done."))
	s.Env = append(s.Env, "LASERBRAIN_HOME="+filepath.Join(s.Home, "laserbrain"))
	user := filepath.Join(s.Home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte(`{"sandbox": {"enabled": true}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := s.Install(t, lb); !strings.Contains(r.Stdout, "the model may still ask to run a command outside it") {
		t.Fatalf("install did not say the user's sandbox lets the model ask out:\n%s", r.Stdout)
	}
	if b, _ := os.ReadFile(user); string(b) != `{"sandbox": {"enabled": true}}`+"\n" {
		t.Fatalf("install changed the user's own sandbox: %s", b)
	}
	s.Prompt(t, "work")
	tr := s.Model.ResultAfter(t, "toolu_out")
	if strings.Contains(tr.Text, "Read-only file system") || !strings.Contains(tr.Text, "outside of the sandbox") {
		t.Errorf("the call that asked out was not taken out of the sandbox: %q", tr.Text)
	}
}

// Under laserbrain run the kernel's confinement holds the agent, and
// Claude Code's own sandbox cannot start inside it (bubblewrap's mounts are
// forbidden there; as root it cannot map uid 0 either). With the sandbox
// install turned on in the project's settings, the run's settings layer
// turns it off for that one invocation: no "Sandbox disabled" warning, the
// agent's Bash works, and the kernel holds the halt.
func TestClaudeRunConfinedTurnsItsSandboxOff(t *testing.T) {
	needBwrap(t)
	cc := agenttest.ClaudeCode
	lb := laserbrainBinary(t)
	s := agenttest.NewAgent(t, cc,
		cc.Shell("toolu_make", `echo made > made.txt`),
		cc.Shell("toolu_halt", `x=LASERBRAIN; y=_HOME; eval "d=\$$x$y"; echo '{}' > "$d/halts/runner.json"`),
		agenttest.Say("Done."))
	home := filepath.Join(s.Home, "laserbrain")
	s.Env = append(s.Env, "LASERBRAIN_HOME="+home)
	halt := filepath.Join(home, "halts", "runner.json")
	if err := os.MkdirAll(filepath.Dir(halt), 0o755); err != nil {
		t.Fatal(err)
	}
	const held = `{"agent":"runner","reason":"held by a person"}` + "\n"
	if err := os.WriteFile(halt, []byte(held), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := confine.Check(lb); err != nil {
		testenv.SkipOrFail(t, "the kernel cannot confine a process here: %v", err)
	}
	s.Install(t, lb)
	r := s.PromptVia(t, lb, []string{"run", "--agent", "runner", "--"}, "work")
	if strings.Contains(r.Stderr, "not confined by the kernel") {
		t.Fatalf("laserbrain run did not confine the agent: %s", clipOut(r.Stderr))
	}
	if strings.Contains(r.Stderr, "Sandbox disabled") {
		t.Errorf("Claude Code tried its own sandbox inside the confinement: %s", clipOut(r.Stderr))
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, "made.txt")); err != nil || string(b) != "made\n" {
		t.Fatalf("the agent's Bash did not run a plain write (%v): %q", err, s.Model.ResultAfter(t, "toolu_make").Text)
	}
	if b, _ := os.ReadFile(halt); string(b) != held {
		t.Errorf("the agent's Bash changed the halt: %q", b)
	}
	if tr := s.Model.ResultAfter(t, "toolu_halt"); !strings.Contains(tr.Text, "Read-only file system") {
		t.Errorf("the halt write was not refused by the kernel: %q", tr.Text)
	}
}
