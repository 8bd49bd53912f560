package main

import (
	"io"
	"net"
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
	dropSandboxMode(t, s)
	halt, held := holdHalt(t, a.lbHome, "writer")
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
	a.recordedOneSession(t, 3)
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
	dropSandboxMode(t, s)
	halt, held := holdHalt(t, home, "runner")
	if err := confine.Check(lb); err != nil {
		testenv.SkipOrFail(t, "the kernel cannot confine a process here: %v", err)
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

// With a bwrap first on PATH that has no --argv0 (Debian 12's bubblewrap
// 0.8.0) and a CODEX_HOME under the temporary directory, the real Codex's
// sandbox runs no command ("bwrap: execvp codex-linux-sandbox"): install
// leaves the sandbox on and says so, with the cause and what to do, and
// doctor reports it as a problem, naming the bwrap. With CODEX_HOME no
// longer under the temporary directory (a TMPDIR of its own beside HOME)
// the same sandbox runs the command, and doctor says so.
func TestCodexSandboxThatRunsNothingIsReported(t *testing.T) {
	codex := codexBinary(t)
	w := newDoctorWorld(t)
	w.env[1] = "PATH=" + w.bin + ":" + filepath.Dir(codex) + ":/usr/bin:/bin"
	bwrap := lookBwrap(t, "/usr/bin:/bin")
	if help, _ := exec.Command(bwrap, "--help").CombinedOutput(); strings.Contains(string(help), "--argv0") {
		t.Skipf("SKIP (loudly): %s has --argv0; Codex finds its helper without aliases here", bwrap)
	}
	// The world's HOME under the temporary directory, as the test's own is.
	env := w.env
	w.env = append(w.env[:len(w.env):len(w.env)], "TMPDIR="+os.TempDir(), "CODEX_HOME="+filepath.Join(w.home, ".codex"))
	out, errOut, code := w.run(t, w.lb, "install", "codex")
	if code != 0 {
		t.Fatalf("install codex: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "codex sandbox: workspace-write (laserbrain's") {
		t.Fatalf("install did not turn Codex's sandbox on:\n%s", out)
	}
	for _, want := range []string{"Codex's sandbox runs no command here", "execvp codex-linux-sandbox", bwrap + ", has no --argv0",
		"Refusing to create helper binaries under temporary dir", "to fix: run Codex with a CODEX_HOME outside the temporary directory"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("install's warning lacks %q:\n%s", want, errOut)
		}
	}
	r, code := w.doctor(t, w.lb)
	c, ok := problem(r, "codex", "client sandbox runs")
	if code != 1 || !ok || !strings.Contains(c.Detail, "execvp codex-linux-sandbox") || !strings.Contains(c.Detail, bwrap+", has no --argv0") ||
		!strings.Contains(c.Fix, "CODEX_HOME outside the temporary directory") {
		t.Fatalf("doctor with a sandbox that runs nothing: exit %d\n%s", code, describe(r))
	}
	if sb, ok := problem(r, "codex", "client sandbox"); ok {
		t.Errorf("the sandbox_mode itself is as install left it: %+v", sb)
	}

	// The other fix doctor names: a bwrap with --argv0 first on PATH (the
	// one Codex bundles), CODEX_HOME still under the temporary directory.
	if bundled, _ := filepath.Glob(filepath.Join(filepath.Dir(codex), "..", "@openai", "codex-linux-*", "vendor", "*", "codex-resources", "bwrap")); len(bundled) == 1 {
		dir := t.TempDir()
		if err := os.Symlink(bundled[0], filepath.Join(dir, "bwrap")); err != nil {
			t.Fatal(err)
		}
		saved := w.env
		w.env = append(w.env[:len(w.env):len(w.env)], "PATH="+dir+":"+w.bin+":"+filepath.Dir(codex)+":/usr/bin:/bin")
		if r, code := w.doctor(t, w.lb); code != 0 || !r.OK {
			t.Errorf("doctor with Codex's own bwrap first on PATH: exit %d\n%s", code, describe(r))
		}
		w.env = saved
	} else {
		t.Logf("Codex's bundled bwrap not found next to %s (%v): the PATH fix is not checked", codex, bundled)
	}

	// The control: the same config, CODEX_HOME not under TMPDIR.
	w.env = append(env[:len(env):len(env)], "CODEX_HOME="+filepath.Join(w.home, ".codex"))
	r, code = w.doctor(t, w.lb)
	if code != 0 || !r.OK {
		t.Fatalf("doctor with CODEX_HOME outside the temporary directory: exit %d\n%s", code, describe(r))
	}
	found := false
	for _, ch := range r.Checks {
		found = found || (ch.OK && ch.What == "client sandbox runs" && strings.Contains(ch.Detail, "workspace-write"))
	}
	if !found {
		t.Errorf("doctor did not say Codex's sandbox runs a command:\n%s", describe(r))
	}
}

// lookBwrap is the bwrap first on path, or a loud skip (a failure under
// CI=true, which installs Debian's bubblewrap).
func lookBwrap(t *testing.T, path string) string {
	t.Helper()
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, "bwrap")
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	// CI puts Codex's own bwrap on PATH (/usr/local/bin), not Debian's
	// 0.8.0, on purpose: this is the machine this test is about, not CI's.
	t.Skip("SKIP (loudly): no bwrap on " + path + " (Debian's bubblewrap 0.8.0 is what this test reads)")
	return ""
}

// dropSandboxMode takes the harness's sandbox_mode = "danger-full-access"
// out of the Codex session's user config, so that it names none.
func dropSandboxMode(t *testing.T, s *agenttest.Session) {
	t.Helper()
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
}

// laserbrain install codex also keeps the real Codex's shell from reading
// the places credentials are kept (the permissions profile it selects
// names each one "none"): a planted ssh key and npm token, read plainly and
// through a directory name put together at run time, come back "Permission
// denied", while a file beside them in the home is read. The control, the
// same session without install (Codex's own default sandbox), reads the key.
func TestCodexInstalledSandboxHidesCredentials(t *testing.T) {
	for _, installed := range []bool{true, false} {
		name := map[bool]string{true: "installed", false: "not installed"}[installed]
		t.Run(name, func(t *testing.T) {
			cx := agenttest.Codex
			lb := laserbrainBinary(t)
			s := agenttest.NewAgent(t, cx,
				cx.Shell("call_key", `cat "$HOME/.ssh/id_rsa"`),
				cx.Shell("call_built", `d=.ss; cat "$HOME/${d}h/id_rsa" "$HOME/.np""mrc"`),
				cx.Shell("call_beside", `cat "$HOME/notes.txt"`),
				agenttest.Say("Done."))
			s.Env = append(s.Env, "LASERBRAIN_HOME="+filepath.Join(s.Home, "laserbrain"))
			dropSandboxMode(t, s)
			writeFile(t, filepath.Join(s.Home, ".ssh", "id_rsa"), "KEY-MATERIAL-1\n")
			writeFile(t, filepath.Join(s.Home, ".npmrc"), "//registry.npmjs.org/:_authToken=TOKEN-MATERIAL-2\n")
			writeFile(t, filepath.Join(s.Home, "notes.txt"), "NOTES-3\n")
			if installed {
				s.Install(t, lb)
			}
			if r := s.Run(t, s.Bin, s.Args("work")...); r.ExitCode != 0 {
				t.Fatalf("codex exit %d\n%s", r.ExitCode, clipOut(r.Stderr))
			}
			key, built := s.Model.ResultAfter(t, "call_key").Text, s.Model.ResultAfter(t, "call_built").Text
			if beside := s.Model.ResultAfter(t, "call_beside").Text; !strings.Contains(beside, "NOTES-3") {
				t.Fatalf("a plain file in the home was not read (the sandbox reads nothing, so this proves nothing): %q", beside)
			}
			if !installed {
				if !strings.Contains(key, "KEY-MATERIAL-1") {
					t.Fatalf("without install Codex's shell did not read the key (the control): %q", key)
				}
				return
			}
			for id, text := range map[string]string{"call_key": key, "call_built": built} {
				if strings.Contains(text, "MATERIAL") || !strings.Contains(text, "Permission denied") || strings.Contains(text, "blocked by PreToolUse hook") {
					t.Errorf("%s: Codex's sandbox did not hide the credential: %q", id, text)
				}
			}
		})
	}
}

// laserbrain install codex --scope project gives Codex's sandbox the
// project policy's hosts: its permissions profile turns the network on
// through Codex's own proxy, for those hosts alone. The real Codex's shell
// reaches a listener on 127.0.0.1 the policy names, while one on 127.0.0.2
// stays blocked; the control, a policy naming no host, keeps the network
// off and reaches neither.
func TestCodexInstalledSandboxAllowsThePolicysHosts(t *testing.T) {
	listen := func(addr, word string) string {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Skipf("SKIP (loudly): cannot listen on %s: %v", addr, err)
		}
		srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, word) })}}
		srv.Start()
		t.Cleanup(srv.Close)
		return strings.TrimPrefix(srv.URL, "http://")
	}
	allowed, other := listen("127.0.0.1:0", "REACHED-ALLOWED"), listen("127.0.0.2:0", "REACHED-OTHER")
	for _, named := range []bool{true, false} {
		cx := agenttest.Codex
		lb := laserbrainBinary(t)
		s := agenttest.NewAgent(t, cx,
			cx.Shell("call_allowed", "curl -sS --noproxy '' --max-time 10 http://"+allowed+"/ ; echo curl-done"),
			cx.Shell("call_other", "curl -sS --noproxy '' --max-time 10 http://"+other+"/ ; echo curl-done"),
			agenttest.Say("Done."))
		s.Env = append(s.Env, "LASERBRAIN_HOME="+filepath.Join(s.Home, "laserbrain"))
		dropSandboxMode(t, s)
		connect := `[]`
		if named {
			connect = `[{"id": "api", "reason": "the service under test", "endpoint": "` + allowed + `"}]`
		}
		writeFile(t, filepath.Join(s.Dir, ".laserbrain", "policy.json"), `{"version": 1, "boundary": {"connect": `+connect+`}}`+"\n")
		s.Install(t, lb, "--scope", "project")
		if r := s.Run(t, s.Bin, s.Args("work")...); r.ExitCode != 0 {
			t.Fatalf("codex exit %d\n%s", r.ExitCode, clipOut(r.Stderr))
		}
		got, out := s.Model.ResultAfter(t, "call_allowed").Text, s.Model.ResultAfter(t, "call_other").Text
		t.Logf("named=%v: %q; %q", named, got, out)
		switch {
		case strings.Contains(out, "REACHED-OTHER"):
			t.Errorf("named=%v: the sandbox reached a host the policy does not name: %q", named, out)
		case named && !strings.Contains(got, "REACHED-ALLOWED"):
			t.Errorf("the sandbox did not reach the policy's host: %q", got)
		case !named && (strings.Contains(got, "REACHED-ALLOWED") || !strings.Contains(got, "curl-done")):
			t.Errorf("with no host named the sandbox reached the listener anyway, or the call did not run (the control proves nothing): %q", got)
		}
	}
}
