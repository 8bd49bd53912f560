package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// The hooks answer every client through its adapter; the payloads are the
// shapes each real client was seen to send.

func handleAs(t *testing.T, h *Handler, c client.Name, ev client.EventName, payload string) Output {
	t.Helper()
	h.Client = c
	defer func() { h.Client = "" }()
	return h.Handle(context.Background(), ev, []byte(payload))
}

// Cline's run_commands carries an array: every command is gated, and one
// refused refuses the call. Exit 2 does not block Cline and a cancel ends
// its whole task, so the call is rewritten into a Refusal that prints the
// reason (overrideInput) with the reason as context too; the Refusal's own
// PostToolUse is not recorded as the agent's work. A refused call of
// another tool (an editor write into the hooks) is cancelled, and so is a
// call the hook cannot read.
func TestClineEveryCommandGated(t *testing.T) {
	h, _ := newHandler(t, nil)
	cwd := t.TempDir()
	call := func(cmds ...string) string {
		b, _ := json.Marshal(cmds)
		return `{"hookName":"tool_call","taskId":"task-1","workspaceRoots":["` + cwd + `"],"agent_id":"a","parent_agent_id":null,` +
			`"tool_call":{"id":"tc-1","name":"run_commands","input":{"commands":` + string(b) + `}}}`
	}
	a := handleAs(t, h, client.Cline, PreToolUse, call("echo hi", "git push --force origin main", "ls"))
	var v struct {
		Override struct {
			Commands []string `json:"commands"`
		} `json:"overrideInput"`
		Context string `json:"contextModification"`
		Cancel  bool   `json:"cancel"`
	}
	if a.Exit != 0 || json.Unmarshal([]byte(a.Stdout), &v) != nil || v.Cancel || !strings.Contains(v.Context, "force") ||
		len(v.Override.Commands) != 1 || v.Override.Commands[0] != client.Refusal(v.Context) {
		t.Fatalf("force push among harmless commands: %+v", a)
	}
	if a := handleAs(t, h, client.Cline, PreToolUse, call("echo hi", "ls -la")); a.Exit != 0 || a.Stdout != "" || a.Stderr != "" {
		t.Fatalf("harmless commands: %+v", a)
	}
	post := func(cmd string) string {
		b, _ := json.Marshal(map[string]any{"hookName": "tool_result", "taskId": "task-1", "workspaceRoots": []string{cwd},
			"tool_result": map[string]any{"id": "tc-1", "name": "run_commands", "input": map[string]any{"commands": []string{cmd}},
				"output": []any{map[string]any{"query": cmd, "result": "x", "success": false}}},
			"postToolUse": map[string]any{"toolName": "run_commands", "result": "x", "success": true}})
		return string(b)
	}
	handleAs(t, h, client.Cline, PostToolUse, post(v.Override.Commands[0]))
	handleAs(t, h, client.Cline, PostToolUse, strings.Replace(post("echo done"), `"tc-1"`, `"tc-2"`, 1))
	st, _ := h.Tracker.Fleet()
	evs, _ := st.Events(context.Background(), "task-1")
	var tools []string
	for _, e := range evs {
		if e.Kind == fleet.KindTool {
			tools = append(tools, e.Text)
		}
	}
	if strings.Join(tools, "|") != "echo done" {
		t.Fatalf("observed %q; want only the agent's own call", tools)
	}
	// An editor write into Cline's hooks: cancelled.
	edit := `{"hookName":"tool_call","taskId":"task-1","workspaceRoots":["` + cwd + `"],"tool_call":{"id":"tc-3","name":"editor","input":{"path":".clinerules/hooks/PreToolUse","new_text":"exit 0"}}}`
	if a := handleAs(t, h, client.Cline, PreToolUse, edit); !strings.Contains(a.Stdout, `"cancel":true`) || !strings.Contains(a.Stdout, "protected") {
		t.Fatalf("an editor write into the hooks: %+v", a)
	}
	// A guard error is a cancel too, never an exit 2 Cline would ignore.
	a = handleAs(t, h, client.Cline, PreToolUse, `{"hookName":"tool_call","taskId":"task-1","tool_call":{"id":"x","name":"run_commands","input":{"commands":7}}}`)
	if a.Exit != 0 || !strings.Contains(a.Stdout, `"cancel":true`) || !strings.Contains(a.Stdout, "guard error") {
		t.Fatalf("unreadable run_commands: %+v", a)
	}
}

// Gemini CLI's BeforeTool is our PreToolUse (before the seam, every Gemini
// call was denied for its event name); the denial is its {"decision":"deny"}.
func TestGeminiBeforeTool(t *testing.T) {
	h, _ := newHandler(t, nil)
	cwd := t.TempDir()
	pre := func(cmd string) string {
		return `{"session_id":"g-1","cwd":"` + cwd + `","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"` + cmd + `"}}`
	}
	a := handleAs(t, h, client.Gemini, PreToolUse, pre("git push --force origin main"))
	var v map[string]any
	if a.Exit != 0 || json.Unmarshal([]byte(a.Stdout), &v) != nil || v["decision"] != "deny" || !strings.Contains(v["reason"].(string), "force") {
		t.Fatalf("force push: %+v", a)
	}
	if a := handleAs(t, h, client.Gemini, PreToolUse, pre("ls")); a.Exit != 0 || a.Stdout != "" {
		t.Fatalf("ls: %+v", a)
	}
	// The same payload at a hook installed as Claude Code's is refused,
	// saying which flag is missing.
	if a := h.Handle(context.Background(), PreToolUse, []byte(pre("ls"))); a.Exit != 2 || !strings.Contains(a.Stderr, "--client gemini") {
		t.Fatalf("a Gemini payload at a Claude hook: %+v", a)
	}
}

// Copilot CLI's reason reaches the model only in permissionDecisionReason.
func TestCopilotReasonInPermissionDecisionReason(t *testing.T) {
	h, _ := newHandler(t, nil)
	a := handleAs(t, h, client.Copilot, PreToolUse,
		`{"sessionId":"cp-1","timestamp":1,"cwd":"`+t.TempDir()+`","toolName":"bash","toolArgs":{"command":"npm publish"}}`)
	var v map[string]any
	if json.Unmarshal([]byte(a.Stdout), &v) != nil || v["permissionDecision"] != "deny" ||
		!strings.Contains(v["permissionDecisionReason"].(string), "npm publish") && !strings.Contains(v["permissionDecisionReason"].(string), "publish") {
		t.Fatalf("npm publish: %+v", a)
	}
}

// Claude Code's subagents (Task tool) share the session: their calls are
// gated like the parent's and recorded on the parent's run, as the
// subagent; no run of their own is opened (so the supervisor never sees a
// parent and its subagent as two agents colliding).
func TestSubagentCallsOnTheParentsRun(t *testing.T) {
	h, _ := newHandler(t, map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "0"})
	ctx := context.Background()
	cwd := t.TempDir()
	start := `{"session_id":"s-sub","cwd":"` + cwd + `","hook_event_name":"SessionStart","source":"startup"}`
	if a := h.Handle(ctx, SessionStart, []byte(start)); a.Exit != 0 {
		t.Fatalf("session start: %+v", a)
	}
	sub := `,"agent_id":"a-7","agent_type":"code-reviewer"`
	pre := `{"session_id":"s-sub","cwd":"` + cwd + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push --force origin main"},"tool_use_id":"toolu_s1"` + sub + `}`
	if a := h.Handle(ctx, PreToolUse, []byte(pre)); a.Exit != 2 {
		t.Fatalf("a subagent's force push went through: %+v", a)
	}
	post := `{"session_id":"s-sub","cwd":"` + cwd + `","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_s2","tool_response":{"stdout":"x","interrupted":false}` + sub + `}`
	if a := h.Handle(ctx, PostToolUse, []byte(post)); a.Exit != 0 || a.Stderr != "" {
		t.Fatalf("post: %+v", a)
	}
	parent := `{"session_id":"s-sub","cwd":"` + cwd + `","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"pwd"},"tool_use_id":"toolu_s3","tool_response":{"stdout":"x","interrupted":false}}`
	h.Handle(ctx, PostToolUse, []byte(parent))
	st, _ := h.Tracker.Fleet()
	runs, err := st.ListRuns(ctx, fleet.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %v; want the session's one", runs, err)
	}
	evs, _ := st.Events(ctx, runs[0].ID)
	got := map[string]string{}
	for _, e := range evs {
		got[e.ID] = e.Kind + "/" + e.Subagent
	}
	for id, want := range map[string]string{"gate:toolu_s1": "gate/code-reviewer", "tool:toolu_s2": "tool/code-reviewer", "tool:toolu_s3": "tool/"} {
		if got[id] != want {
			t.Errorf("event %s = %q, want %q (all: %v)", id, got[id], want, got)
		}
	}
}

// Qwen Code fires UserPromptSubmit with an empty prompt after every tool
// round: not a user turn. A real prompt is.
func TestEmptyPromptIsNotAUserTurn(t *testing.T) {
	h, _ := newHandler(t, map[string]string{agentrun.EnvRun: "r-q", agentrun.EnvFleet: "f"})
	ctx := context.Background()
	cwd := t.TempDir()
	prompt := func(p string) string {
		return `{"session_id":"q-1","cwd":"` + cwd + `","hook_event_name":"UserPromptSubmit","prompt":"` + p + `","tool_call_id":"x"}`
	}
	st, _ := h.Tracker.Fleet()
	if a := handleAs(t, h, client.Qwen, UserPromptSubmit, prompt("")); a.Exit != 0 || a.Stderr != "" {
		t.Fatalf("empty prompt: %+v", a)
	}
	if r, err := st.Run(ctx, "r-q"); err == nil && r.UserTurn {
		t.Fatal("an empty prompt made a user turn")
	}
	handleAs(t, h, client.Qwen, UserPromptSubmit, prompt("now fix the importer"))
	if r, err := st.Run(ctx, "r-q"); err != nil || !r.UserTurn {
		t.Fatalf("a real prompt: %+v %v; want a user turn", r, err)
	}
}

// laserbrain's own MCP tools are never observed evidence, whatever the
// client calls them; another server's tool is.
func TestOwnToolsNotObservedUnderAnyNaming(t *testing.T) {
	h, _ := newHandler(t, map[string]string{agentrun.EnvRun: "r-own", agentrun.EnvFleet: "f"})
	ctx := context.Background()
	for _, c := range []struct {
		client  client.Name
		payload string
	}{
		{client.Claude, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"mcp__laserbrain__check_state","tool_input":{},"tool_use_id":"o1","tool_response":[]}`},
		{client.Gemini, `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"mcp_laserbrain_check_state","tool_input":{},"tool_response":{"llmContent":"x"},"mcp_context":{"server_name":"laserbrain","tool_name":"check_state"}}`},
		{client.OpenCode, `{"hook_event_name":"tool.execute.after","sessionID":"s","callID":"o3","tool":"laserbrain_check_state","args":{},"directory":"/r","output":{"output":"x"}}`},
		{client.Qwen, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"mcp__laserbrain__judge_run","tool_input":{},"tool_use_id":"o4","tool_response":"x"}`},
		{client.Gemini, `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"mcp_github_list","tool_input":{},"tool_response":{"llmContent":"x"},"mcp_context":{"server_name":"github","tool_name":"list"}}`},
	} {
		if a := handleAs(t, h, c.client, PostToolUse, c.payload); a.Exit != 0 || a.Stderr != "" {
			t.Fatalf("%s: %+v", c.client, a)
		}
	}
	st, _ := h.Tracker.Fleet()
	evs, _ := st.Events(ctx, "r-own")
	var tools []string
	for _, e := range evs {
		if e.Kind == fleet.KindTool {
			tools = append(tools, e.Name)
		}
	}
	if strings.Join(tools, " ") != "mcp_github_list" {
		t.Fatalf("observed tools %v, want only the other server's", tools)
	}
}

// A run a client's hooks open without LASERBRAIN_AGENT is named after the
// client, not after Claude Code. A PreToolUse of one of our own tools binds
// the client process to the session (and nothing else does): a server
// under that process then finds the session, and its run.
func TestOwnToolCallBindsTheSession(t *testing.T) {
	h, home := newHandler(t, nil)
	ctx := context.Background()
	proc := agentrun.Process{PID: 31337, Start: 99, Boot: "b"}
	h.Tracker.ClientProcess = func() (agentrun.Process, error) { return proc, nil }
	cwd := t.TempDir()
	shell := `{"session_id":"g-7","cwd":"` + cwd + `","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"ls"},"tool_response":{"llmContent":"Exit Code: 0"}}`
	if a := handleAs(t, h, client.Gemini, PostToolUse, shell); a.Exit != 0 || a.Stderr != "" {
		t.Fatalf("after tool: %+v", a)
	}
	server := &agentrun.Tracker{Getenv: func(string) string { return "" }, BindingDir: filepath.Join(home, "clients"),
		ClientProcess: h.Tracker.ClientProcess}
	if c := server.Caller("", ""); c.Session != "" {
		t.Fatalf("bound by a shell call: %+v", c)
	}
	own := `{"session_id":"g-7","cwd":"` + cwd + `","hook_event_name":"BeforeTool","tool_name":"mcp_laserbrain_check_state","tool_input":{"goal":"x"},"mcp_context":{"server_name":"laserbrain","tool_name":"check_state"}}`
	if a := handleAs(t, h, client.Gemini, PreToolUse, own); a.Exit != 0 || a.Stdout != "" {
		t.Fatalf("own tool: %+v", a)
	}
	c := server.Caller("", "")
	if c.Session != "g-7" || c.Client != "gemini" {
		t.Fatalf("the server's caller: %+v", c)
	}
	r, ok, err := h.Tracker.Find(ctx, c)
	if err != nil || !ok || r.Agent != "gemini" || r.ID != "g-7" {
		t.Fatalf("the server finds %+v %v %v; want the session's run, agent gemini", r, ok, err)
	}
	// Under laserbrain run the server has the run already: no binding.
	h2, home2 := newHandler(t, map[string]string{agentrun.EnvRun: "r-run"})
	h2.Tracker.ClientProcess = h.Tracker.ClientProcess
	handleAs(t, h2, client.Gemini, PreToolUse, own)
	if ents, _ := os.ReadDir(filepath.Join(home2, "clients")); len(ents) != 0 {
		t.Fatalf("bound under laserbrain run: %v", ents)
	}
}
