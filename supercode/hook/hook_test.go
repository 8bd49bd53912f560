package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/fleet/fleettest"
)

// runHandler is a handler of run r1 (agent a, fleet f), registered in a
// home of its own, with the variable name set to value; and its fleet's
// store.
func runHandler(t *testing.T, name, value string) (*Handler, fleet.Store) {
	t.Helper()
	t.Setenv("LASERBRAIN_HOME", t.TempDir())
	h, _ := newHandler(t, map[string]string{name: value, agentrun.EnvRun: "r1", agentrun.EnvFleet: "f"})
	st, err := h.Tracker.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(context.Background(), fleet.Run{ID: "r1", Agent: "a", Fleet: "f", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return h, st
}

func newHandler(t testing.TB, env map[string]string) (*Handler, string) {
	home := t.TempDir()
	if env == nil {
		env = map[string]string{}
	}
	sup := &agentrun.Tracker{
		Getenv:     func(k string) string { return env[k] },
		BindingDir: filepath.Join(home, "clients"),
		Stores:     homeStores(home).Open,
	}
	t.Cleanup(func() { sup.Close() })
	return &Handler{Tracker: sup, Format: "exit"}, home
}

// homeStores are the stores of a test's home.
func homeStores(home string) agentrun.StoreFuncs {
	return agentrun.StoreFuncs{
		Fleet: func() (fleet.Store, error) { return fleet.OpenLocal(filepath.Join(home, "fleet")) },
		Runs: func() (laserbrain.Store, error) {
			return localstore.Open(localstore.Paths{Home: home, Config: filepath.Join(home, "config")})
		},
	}
}

func payload(t testing.TB, v map[string]any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pre(tool string, input map[string]any, cwd string) map[string]any {
	return map[string]any{"hook_event_name": "PreToolUse", "session_id": "s-1", "cwd": cwd, "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1"}
}

// Shell tools of other agent CLIs, and unknown tools carrying a command,
// are gated like Bash; a tool known to read, with a "command" in its input,
// is not.
func TestShellToolsOfEveryShape(t *testing.T) {
	h, _ := newHandler(t, nil)
	ctx := context.Background()
	cwd := t.TempDir()
	for _, c := range []struct {
		tool  string
		input map[string]any
		exit  int
	}{
		{"Bash", map[string]any{"command": "git push --force origin main"}, 2},
		{"run_shell_command", map[string]any{"command": "npm publish"}, 2},
		{"run_terminal_command", map[string]any{"command": "rm -rf /srv/data"}, 2},
		{"shell", map[string]any{"command": []string{"bash", "-lc", "git push --force origin main"}}, 2},
		{"mcp__other__exec", map[string]any{"command": "git push --force origin main"}, 2},
		{"SomeNewTool", map[string]any{"command": "npm publish"}, 2},
		{"Read", map[string]any{"command": "git push --force origin main"}, 0},
		{"Bash", map[string]any{"command": "ls -la"}, 0},
		{"shell", map[string]any{"command": []string{"ls", "-la"}}, 0},
		{"Bash", map[string]any{"command": 7}, 2},
		{"shell", map[string]any{"cmd": 7}, 2},
		{"shell", map[string]any{"description": "no command"}, 2},
		// Codex's exec_command carries cmd (it went through unread before
		// the seam).
		{"exec_command", map[string]any{"cmd": "git push --force origin main"}, 2},
		{"exec_command", map[string]any{"cmd": []string{"bash", "-lc", "git push --force origin main"}}, 2},
		{"exec_command", map[string]any{"cmd": "ls"}, 0},
	} {
		a := h.Handle(ctx, PreToolUse, payload(t, pre(c.tool, c.input, cwd)))
		if a.Exit != c.exit {
			t.Errorf("%s %v: exit %d (%s), want %d", c.tool, c.input, a.Exit, a.Stderr, c.exit)
		}
	}
}

// Writes into what supervision relies on are refused; others pass.
func TestProtectedPaths(t *testing.T) {
	lbHome := t.TempDir()
	t.Setenv("LASERBRAIN_HOME", lbHome)
	h, _ := newHandler(t, nil)
	ctx := context.Background()
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(cwd, ".git"), filepath.Join(cwd, "innocent")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool, field, path string
		denied            bool
	}{
		{"Write", "file_path", ".git/config", true},
		{"Edit", "file_path", filepath.Join(cwd, ".git", "hooks", "pre-commit"), true},
		{"Write", "file_path", "innocent/config", true},
		{"MultiEdit", "file_path", ".claude/settings.json", true},
		{"Write", "file_path", ".claude/settings.local.json", true},
		{"Write", "file_path", ".ponder/session.json", true},
		{"NotebookEdit", "notebook_path", filepath.Join(lbHome, "runs", "x.json"), true},
		{"write_file", "file_path", ".git/HEAD", true},
		// Every client's hook settings: an agent that rewrote them could
		// take its own hooks out.
		{"write_file", "file_path", ".gemini/settings.json", true},
		{"edit", "file_path", ".qwen/settings.json", true},
		{"apply_patch", "input", "*** Begin Patch\n*** Update File: .codex/hooks.json\n*** End Patch", true},
		{"write", "filePath", ".opencode/plugin/laserbrain.js", true},
		{"write_to_file", "path", ".clinerules/hooks/PreToolUse", true},
		{"editor", "path", ".clinerules/hooks/PreToolUse", true},
		{"create", "path", ".github/hooks/laserbrain.json", true},
		{"Write", "file_path", ".mcp.json", true},
		// The clients' system-wide settings, which as root would switch
		// every user's hooks off.
		{"Write", "file_path", "/etc/claude-code/managed-settings.json", true},
		{"Write", "file_path", "/etc/claude-code/managed-settings.d/10-hooks.json", true},
		{"Write", "file_path", "/Library/Application Support/ClaudeCode/managed-mcp.json", true},
		{"write_file", "file_path", "/etc/gemini-cli/system-defaults.json", true},
		{"edit", "file_path", "/etc/qwen-code/settings.json", true},
		{"apply_patch", "input", "*** Begin Patch\n*** Add File: /etc/codex/requirements.toml\n*** End Patch", true},
		{"write", "filePath", "/etc/opencode/opencode.json", true},
		{"Write", "file_path", "/etc/claude-code-notes/x.md", false},
		{"Write", "file_path", "src/main.go", false},
		{"Write", "file_path", ".claude/agents/x.md", true}, // all of .claude, not only its settings
		{"Write", "file_path", ".claude-notes/x.md", false},
		{"create", "path", ".github/workflows/ci.yml", false},
		{"write_file", "file_path", ".gemini/GEMINI.md", false},
		{"Write", "file_path", ".gitignore", false},
	} {
		a := h.Handle(ctx, PreToolUse, payload(t, pre(c.tool, map[string]any{c.field: c.path}, cwd)))
		if (a.Exit == 2) != c.denied {
			t.Errorf("%s %s: exit %d %q; denied want %v", c.tool, c.path, a.Exit, a.Stderr, c.denied)
		}
		if c.denied && !strings.Contains(a.Stderr, "protected") {
			t.Errorf("%s %s: reason %q does not say why", c.tool, c.path, a.Stderr)
		}
	}
}

// A payload for another event is refused by every hook; the gate fails
// closed (2), the observers pass (0).
func TestWrongEventRefused(t *testing.T) {
	h, _ := newHandler(t, nil)
	ctx := context.Background()
	p := payload(t, map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}})
	if a := h.Handle(ctx, PreToolUse, p); a.Exit != 2 || !strings.Contains(a.Stderr, `this is the PreToolUse hook, but the event is "PostToolUse"`) {
		t.Errorf("pre-tool-use: %+v", a)
	}
	p = payload(t, map[string]any{"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash"})
	if a := h.Handle(ctx, Stop, p); a.Exit != 0 || !strings.Contains(a.Stderr, "this is the Stop hook") {
		t.Errorf("stop: %+v", a)
	}
}

// An internal failure (the store cannot be opened) denies in the gate and
// is passed over by an observer; neither exits 1.
func TestInternalErrorsNeverFailOpen(t *testing.T) {
	ctx := context.Background()
	broken := &agentrun.Tracker{
		Getenv: func(k string) string { return map[string]string{agentrun.EnvRun: "r1"}[k] },
		Stores: agentrun.StoreFuncs{Fleet: func() (fleet.Store, error) { return nil, errors.New("disk on fire") }}.Open,
	}
	h := &Handler{Tracker: broken}
	a := h.Handle(ctx, PreToolUse, payload(t, pre("Bash", map[string]any{"command": "npm publish"}, t.TempDir())))
	if a.Exit != 2 || !strings.HasPrefix(a.Stderr, "guard error: fleet store: disk on fire") {
		t.Errorf("gate with a broken store: %+v", a)
	}
	// Even a harmless command reads whether its agent is halted: a halt
	// that cannot be read is not assumed away.
	if a := h.Handle(ctx, PreToolUse, payload(t, pre("Bash", map[string]any{"command": "ls"}, t.TempDir()))); a.Exit != 2 || !strings.Contains(a.Stderr, "disk on fire") {
		t.Errorf("a harmless command with a broken store: %+v", a)
	}
	t.Setenv("LASERBRAIN_HOME", t.TempDir())
	post := map[string]any{"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "tool_response": map[string]any{}}
	if a := h.Handle(ctx, PostToolUse, payload(t, post)); a.Exit != 0 || !strings.Contains(a.Stderr, "disk on fire") {
		t.Errorf("post-tool-use with a broken store: %+v", a)
	}
}

// post-tool-use records the call once (two hook layers firing for one call
// count it once), and laserbrain's own tools are not evidence.
func TestPostToolUseRecordsOnce(t *testing.T) {
	h, _ := newHandler(t, map[string]string{agentrun.EnvRun: "r1", agentrun.EnvFleet: "f"})
	ctx := context.Background()
	post := func(tool, id string) map[string]any {
		return map[string]any{"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": tool, "tool_use_id": id,
			"tool_input": map[string]any{"command": "make"}, "tool_response": map[string]any{"stdout": "ok", "interrupted": false}}
	}
	for i := 0; i < 2; i++ {
		if a := h.Handle(ctx, PostToolUse, payload(t, post("Bash", "toolu_9"))); a.Exit != 0 || a.Stderr != "" {
			t.Fatalf("post-tool-use: %+v", a)
		}
	}
	h.Handle(ctx, PostToolUse, payload(t, post("mcp__laserbrain__check_state", "toolu_10")))
	fail := map[string]any{"hook_event_name": "PostToolUseFailure", "session_id": "s", "tool_name": "Bash", "tool_use_id": "toolu_11",
		"tool_input": map[string]any{"command": "false"}, "error": "Exit code 1"}
	h.Handle(ctx, PostToolUseFailure, payload(t, fail))
	st, _ := h.Tracker.Fleet()
	evs, err := st.Events(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, e := range evs {
		if e.Kind == fleet.KindTool {
			tools = append(tools, e.Name+":"+map[bool]string{true: "ok", false: "fail"}[e.OK == laserbrain.OKTrue])
		}
	}
	if strings.Join(tools, " ") != "Bash:ok Bash:fail" {
		t.Fatalf("tool events = %v", tools)
	}
}

// FuzzHookPayload: whatever arrives on stdin, no hook panics, pre-tool-use
// exits only 0 or 2, and every other hook exits 0.
func FuzzHookPayload(f *testing.F) {
	seeds := []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push --force"}}`,
		`{"tool_name":"Write","tool_input":{"file_path":".git/x"},"cwd":"/tmp"}`,
		`{"tool_name":"shell","tool_input":{"command":["bash","-lc","rm -rf /"]}}`,
		`{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"interrupted":true}}`,
		`{"session_id":"../../etc","hook_event_name":"Stop","stop_hook_active":true}`,
		`{"tool_name":null}`, `[]`, `"x"`, ``, `{`, `{"tool_input":"str"}`, `{"session_id":7}`,
		`{"prompt":"` + strings.Repeat("a", 3000) + `"}`,
	}
	for _, s := range seeds {
		for i := 0; i < 7; i++ {
			f.Add(i, s)
		}
	}
	h, _ := newHandler(f, map[string]string{agentrun.EnvRun: "fz", agentrun.EnvFleet: "f"})
	events := []client.EventName{PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SessionStart, SessionEnd}
	f.Fuzz(func(t *testing.T, i int, in string) {
		if i < 0 {
			i = -i
		}
		ev := events[i%len(events)]
		a := h.Handle(context.Background(), ev, []byte(in))
		if strings.Contains(a.Stderr, "internal:") {
			t.Fatalf("%s panicked on %q: %s", ev, in, a.Stderr)
		}
		if ev == PreToolUse && a.Exit != 0 && a.Exit != 2 || ev != PreToolUse && a.Exit != 0 {
			t.Fatalf("%s exited %d on %q", ev, a.Exit, in)
		}
	})
}

// TestShellWritesProtected: a shell command writing, truncating, moving
// onto or deleting what supervision relies on gets the answer a Write of
// the same file gets — refused unless a person authorized it — and the
// fleet's records are refused even then. Reading them, and
// git's own commands, pass.
func TestShellWritesProtected(t *testing.T) {
	lbHome := t.TempDir()
	t.Setenv("LASERBRAIN_HOME", lbHome)
	t.Setenv("LB_TEST_HOME", lbHome)
	h, home := newHandler(t, nil)
	stores := homeStores(home)
	stores.Fleet = func() (fleet.Store, error) { return fleet.OpenLocal(filepath.Join(lbHome, "fleet")) }
	h.Tracker.Stores = stores.Open
	ctx := context.Background()
	cwd := t.TempDir()
	for _, d := range []string{".git/hooks", ".claude", "src"} {
		if err := os.MkdirAll(filepath.Join(cwd, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	halts := filepath.Join(lbHome, "fleet", "halts", "active")
	const (
		pass = iota
		authorizable
		never
		asks
	)
	for _, c := range []struct {
		command string
		want    int
	}{
		{`echo {} > .claude/settings.json`, authorizable},
		{`echo '{"disableAllHooks":true}' | sudo tee /etc/claude-code/managed-settings.json`, authorizable},
		{`mkdir -p /etc/gemini-cli && cp off.json /etc/gemini-cli/settings.json`, authorizable},
		{`sed -i s/laserbrain/x/ .claude/settings.json`, authorizable},
		{`tee .git/hooks/pre-push < /dev/null`, authorizable},
		{`echo x > .git/config`, authorizable},
		{`echo 0000 > .git/refs/heads/main`, authorizable},
		{`cp /tmp/hook .git/hooks/pre-commit`, authorizable},
		{`ln -sf /tmp/evil .git/hooks/pre-push`, authorizable},
		{`install -m 755 hook .git/hooks/post-merge`, authorizable},
		{`truncate -s 0 .claude/settings.local.json`, authorizable},
		{`rm .mcp.json`, authorizable},
		{`dd if=/dev/null of=.mcp.json`, authorizable},
		{`mv .claude/settings.json /tmp/`, authorizable},
		{`echo x > ` + filepath.Join(lbHome, "runs", "x.json"), authorizable},
		{`python3 -c "open('.git/hooks/pre-push','w')"`, asks}, // not cleared: the gate cannot see where code writes
		{`rm -f ` + filepath.Join(halts, "x"), never},
		{`rm -f $LB_TEST_HOME/fleet/halts/active/*`, never},
		{`rm -f "${LASERBRAIN_HOME}/fleet/halts/active/x"`, never},
		{`echo '{}' > ` + filepath.Join(lbHome, "fleet", "authorizations", "a.json"), never},
		{`cd ` + lbHome + ` && : > fleet/journal/x.jsonl`, never},
		{`mv ` + filepath.Join(lbHome, "fleet") + ` /tmp/gone`, never},
		{`find ` + halts + ` -type f -exec rm {} +`, never},
		{`cat .git/config .claude/settings.json`, pass},
		{`git config user.name x && git commit -m x`, pass},
		{`grep -r laserbrain .claude/settings.json > /tmp/out`, pass},
		{`echo x > src/main.go && ls ` + halts, pass},
	} {
		a := h.Handle(ctx, PreToolUse, payload(t, pre("Bash", map[string]any{"command": c.command}, cwd)))
		got := pass
		switch {
		case a.Exit == 2 && strings.Contains(a.Stderr, "not something a person authorizes"):
			got = never
		case a.Exit == 2 && strings.Contains(a.Stderr, "protected"):
			got = authorizable
		case a.Exit == 0 && strings.Contains(a.Stdout, `"permissionDecision":"ask"`) && strings.Contains(a.Stdout, "may write a protected file"):
			got = asks
		case a.Exit != 0 || a.Stdout != "":
			t.Errorf("%s: exit %d %q %q", c.command, a.Exit, a.Stdout, a.Stderr)
			continue
		}
		if got != c.want {
			t.Errorf("%s: exit %d %q; got class %d, want %d", c.command, a.Exit, a.Stderr, got, c.want)
		}
	}
	// A person's authorization of exactly the command lets it through;
	// none lets an agent change the records, nor a Write of them.
	st, _ := h.Tracker.Fleet()
	fid, err := fleet.ID(ctx, cwd)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, action := range []string{`echo {} > .claude/settings.json`, `rm -f ` + filepath.Join(halts, "x"), "write " + filepath.Join(halts, "x")} {
		if err := fleettest.Grant(ctx, st, fleet.Authorization{ID: fmt.Sprint("au", i), Fleet: fid, Action: action, Created: now, Expires: now.Add(time.Hour), Uses: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if a := h.Handle(ctx, PreToolUse, payload(t, pre("Bash", map[string]any{"command": `echo {} > .claude/settings.json`}, cwd))); a.Exit != 0 || !strings.Contains(a.Stdout, `"permissionDecision":"allow"`) {
		t.Errorf("an authorized write of the settings: %+v", a)
	}
	if a := h.Handle(ctx, PreToolUse, payload(t, pre("Bash", map[string]any{"command": `rm -f ` + filepath.Join(halts, "x")}, cwd))); a.Exit != 2 {
		t.Errorf("an authorization let an agent delete a halt: %+v", a)
	}
	if a := h.Handle(ctx, PreToolUse, payload(t, pre("Write", map[string]any{"file_path": filepath.Join(halts, "x")}, cwd))); a.Exit != 2 || !strings.Contains(a.Stderr, "not something a person authorizes") {
		t.Errorf("an authorization let an agent Write a halt: %+v", a)
	}
}

// TestPersonCommandsRefused: laserbrain's person-only commands run through
// a shell tool are refused whoever is there, even when a person authorized
// exactly that command, and the refusal is recorded on the caller's run —
// opened for a session that never had a SessionStart.
func TestPersonCommandsRefused(t *testing.T) {
	for _, env := range []map[string]string{
		{"CLAUDE_CODE_SESSION_ATTENDED": "1"}, {"CLAUDE_CODE_SESSION_ATTENDED": "0"}, {agentrun.EnvAttended: "0"}, nil,
	} {
		h, _ := newHandler(t, env)
		ctx := context.Background()
		cwd := t.TempDir()
		cmd := "laserbrain authorize --run r1 -- git push -f origin HEAD:main"
		st, _ := h.Tracker.Fleet()
		fid, err := fleet.ID(ctx, cwd)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		if err := fleettest.Grant(ctx, st, fleet.Authorization{ID: "au", Fleet: fid, Action: cmd, Created: now, Expires: now.Add(time.Hour), Uses: 5}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{cmd, "laserbrain supervise release bob --reason x", "/opt/lb/laserbrain uninstall claude",
			"laserbrain install claude --scope user", "laserbrain store migrate --from local --to postgres://x/y", "go run ./cmd/laserbrain authorize --list"} {
			a := h.Handle(ctx, PreToolUse, payload(t, pre("Bash", map[string]any{"command": c}, cwd)))
			if a.Exit != 2 || !strings.Contains(a.Stderr, "is a person's command") || !strings.Contains(a.Stderr, "not something a person authorizes for an agent") {
				t.Errorf("%v %s: %+v", env, c, a)
			}
			if strings.Contains(a.Stderr, "laserbrain authorize (") || strings.Contains(a.Stderr, "laserbrain authorize --") {
				t.Errorf("%v %s: the refusal teaches the command: %q", env, c, a.Stderr)
			}
		}
		run, err := st.RunForSession(ctx, "s-1")
		if err != nil {
			t.Fatalf("%v: the refusals opened no run for the session: %v", env, err)
		}
		evs, _ := st.Events(ctx, run.ID)
		denied := 0
		for _, e := range evs {
			if e.Kind == fleet.KindGate && e.OK.Failed() {
				denied++
			}
		}
		if denied != 1 { // one tool_use_id: recorded once
			t.Errorf("%v: %d refusals recorded, want 1: %+v", env, denied, evs)
		}
		if a, _ := st.ListAuthorizations(ctx, fid); len(a) != 1 || len(a[0].Used) != 0 {
			t.Errorf("%v: the authorization was spent: %+v", env, a)
		}
	}
}
