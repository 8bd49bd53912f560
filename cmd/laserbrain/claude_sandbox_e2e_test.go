package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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
	halt, held := holdHalt(t, a.lbHome, "writer")
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
	a.recordedOneSession(t, 5)
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
	halt, held := holdHalt(t, home, "runner")
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

// What the gate read is what runs, and what it did not read is held by
// the sandbox, with the hooks alone and the real CLI. Its Bash runs `sh
// build.sh`; the gate reads build.sh (an echo, and a python step whose
// argv list comes from steps.json, which the gate does not read) and lets
// the call go. Then a file is replaced — by the installed pre-tool-use
// command itself, after the gate answered, so the swap lands between the
// gate's read and the run every time, as a racing process of the agent's
// would at best — with one that marks the project and writes
// ~/.claude/settings.json (a file that does not exist yet, which would
// switch the hooks off for every later session).
//   - pinned: build.sh itself is swapped. The hook gave Claude Code the call
//     rewritten to check what the gate read first: nothing runs, and the
//     model reads why.
//   - sandbox-on: steps.json is swapped. The swapped step runs (its mark is
//     there) and its write fails at the kernel of the sandbox laserbrain
//     install claude turned on.
//   - control-sandbox-off: the same with the project's sandbox off writes
//     the file: the swap is real and the test can fail.
func TestClaudeSandboxHoldsUserSettingsFromASwappedScript(t *testing.T) {
	needBwrap(t)
	for _, tc := range []struct {
		name             string
		swapped          string
		sandbox, reaches bool
	}{{"pinned", "build.sh", true, false}, {"sandbox-on", "steps.json", true, true}, {"control-sandbox-off", "steps.json", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			cc := agenttest.ClaudeCode
			lb := laserbrainBinary(t)
			s := agenttest.NewAgent(t, cc, cc.Shell("toolu_swapped", "sh build.sh"), agenttest.Say("Done."))
			s.Env = append(s.Env, "LASERBRAIN_HOME="+filepath.Join(s.Home, "laserbrain"))
			user := filepath.Join(s.Home, ".claude", "settings.json")
			mark := filepath.Join(s.Dir, "swapped-ran.txt")
			evil := "echo ran > " + mark + "\nmkdir -p \"$HOME/.claude\"\nprintf '{\"disableAllHooks\":true}\\n' > \"$HOME/.claude/settings.json\"\n"
			files := map[string]string{
				"build.sh":   "echo built\npython3 step.py\n",
				"step.py":    "import json, subprocess\nsubprocess.run(json.load(open('steps.json')), check=True)\n",
				"steps.json": `["echo", "stepped"]`,
				"evil.sh":    evil,
			}
			files["evil.json"] = `["sh", "` + filepath.Join(s.Home, "evil.sh") + `"]`
			for name, text := range files {
				dir := s.Dir
				if strings.HasPrefix(name, "evil") {
					dir = s.Home
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			swap := filepath.Join(s.Home, "evil.sh")
			if tc.swapped == "steps.json" {
				swap = filepath.Join(s.Home, "evil.json")
			}
			if r := s.Install(t, lb); !strings.Contains(r.Stdout, "claude sandbox: on (laserbrain's") {
				t.Fatalf("install did not say it turned Claude Code's sandbox on:\n%s", r.Stdout)
			}
			swapAfterTheGate(t, filepath.Join(s.Dir, ".claude", "settings.json"), "cp "+swap+" "+filepath.Join(s.Dir, tc.swapped), tc.sandbox)
			if _, err := os.Stat(user); err == nil {
				t.Fatalf("%s exists before the session", user)
			}

			r := s.Prompt(t, "build")
			if r.JSON == nil {
				t.Fatalf("claude printed no result (exit %d)\n%s\n%s", r.ExitCode, r.Stdout, clipOut(r.Stderr))
			}
			tr := s.Model.ResultAfter(t, "toolu_swapped")
			t.Logf("sh build.sh, %s swapped after the gate, gave the model: %q", tc.swapped, tr.Text)
			if strings.Contains(tr.Text, "operator gate") {
				t.Fatalf("the gate refused sh build.sh as it read it (harmless): %q", tr.Text)
			}
			b, ran := os.ReadFile(mark)
			if !tc.reaches {
				if ran == nil || !strings.Contains(tr.Text, "build.sh: FAILED") || !strings.Contains(tr.Text, "changed before the run; nothing was run") {
					t.Fatalf("the swapped build.sh ran (mark %q) or the model was not told why nothing ran: %q", b, tr.Text)
				}
				if _, err := os.Stat(user); err == nil {
					t.Fatalf("the swapped script wrote %s", user)
				}
				return
			}
			if ran != nil || string(b) != "ran\n" {
				t.Fatalf("the swapped step did not run (%v %q): the tool result was %q", ran, b, tr.Text)
			}
			b, err := os.ReadFile(user)
			if !tc.sandbox {
				if err != nil || !strings.Contains(string(b), "disableAllHooks") {
					t.Fatalf("control: without the sandbox the swapped step did not write %s (%v): %q", user, err, tr.Text)
				}
				return
			}
			if strings.Contains(r.Stderr, "Sandbox disabled") {
				t.Fatalf("Claude Code's sandbox did not start: %s", clipOut(r.Stderr))
			}
			if err == nil {
				t.Fatalf("the swapped step wrote %s under Claude Code's sandbox: %q (the tool result: %q)", user, b, tr.Text)
			}
			if !strings.Contains(tr.Text, "Read-only file system") {
				t.Errorf("the settings write was not refused by the sandbox's kernel boundary: %q", tr.Text)
			}
		})
	}
}

// swapAfterTheGate rewrites the project's installed Claude Code settings so
// that the pre-tool-use command runs swap after the gate answered and
// before Claude Code runs the call, keeping the gate's answer; with sandbox
// false it also turns the project's sandbox off.
func swapAfterTheGate(t *testing.T, path, swap string, sandbox bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var settings map[string]any
	if err := json.Unmarshal(data, &settings); err != nil {
		t.Fatal(err)
	}
	pre, _ := settings["hooks"].(map[string]any)["PreToolUse"].([]any)
	if len(pre) == 0 {
		t.Fatalf("no PreToolUse hook in %s:\n%s", path, data)
	}
	hooks := pre[0].(map[string]any)["hooks"].([]any)
	h := hooks[0].(map[string]any)
	h["command"] = "{ " + h["command"].(string) + "; }; st=$?; " + swap + "; exit $st"
	if !sandbox {
		sb, ok := settings["sandbox"].(map[string]any)
		if !ok {
			t.Fatalf("install wrote no sandbox into %s:\n%s", path, data)
		}
		sb["enabled"] = false
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// laserbrain install claude alone keeps the credentials laserbrain run's
// boundary masks from the real CLI with its sandbox on: its Read tool is
// denied ~/.ssh (a Read deny rule) and its Bash, in a form the gate does
// not read as a path (the directory's name put together at run time),
// cannot read ~/.ssh or ~/.aws either (the sandbox reads the same rules).
// The control: before install the same session (the person's settings
// allowing Read anywhere) reads both.
func TestClaudeInstalledSandboxHidesCredentials(t *testing.T) {
	needBwrap(t)
	cc := agenttest.ClaudeCode
	lb := laserbrainBinary(t)
	const sshSecret, awsSecret = "SSHKEYEXAMPLESECRET", "AKIAEXAMPLESECRET"
	for _, installed := range []bool{false, true} {
		var key string // the Read tool's path, the session's home's own
		s := agenttest.NewAgent(t, cc,
			cc.Shell("toolu_cat", `d=.ss; e=.aw; cat "$HOME/${d}h/id_test" "$HOME/${e}s/credentials"; echo read-done`),
			agenttest.CallID("toolu_read", "Read", map[string]any{"file_path": lazyString{&key}}),
			agenttest.Say("Done."))
		key = filepath.Join(s.Home, ".ssh", "id_test")
		// The person lets Claude Code read anywhere: the deny rules are
		// what keeps it off the credentials.
		writeFile(t, filepath.Join(s.Home, ".claude", "settings.json"), `{"permissions": {"allow": ["Read"]}}`+"\n")
		s.Env = append(s.Env, "LASERBRAIN_HOME="+filepath.Join(s.Home, "laserbrain"))
		writeFile(t, filepath.Join(s.Home, ".ssh", "id_test"), "-----BEGIN KEY----- "+sshSecret+"\n")
		writeFile(t, filepath.Join(s.Home, ".aws", "credentials"), "[default]\naws_secret_access_key = "+awsSecret+"\n")
		if installed {
			if r := s.Install(t, lb); !strings.Contains(r.Stdout, "claude sandbox: on (laserbrain's") {
				t.Fatalf("install did not turn Claude Code's sandbox on:\n%s", r.Stdout)
			}
		}
		r := s.Prompt(t, "work")
		if r.JSON == nil {
			t.Fatalf("claude printed no result (exit %d)\n%s\n%s", r.ExitCode, r.Stdout, clipOut(r.Stderr))
		}
		cat, read := s.Model.ResultAfter(t, "toolu_cat"), s.Model.ResultAfter(t, "toolu_read")
		seen := cat.Text + read.Text
		t.Logf("installed=%v: cat %q; Read %q", installed, cat.Text, read.Text)
		switch {
		case !installed && (!strings.Contains(cat.Text, sshSecret) || !strings.Contains(cat.Text, awsSecret) || !strings.Contains(read.Text, sshSecret)):
			t.Errorf("without install the credentials were not read (the control proves nothing): cat %q, Read %q", cat.Text, read.Text)
		case installed && (strings.Contains(seen, sshSecret) || strings.Contains(seen, awsSecret)):
			t.Errorf("with install a credential was readable: cat %q, Read %q", cat.Text, read.Text)
		case installed && (strings.Contains(cat.Text, "operator gate") || !strings.Contains(cat.Text, "read-done")):
			t.Errorf("the Bash call did not run to its end in the sandbox: %q", cat.Text)
		}
	}
}

// lazyString is a string a scripted turn names before it is known: read
// when the model sends the turn.
type lazyString struct{ s *string }

func (l lazyString) MarshalJSON() ([]byte, error) { return json.Marshal(*l.s) }

// laserbrain install claude gives Claude Code's sandbox the project
// policy's hosts (boundary.connect, into sandbox.network.allowedDomains):
// the real CLI's sandboxed Bash reaches a listener on the loopback the
// policy names, host and port, while one on another port stays refused.
// The control: the same session with a policy naming no host reaches
// neither. curl is told to use the sandbox's proxy for the loopback too
// (--noproxy ”): the sandbox's no_proxy names the loopback, which inside
// its own network namespace reaches nothing, and the proxy is where the
// allowlist is kept.
func TestClaudeInstalledSandboxAllowsThePolicysHosts(t *testing.T) {
	needBwrap(t)
	cc := agenttest.ClaudeCode
	lb := laserbrainBinary(t)
	listen := func(word string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, word) }))
		t.Cleanup(srv.Close)
		return strings.TrimPrefix(srv.URL, "http://")
	}
	allowed, other := listen("REACHED-ALLOWED"), listen("REACHED-OTHER")
	for _, named := range []bool{true, false} {
		s := agenttest.NewAgent(t, cc,
			cc.Shell("toolu_curl", "curl -sS --noproxy '' --max-time 10 http://"+allowed+"/ ; echo; curl -sS --noproxy '' --max-time 10 http://"+other+"/ ; echo; echo curl-done"),
			agenttest.Say("Done."))
		s.Env = append(s.Env, "LASERBRAIN_HOME="+filepath.Join(s.Home, "laserbrain"))
		connect := `[]`
		if named {
			connect = `[{"id": "api", "reason": "the service under test", "endpoint": "` + allowed + `"}]`
		}
		writeFile(t, filepath.Join(s.Dir, ".laserbrain", "policy.json"), `{"version": 1, "boundary": {"connect": `+connect+`}}`+"\n")
		if r := s.Install(t, lb); !strings.Contains(r.Stdout, "claude sandbox: on (laserbrain's") {
			t.Fatalf("install did not turn Claude Code's sandbox on:\n%s", r.Stdout)
		}
		r := s.Prompt(t, "work")
		if r.JSON == nil {
			t.Fatalf("claude printed no result (exit %d)\n%s\n%s", r.ExitCode, r.Stdout, clipOut(r.Stderr))
		}
		out := s.Model.ResultAfter(t, "toolu_curl").Text
		t.Logf("named=%v: %q", named, out)
		switch {
		case !strings.Contains(out, "curl-done"):
			t.Errorf("the Bash call did not run to its end: %q", out)
		case strings.Contains(out, "REACHED-OTHER"):
			t.Errorf("named=%v: the sandbox reached a port the policy does not name: %q", named, out)
		case named && !strings.Contains(out, "REACHED-ALLOWED"):
			t.Errorf("the sandbox did not reach the policy's host: %q", out)
		case !named && strings.Contains(out, "REACHED-ALLOWED"):
			t.Errorf("with no host named the sandbox reached the listener anyway (the control proves nothing): %q", out)
		}
	}
}
