package hook

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// The hooks answer every client through its adapter; the payloads are the
// shapes agents.md §4 records for each.

func handleAs(t *testing.T, h *Handler, c client.Name, ev Event, payload string) Answer {
	t.Helper()
	h.Client = c
	defer func() { h.Client = "" }()
	return h.Handle(context.Background(), ev, []byte(payload))
}

// Cline's run_commands carries an array: every command is gated, and one
// refused refuses the call — with {"cancel":true}, the only answer Cline
// obeys (exit 2 does not block it).
func TestClineEveryCommandGated(t *testing.T) {
	h, _ := newHandler(t, nil)
	call := func(cmds ...string) string {
		b, _ := json.Marshal(cmds)
		return `{"hookName":"tool_call","taskId":"task-1","workspaceRoots":["` + t.TempDir() + `"],"agent_id":"a","parent_agent_id":null,` +
			`"tool_call":{"id":"tc-1","name":"run_commands","input":{"commands":` + string(b) + `}}}`
	}
	a := handleAs(t, h, client.Cline, PreToolUse, call("echo hi", "git push --force origin main", "ls"))
	var v map[string]any
	if a.Exit != 0 || json.Unmarshal([]byte(a.Stdout), &v) != nil || v["cancel"] != true ||
		!strings.Contains(v["errorMessage"].(string), "force") {
		t.Fatalf("force push among harmless commands: %+v", a)
	}
	if a := handleAs(t, h, client.Cline, PreToolUse, call("echo hi", "ls -la")); a.Exit != 0 || a.Stdout != "" || a.Stderr != "" {
		t.Fatalf("harmless commands: %+v", a)
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
	st, _ := h.Sup.Fleet()
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
	st, _ := h.Sup.Fleet()
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
	st, _ := h.Sup.Fleet()
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
