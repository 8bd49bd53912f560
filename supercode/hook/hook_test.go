package hook

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

func newHandler(t testing.TB, env map[string]string) (*Handler, string) {
	home := t.TempDir()
	if env == nil {
		env = map[string]string{}
	}
	sup := &agentrun.Supervisor{
		Getenv:    func(k string) string { return env[k] },
		OpenFleet: func() (fleet.Store, error) { return fleet.OpenLocal(filepath.Join(home, "fleet")) },
		OpenRuns: func() (laserbrain.Store, error) {
			return localstore.Open(localstore.Paths{Home: home, Config: filepath.Join(home, "config")})
		},
	}
	t.Cleanup(func() { sup.Close() })
	return &Handler{Sup: sup, Format: "exit"}, home
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
		{"shell", map[string]any{"cmd": "ls"}, 2},
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
		{"Write", "file_path", "src/main.go", false},
		{"Write", "file_path", ".claude/agents/x.md", false},
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
	broken := &agentrun.Supervisor{
		Getenv:    func(k string) string { return map[string]string{agentrun.EnvRun: "r1"}[k] },
		OpenFleet: func() (fleet.Store, error) { return nil, errors.New("disk on fire") },
	}
	h := &Handler{Sup: broken}
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
	st, _ := h.Sup.Fleet()
	evs, err := st.Events(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, e := range evs {
		if e.Kind == fleet.KindTool {
			tools = append(tools, e.Name+":"+map[bool]string{true: "ok", false: "fail"}[*e.OK])
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
	events := []Event{PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SessionStart, SessionEnd}
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
