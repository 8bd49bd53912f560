package client

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
)

// The payloads below are the shapes the real clients sent, observed running
// each against a scripted model: the keys, their nesting and the tool names
// are the clients', the values made up.

type want struct {
	name     EventName
	session  string
	cwd      string
	toolUse  string
	tool     string
	kind     ToolKind
	own      string
	commands []string
	files    []string
	ok       laserbrain.OK
	text     string
	prompt   string
	subagent string
	stopOn   bool
}

func yes() laserbrain.OK { return laserbrain.OKTrue }
func no() laserbrain.OK  { return laserbrain.OKFalse }

func TestDecodeRecordedPayloads(t *testing.T) {
	for _, c := range []struct {
		what    string
		client  Name
		hook    EventName
		payload string
		want    want
	}{
		// Claude Code.
		{"claude Bash", Claude, PreToolUse,
			`{"session_id":"s-1","transcript_path":"/h/.claude/projects/p/s-1.jsonl","cwd":"/repo","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"git push --force origin main"},"tool_use_id":"toolu_1"}`,
			want{name: PreToolUse, session: "s-1", cwd: "/repo", toolUse: "toolu_1", tool: "Bash", kind: KindShell, commands: []string{"git push --force origin main"}}},
		{"claude own MCP tool", Claude, PreToolUse,
			`{"session_id":"s-1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"mcp__laserbrain__check_state","tool_input":{"goal":"g"},"tool_use_id":"toolu_2","mcp_server":{"name":"laserbrain","source":"dynamic"}}`,
			want{name: PreToolUse, session: "s-1", cwd: "/repo", toolUse: "toolu_2", tool: "mcp__laserbrain__check_state", kind: KindOwn, own: "check_state"}},
		{"claude other MCP tool", Claude, PreToolUse,
			`{"session_id":"s-1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"mcp__github__create_issue","tool_input":{"title":"t"},"tool_use_id":"toolu_3"}`,
			want{name: PreToolUse, session: "s-1", cwd: "/repo", toolUse: "toolu_3", tool: "mcp__github__create_issue", kind: KindMCP}},
		{"claude Write", Claude, PreToolUse,
			`{"session_id":"s-1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/repo/a.go","content":"x"},"tool_use_id":"toolu_4"}`,
			want{name: PreToolUse, session: "s-1", cwd: "/repo", toolUse: "toolu_4", tool: "Write", kind: KindWrite, files: []string{"/repo/a.go"}}},
		{"claude PostToolUse Bash", Claude, PostToolUse,
			`{"session_id":"s-1","cwd":"/repo","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_5","tool_response":{"stdout":"a.go","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"duration_ms":12}`,
			want{name: PostToolUse, session: "s-1", cwd: "/repo", toolUse: "toolu_5", tool: "Bash", kind: KindShell, commands: []string{"ls"}, ok: yes(), text: "a.go"}},
		{"claude PostToolUse interrupted", Claude, PostToolUse,
			`{"session_id":"s-1","cwd":"/repo","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"sleep 9"},"tool_use_id":"toolu_6","tool_response":{"stdout":"","stderr":"","interrupted":true}}`,
			want{name: PostToolUse, session: "s-1", cwd: "/repo", toolUse: "toolu_6", tool: "Bash", kind: KindShell, commands: []string{"sleep 9"}, ok: no()}},
		{"claude PostToolUseFailure", Claude, PostToolUseFailure,
			`{"session_id":"s-1","cwd":"/repo","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"exit 3"},"tool_use_id":"toolu_7","error":"Exit code 3","is_interrupt":false,"duration_ms":5}`,
			want{name: PostToolUseFailure, session: "s-1", cwd: "/repo", toolUse: "toolu_7", tool: "Bash", kind: KindShell, commands: []string{"exit 3"}, ok: no(), text: "Exit code 3"}},
		{"claude subagent", Claude, PreToolUse,
			`{"session_id":"s-1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_8","agent_id":"a-9","agent_type":"general-purpose"}`,
			want{name: PreToolUse, session: "s-1", cwd: "/repo", toolUse: "toolu_8", tool: "Bash", kind: KindShell, commands: []string{"ls"}, subagent: "general-purpose"}},
		{"claude Stop", Claude, Stop,
			`{"session_id":"s-1","cwd":"/repo","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"done","background_tasks":[],"session_crons":[]}`,
			want{name: Stop, session: "s-1", cwd: "/repo", stopOn: true}},
		// Codex: Claude Code's names, plus turn_id; a tool
		// response is a string; code mode's exec_command carries cmd.
		{"codex Bash", Codex, PreToolUse,
			`{"session_id":"c-1","turn_id":"t-1","transcript_path":null,"cwd":"/repo","hook_event_name":"PreToolUse","model":"m","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"git push --force origin main"},"tool_use_id":"call_1"}`,
			want{name: PreToolUse, session: "c-1", cwd: "/repo", toolUse: "call_1", tool: "Bash", kind: KindShell, commands: []string{"git push --force origin main"}}},
		{"codex exec_command argv", Codex, PreToolUse,
			`{"session_id":"c-1","turn_id":"t-1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"exec_command","tool_input":{"cmd":["bash","-lc","npm publish"]},"tool_use_id":"call_2"}`,
			want{name: PreToolUse, session: "c-1", cwd: "/repo", toolUse: "call_2", tool: "exec_command", kind: KindShell, commands: []string{"bash -lc 'npm publish'"}}},
		{"codex PostToolUse string", Codex, PostToolUse,
			`{"session_id":"c-1","turn_id":"t-1","cwd":"/repo","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"call_3","tool_response":"a.go\n"}`,
			want{name: PostToolUse, session: "c-1", cwd: "/repo", toolUse: "call_3", tool: "Bash", kind: KindShell, commands: []string{"ls"}, ok: yes(), text: "a.go\n"}},
		{"codex apply_patch", Codex, PreToolUse,
			`{"session_id":"c-1","turn_id":"t-1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"input":"*** Begin Patch\n*** Update File: .git/config\n@@\n-a\n+b\n*** Add File: src/x.go\n+package x\n*** End Patch"},"tool_use_id":"call_4"}`,
			want{name: PreToolUse, session: "c-1", cwd: "/repo", toolUse: "call_4", tool: "apply_patch", kind: KindWrite, files: []string{".git/config", "src/x.go"}}},
		// Gemini CLI: BeforeTool/AfterTool/AfterAgent, no
		// tool-use id, mcp_context on MCP calls.
		{"gemini BeforeTool shell", Gemini, PreToolUse,
			`{"session_id":"g-1","transcript_path":"/h/.gemini/tmp/x.json","cwd":"/repo","hook_event_name":"BeforeTool","timestamp":"2026-12-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"git push --force origin main","description":"push"}}`,
			want{name: PreToolUse, session: "g-1", cwd: "/repo", tool: "run_shell_command", kind: KindShell, commands: []string{"git push --force origin main"}}},
		{"gemini own MCP tool", Gemini, PreToolUse,
			`{"session_id":"g-1","cwd":"/repo","hook_event_name":"BeforeTool","tool_name":"mcp_laserbrain_check_state","tool_input":{"goal":"g"},"mcp_context":{"server_name":"laserbrain","tool_name":"check_state","command":"/abs/laserbrain","args":["mcp"]}}`,
			want{name: PreToolUse, session: "g-1", cwd: "/repo", tool: "mcp_laserbrain_check_state", kind: KindOwn, own: "check_state"}},
		{"gemini write_file", Gemini, PreToolUse,
			`{"session_id":"g-1","cwd":"/repo","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":".git/HEAD","content":"x"}}`,
			want{name: PreToolUse, session: "g-1", cwd: "/repo", tool: "write_file", kind: KindWrite, files: []string{".git/HEAD"}}},
		{"gemini AfterTool", Gemini, PostToolUse,
			`{"session_id":"g-1","cwd":"/repo","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"ls"},"tool_response":{"llmContent":"a.go","returnDisplay":"a.go"}}`,
			want{name: PostToolUse, session: "g-1", cwd: "/repo", tool: "run_shell_command", kind: KindShell, commands: []string{"ls"}, ok: yes(), text: "a.go"}},
		{"gemini AfterAgent", Gemini, Stop,
			`{"session_id":"g-1","cwd":"/repo","hook_event_name":"AfterAgent","prompt":"p","prompt_response":"done","stop_hook_active":false}`,
			want{name: Stop, session: "g-1", cwd: "/repo", prompt: "p"}},
		{"gemini BeforeAgent", Gemini, UserPromptSubmit,
			`{"session_id":"g-1","cwd":"/repo","hook_event_name":"BeforeAgent","prompt":"fix the test"}`,
			want{name: UserPromptSubmit, session: "g-1", cwd: "/repo", prompt: "fix the test"}},
		// Qwen Code: Claude Code's events, run_shell_command,
		// tool_use_id and tool_call_id; an empty UserPromptSubmit after
		// each tool round.
		{"qwen shell", Qwen, PreToolUse,
			`{"session_id":"q-1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"npm publish","description":"d"},"tool_use_id":"tu-1","tool_call_id":"tu-1"}`,
			want{name: PreToolUse, session: "q-1", cwd: "/repo", toolUse: "tu-1", tool: "run_shell_command", kind: KindShell, commands: []string{"npm publish"}}},
		{"qwen empty prompt", Qwen, UserPromptSubmit,
			`{"session_id":"q-1","cwd":"/repo","hook_event_name":"UserPromptSubmit","prompt":""}`,
			want{name: UserPromptSubmit, session: "q-1", cwd: "/repo"}},
		{"qwen own MCP tool", Qwen, PreToolUse,
			`{"session_id":"q-1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"mcp__laserbrain__reset_task","tool_input":{},"tool_use_id":"tu-2","tool_call_id":"tu-2"}`,
			want{name: PreToolUse, session: "q-1", cwd: "/repo", toolUse: "tu-2", tool: "mcp__laserbrain__reset_task", kind: KindOwn, own: "reset_task"}},
		// opencode: tool.execute.before(input{tool,sessionID,
		// callID}, output{args}) as our plugin hands it on; MCP tools are
		// NAME_TOOL.
		{"opencode bash", OpenCode, PreToolUse,
			`{"hook_event_name":"tool.execute.before","sessionID":"ses_1","callID":"call_1","tool":"bash","args":{"command":"git push --force origin main","description":"d"},"directory":"/repo"}`,
			want{name: PreToolUse, session: "ses_1", cwd: "/repo", toolUse: "call_1", tool: "bash", kind: KindShell, commands: []string{"git push --force origin main"}}},
		{"opencode own MCP tool", OpenCode, PreToolUse,
			`{"hook_event_name":"tool.execute.before","sessionID":"ses_1","callID":"call_2","tool":"laserbrain_check_state","args":{"goal":"g"},"directory":"/repo"}`,
			want{name: PreToolUse, session: "ses_1", cwd: "/repo", toolUse: "call_2", tool: "laserbrain_check_state", kind: KindOwn, own: "check_state"}},
		{"opencode write", OpenCode, PreToolUse,
			`{"hook_event_name":"tool.execute.before","sessionID":"ses_1","callID":"call_3","tool":"write","args":{"filePath":"/repo/.claude/settings.json","content":"{}"},"directory":"/repo"}`,
			want{name: PreToolUse, session: "ses_1", cwd: "/repo", toolUse: "call_3", tool: "write", kind: KindWrite, files: []string{"/repo/.claude/settings.json"}}},
		{"opencode after", OpenCode, PostToolUse,
			`{"hook_event_name":"tool.execute.after","sessionID":"ses_1","callID":"call_4","tool":"bash","args":{"command":"false"},"directory":"/repo","output":{"title":"false","output":"","metadata":{"exit":1}}}`,
			want{name: PostToolUse, session: "ses_1", cwd: "/repo", toolUse: "call_4", tool: "bash", kind: KindShell, commands: []string{"false"}, ok: no()}},
		// Cline: hookName, taskId, workspaceRoots,
		// tool_call{id,name,input}, preToolUse{toolName,parameters} with
		// JSON-encoded string values; run_commands takes an array.
		{"cline run_commands", Cline, PreToolUse,
			`{"clineVersion":"3.0.65","hookName":"tool_call","timestamp":"2026-12-01T00:00:00Z","taskId":"task-1","workspaceRoots":["/repo"],"agent_id":"a-1","parent_agent_id":null,"iteration":1,"tool_call":{"id":"tc-1","name":"run_commands","input":{"commands":["echo hi","git push --force origin main"]}},"preToolUse":{"toolName":"run_commands","parameters":{"commands":"[\"echo hi\",\"git push --force origin main\"]"}}}`,
			want{name: PreToolUse, session: "task-1", cwd: "/repo", toolUse: "tc-1", tool: "run_commands", kind: KindShell, commands: []string{"echo hi", "git push --force origin main"}}},
		{"cline parameters only", Cline, PreToolUse,
			`{"hookName":"PreToolUse","taskId":"task-1","workspaceRoots":["/repo"],"preToolUse":{"toolName":"run_commands","parameters":{"commands":"[\"ls\",\"npm publish\"]"}}}`,
			want{name: PreToolUse, session: "task-1", cwd: "/repo", tool: "run_commands", kind: KindShell, commands: []string{"ls", "npm publish"}}},
		{"cline subagent", Cline, PreToolUse,
			`{"hookName":"tool_call","taskId":"task-1","workspaceRoots":["/repo"],"agent_id":"sub-1","parent_agent_id":"a-1","tool_call":{"id":"tc-2","name":"read_file","input":{"path":"a.go"}}}`,
			want{name: PreToolUse, session: "task-1", cwd: "/repo", toolUse: "tc-2", tool: "read_file", kind: KindRead, subagent: "sub-1"}},
		// Cline 3.0.65's own tools, as its requests offered them: editor
		// writes (path; it creates a missing file), read_files reads.
		{"cline editor", Cline, PreToolUse,
			`{"hookName":"tool_call","taskId":"task-1","workspaceRoots":["/repo"],"tool_call":{"id":"tc-4","name":"editor","input":{"path":"/repo/.clinerules/hooks/PreToolUse","new_text":"exit 0"}}}`,
			want{name: PreToolUse, session: "task-1", cwd: "/repo", toolUse: "tc-4", tool: "editor", kind: KindWrite, files: []string{"/repo/.clinerules/hooks/PreToolUse"}}},
		{"cline read_files", Cline, PreToolUse,
			`{"hookName":"tool_call","taskId":"task-1","workspaceRoots":["/repo"],"tool_call":{"id":"tc-5","name":"read_files","input":{"files":[{"path":"/repo/a.go"}]}}}`,
			want{name: PreToolUse, session: "task-1", cwd: "/repo", toolUse: "tc-5", tool: "read_files", kind: KindRead}},
		{"cline PostToolUse", Cline, PostToolUse,
			`{"hookName":"tool_result","taskId":"task-1","workspaceRoots":["/repo"],"tool_call":{"id":"tc-3","name":"execute_command","input":{"command":"make"}},"postToolUse":{"toolName":"execute_command","parameters":{"command":"make"},"result":"built","success":true,"executionTimeMs":9}}`,
			want{name: PostToolUse, session: "task-1", cwd: "/repo", toolUse: "tc-3", tool: "execute_command", kind: KindShell, commands: []string{"make"}, ok: yes(), text: "built"}},
		// Recorded by branch agents against the real clients (notes
		// agents-facts.md): Cline's PostToolUse carries tool_result, not
		// tool_call, and a failing command of run_commands says so only
		// in its output; Copilot CLI and Gemini CLI report a failing shell
		// command as a success, its exit status in the text.
		{"cline PostToolUse tool_result", Cline, PostToolUse,
			`{"hookName":"tool_result","taskId":"task-1","workspaceRoots":["/repo"],"tool_result":{"id":"call_f","name":"run_commands","input":{"commands":["exit 3"]},"output":[{"query":"exit 3","result":"","success":false,"error":"exit 3"}],"durationMs":5},"postToolUse":{"toolName":"run_commands","parameters":{"commands":"[\"exit 3\"]"},"result":"[]","success":true}}`,
			want{name: PostToolUse, session: "task-1", cwd: "/repo", toolUse: "call_f", tool: "run_commands", kind: KindShell, commands: []string{"exit 3"}, ok: no(), text: "[]"}},
		{"copilot failing bash", Copilot, PostToolUse,
			`{"sessionId":"cp-1","timestamp":1,"cwd":"/repo","toolName":"bash","toolArgs":{"command":"exit 3"},"toolResult":{"resultType":"success","textResultForLlm":"<shellId: 1 completed with exit code 3>"}}`,
			want{name: PostToolUse, session: "cp-1", cwd: "/repo", tool: "bash", kind: KindShell, commands: []string{"exit 3"}, ok: no(), text: "<shellId: 1 completed with exit code 3>"}},
		{"copilot agentStop", Copilot, Stop,
			`{"sessionId":"cp-1","timestamp":1,"cwd":"/repo","stopReason":"end_turn","stop_hook_active":true,"transcriptPath":"/t"}`,
			want{name: Stop, session: "cp-1", cwd: "/repo", stopOn: true}},
		{"gemini failing shell", Gemini, PostToolUse,
			`{"session_id":"g-1","cwd":"/repo","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"exit 3"},"tool_response":{"llmContent":"Command: exit 3\nExit Code: 3","returnDisplay":"Command exited with code: 3"}}`,
			want{name: PostToolUse, session: "g-1", cwd: "/repo", tool: "run_shell_command", kind: KindShell, commands: []string{"exit 3"}, ok: no(), text: "Command: exit 3\nExit Code: 3"}},
		{"gemini MCP parts", Gemini, PostToolUse,
			`{"session_id":"g-1","cwd":"/repo","hook_event_name":"AfterTool","tool_name":"mcp_github_list","tool_input":{},"tool_response":{"llmContent":[{"text":"one"},{"text":"two"}],"returnDisplay":"x"},"mcp_context":{"server_name":"github","tool_name":"list"}}`,
			want{name: PostToolUse, session: "g-1", cwd: "/repo", tool: "mcp_github_list", kind: KindMCP, ok: yes(), text: "onetwo"}},
		// Copilot CLI: camelCase events and fields.
		{"copilot bash", Copilot, PreToolUse,
			`{"sessionId":"cp-1","timestamp":1764547200000,"cwd":"/repo","toolName":"bash","toolArgs":{"command":"git push --force origin main","description":"d"}}`,
			want{name: PreToolUse, session: "cp-1", cwd: "/repo", tool: "bash", kind: KindShell, commands: []string{"git push --force origin main"}}},
		{"copilot toolArgs as a string", Copilot, PreToolUse,
			`{"sessionId":"cp-1","timestamp":1764547200000,"cwd":"/repo","toolName":"bash","toolArgs":"{\"command\":\"npm publish\"}"}`,
			want{name: PreToolUse, session: "cp-1", cwd: "/repo", tool: "bash", kind: KindShell, commands: []string{"npm publish"}}},
		{"copilot postToolUse", Copilot, PostToolUse,
			`{"sessionId":"cp-1","timestamp":1764547200000,"cwd":"/repo","toolName":"bash","toolArgs":{"command":"ls"},"toolResult":{"resultType":"success","textResultForLlm":"a.go"}}`,
			want{name: PostToolUse, session: "cp-1", cwd: "/repo", tool: "bash", kind: KindShell, commands: []string{"ls"}, ok: yes(), text: "a.go"}},
		{"copilot prompt", Copilot, UserPromptSubmit,
			`{"sessionId":"cp-1","timestamp":1764547200000,"cwd":"/repo","prompt":"fix it"}`,
			want{name: UserPromptSubmit, session: "cp-1", cwd: "/repo", prompt: "fix it"}},
	} {
		t.Run(c.what, func(t *testing.T) {
			ad, err := For(c.client, "")
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "0"}
			e, err := ad.Decode(c.hook, []byte(c.payload), func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			w := c.want
			got := want{name: e.Name, session: e.Session, cwd: e.Cwd, toolUse: e.ToolUseID, prompt: e.Prompt, stopOn: e.StopHookActive}
			if e.Tool != nil {
				got.tool, got.kind, got.own, got.commands, got.files = e.Tool.Name, e.Tool.Kind, e.Tool.Own, e.Tool.Lines(), e.Tool.Files
				if len(got.commands) == 0 {
					got.commands = nil
				}
			}
			if e.Response != nil {
				got.ok, got.text = e.Response.OK, e.Response.Text
			}
			if e.Subagent != nil {
				got.subagent = e.Subagent.Type
				if got.subagent == "" {
					got.subagent = e.Subagent.ID
				}
			}
			if !sameWant(got, w) {
				t.Errorf("got  %s\nwant %s", show(got), show(w))
			}
			if e.Client != c.client || len(e.Raw) == 0 {
				t.Errorf("client %q, raw %d bytes", e.Client, len(e.Raw))
			}
			if e.Presence != operator.Unattended {
				t.Errorf("presence %s (%s), want unattended", e.Presence, e.PresenceWhy)
			}
		})
	}
}

func sameWant(a, b want) bool {
	return show(a) == show(b)
}

func show(w want) string {
	b, _ := json.Marshal(map[string]any{"name": w.name, "session": w.session, "cwd": w.cwd, "toolUse": w.toolUse, "tool": w.tool,
		"kind": w.kind, "own": w.own, "commands": w.commands, "files": w.files, "ok": w.ok.String(), "text": w.text, "prompt": w.prompt,
		"subagent": w.subagent, "stop": w.stopOn})
	return string(b)
}

// A payload from another client, or for another event, fails closed
// with the setting that fixes it; a payload the gate cannot read is an
// error, not a pass.
func TestUnreadablePayloadsNameTheFix(t *testing.T) {
	for _, c := range []struct {
		client  Name
		hook    EventName
		payload string
		want    string
	}{
		{Claude, PreToolUse, `{"sessionId":"cp-1","cwd":"/r","toolName":"bash","toolArgs":{"command":"ls"}}`, "needs --client copilot"},
		{Claude, PreToolUse, `{"session_id":"g","cwd":"/r","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`, "needs --client gemini"},
		{Claude, PreToolUse, `{"hookName":"tool_call","taskId":"t","tool_call":{"id":"1","name":"run_commands","input":{"commands":["ls"]}}}`, "needs --client cline"},
		{Claude, PreToolUse, `{"hook_event_name":"tool.execute.before","sessionID":"s","tool":"bash","args":{"command":"ls"}}`, "needs --client opencode"},
		{Claude, PreToolUse, `{"session_id":"c","turn_id":"t","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "needs --client codex"},
		{Gemini, PreToolUse, `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "drop --client gemini"},
		{Copilot, PreToolUse, `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "needs --client claude"},
		{Copilot, PreToolUse, `{"what":1}`, "none of Copilot CLI's fields"},
		{Cline, PreToolUse, `{"what":1}`, "none of Cline's fields"},
		{Claude, PreToolUse, `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, `this is the PreToolUse hook, but the event is "PostToolUse"`},
		{Claude, PreToolUse, `{"tool_name":"Bash","tool_input":{"command":123}}`, "a Bash event needs tool_input.command as a string"},
		{Claude, PreToolUse, `{"tool_name":"Write","tool_input":{"content":"x"}}`, "a Write event needs tool_input.file_path as a string"},
		{Codex, PreToolUse, `{"tool_name":"apply_patch","tool_input":{"input":"no headers"}}`, "needs a patch naming the files it writes"},
		{Claude, PreToolUse, `{not json`, "the event is not a JSON object"},
		{Claude, PreToolUse, ``, "no event on standard input"},
		{Claude, PreToolUse, `null`, "not a JSON object"},
		{Gemini, PreToolUse, `{"hook_event_name":"BeforeTool","session_id":"s"}`, `the event has no "tool_name"`},
		{OpenCode, PreToolUse, `{"hook_event_name":"tool.execute.after","sessionID":"s","tool":"bash","args":{}}`, "reinstall the plugin"},
	} {
		ad, _ := For(c.client, "")
		_, err := ad.Decode(c.hook, []byte(c.payload), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.client, c.payload, err, c.want)
		}
	}
}

// Our answer in each client's form, the form each real client was seen to
// obey.
func TestEncodeEachClientsForm(t *testing.T) {
	deny := Decide(operator.Deny, "laserbrain: no")
	for _, c := range []struct {
		client Name
		format string
		hook   EventName
		a      Reply
		exit   int
		stdout string // a JSON object, compared as JSON; "" for none
		stderr string
	}{
		{Claude, "", PreToolUse, deny, 2, "", "laserbrain: no\n"},
		{Claude, "json", PreToolUse, deny, 0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"laserbrain: no"}}`, ""},
		{Claude, "", PreToolUse, Decide(operator.Ask, "r"), 0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"r"}}`, ""},
		{Claude, "", PreToolUse, Reply{Context: "note"}, 0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"note"}}`, ""},
		{Claude, "", PreToolUse, Reply{}, 0, "", ""},
		{Claude, "", Stop, Reply{Block: true, Reason: "go on"}, 0, `{"decision":"block","reason":"go on"}`, ""},
		{Claude, "", PostToolUse, Reply{Notice: "n", Context: "n"}, 0, `{"systemMessage":"n","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"n"}}`, ""},
		{Claude, "", Stop, Reply{Notice: "n", Context: "n"}, 0, `{"systemMessage":"n"}`, ""},
		{Claude, "", PostToolUse, Reply{Log: "laserbrain hook PostToolUse: broken"}, 0, "", "laserbrain hook PostToolUse: broken\n"},
		// Codex takes only deny from PreToolUse: an ask is a denial, an
		// allow no decision.
		{Codex, "", PreToolUse, Decide(operator.Ask, "r"), 2, "", "r\n"},
		{Codex, "", PreToolUse, Decide(operator.Allow, "authorized"), 0, "", ""},
		{Qwen, "", PreToolUse, deny, 2, "", "laserbrain: no\n"},
		{Gemini, "", PreToolUse, deny, 0, `{"decision":"deny","reason":"laserbrain: no"}`, ""},
		// Gemini CLI headless hangs on an ask: it is refused (TestAgentAskAnsweredHeadless).
		{Gemini, "", PreToolUse, Decide(operator.Ask, "r"), 0, `{"decision":"deny","reason":"r"}`, ""},
		{Gemini, "", Stop, Reply{Block: true, Reason: "go on"}, 0, `{"decision":"deny","reason":"go on"}`, ""},
		{Gemini, "", PostToolUse, Reply{Context: "c"}, 0, `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"c"}}`, ""},
		// Cline: a shell call refused is rewritten into the Refusal, the
		// reason put before the model; any other call (or one the hook
		// could not read) is cancelled, which ends the task.
		{Cline, "", PreToolUse, denyCall("run_commands"), 0,
			`{"overrideInput":{"commands":[` + jsonString(Refusal("laserbrain: no")) + `]},"contextModification":"laserbrain: no"}`, ""},
		{Cline, "", PreToolUse, denyCall("execute_command"), 0,
			`{"overrideInput":{"command":` + jsonString(Refusal("laserbrain: no")) + `},"contextModification":"laserbrain: no"}`, ""},
		{Cline, "", PreToolUse, denyCall("editor"), 0, `{"cancel":true,"errorMessage":"laserbrain: no"}`, ""},
		{Cline, "", PreToolUse, deny, 0, `{"cancel":true,"errorMessage":"laserbrain: no"}`, ""},
		{Cline, "", PreToolUse, Decide(operator.Ask, "r"), 0, `{"cancel":true,"errorMessage":"r"}`, ""},
		{Cline, "", PreToolUse, Reply{Context: "c"}, 0, `{"contextModification":"c"}`, ""},
		{Copilot, "", PreToolUse, deny, 0, `{"permissionDecision":"deny","permissionDecisionReason":"laserbrain: no"}`, ""},
		{OpenCode, "", PreToolUse, deny, 0, `{"decision":"deny","reason":"laserbrain: no"}`, ""},
		{OpenCode, "", PreToolUse, Decide(operator.Ask, "r"), 0, `{"decision":"deny","reason":"r"}`, ""},
		{OpenCode, "", PreToolUse, Reply{}, 0, `{}`, ""},
	} {
		ad, err := For(c.client, c.format)
		if err != nil {
			t.Fatal(err)
		}
		r := ad.Encode(c.hook, c.a)
		if r.Exit != c.exit || r.Stderr != c.stderr || !sameJSON(r.Stdout, c.stdout) {
			t.Errorf("%s %s %+v: got %+v, want exit %d stdout %s stderr %q", c.client, c.hook, c.a, r, c.exit, c.stdout, c.stderr)
		}
	}
}

// denyCall is a denial of a call of tool (a shell tool when it is one).
func denyCall(tool string) Reply {
	kind := KindWrite
	if isShellTool(tool) {
		kind = KindShell
	}
	r := Decide(operator.Deny, "laserbrain: no")
	r.Call = &Tool{Name: tool, Kind: kind}
	return r
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func sameJSON(got, want string) bool {
	if want == "" {
		return got == ""
	}
	var a, b any
	if json.Unmarshal([]byte(got), &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y) && strings.HasSuffix(got, "\n")
}

// laserbrain's own tools under every client's naming, and names that only
// look like them.
func TestOwnToolNaming(t *testing.T) {
	for name, base := range map[string]string{
		"mcp__laserbrain__check_state": "check_state", "mcp__laserbrain__verdict": "verdict",
		"mcp_laserbrain_check_state": "check_state", "laserbrain_reset_task": "reset_task", "laserbrain-judge_run": "judge_run",
		"laserbrain__check_state": "check_state", "laserbrain-check_state": "check_state", // Cline, Copilot CLI (branch agents saw both)
		"mcp__laserbrain__anything_new": "anything_new",
		"laserbrain_x_check_state":      "", "mcp_laserbrain_x_y": "", "mcp__laserbrainx__check_state": "", "Bash": "",
		"mcp__other__check_state": "", "laserbrain": "", "mcp__laserbrain__": "",
	} {
		got, ok := OwnTool(name)
		if got != base || ok != (base != "") {
			t.Errorf("OwnTool(%q) = %q, %v; want %q", name, got, ok, base)
		}
	}
}

func TestHeadless(t *testing.T) {
	for _, c := range []struct {
		client Name
		args   []string
		want   bool
	}{
		{Claude, []string{"--model", "x", "-p", "do it"}, true},
		{Claude, []string{"--print", "do it"}, true},
		{Claude, nil, false},
		{Codex, []string{"exec", "do it"}, true},
		{Codex, []string{"--model", "m", "do it"}, false},
		{Gemini, []string{"-m", "gemini-2.5-flash", "-p", "x"}, true},
		{Qwen, []string{"--prompt=x"}, true},
		{OpenCode, []string{"run", "--format", "json", "x"}, true},
		{OpenCode, nil, false},
		{Cline, []string{"--json", "x"}, true},
		{Copilot, []string{"-p", "x", "--allow-all-tools"}, true},
		{Copilot, []string{"--allow-all-tools"}, false},
	} {
		if got := Headless(c.client, c.args) != ""; got != c.want {
			t.Errorf("%s %v: headless %v, want %v", c.client, c.args, got, c.want)
		}
	}
	if n, ok := Detect("/usr/local/bin/gemini"); !ok || n != Gemini {
		t.Errorf("Detect gemini = %q %v", n, ok)
	}
	if _, ok := Detect("aider"); ok {
		t.Error("aider detected as a client")
	}
}

// Denied reads back every client's denial as Encode writes it, and no
// other answer.
func TestDeniedReadsEveryDenial(t *testing.T) {
	for _, n := range Names {
		for _, format := range []string{"", "json"} {
			ad, _ := For(n, format)
			for _, d := range []Reply{Decide(operator.Deny, "no"), denyCall("run_commands"), denyCall("bash")} {
				if r := ad.Encode(PreToolUse, d); !Denied(n, r) {
					t.Errorf("%s %s: a denial %+v not read as one", n, format, r)
				}
			}
			for _, a := range []Reply{{}, Decide(operator.Allow, "ok"), {Context: "note"}} {
				if r := ad.Encode(PreToolUse, a); Denied(n, r) {
					t.Errorf("%s %s: %+v read as a denial", n, format, r)
				}
			}
		}
	}
}

// The Refusal a refused Cline shell call runs instead, run by a real sh:
// it prints the reason as given — quotes, $, backquotes and newlines
// included, none of them interpreted — exits 1, and writes nothing. Only
// a command that is exactly a Refusal is read as one (its PostToolUse is
// not the agent's work); anything added to it is the agent's.
func TestRefusalRunsNothing(t *testing.T) {
	dir := t.TempDir()
	reason := "laserbrain: it's `rm -rf` and $(touch pwned) — \"no\"\nnext line \\n %s"
	cmd := exec.Command("sh", "-c", Refusal(reason))
	cmd.Dir = dir
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || string(out) != reason+"\n" {
		t.Fatalf("exit %v, printed %q; want exit 1 and %q", err, out, reason+"\n")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the refusal wrote %v", ents)
	}
	if !isRefusal(Refusal(reason)) || !isRefusal(Refusal("")) {
		t.Fatal("a Refusal is not read as one")
	}
	for _, c := range []string{
		Refusal("x") + "; touch y",
		"touch y; " + Refusal("x"),
		refusalPrefix + "'x'; touch y; echo 'z'; exit 1",
		refusalPrefix + "'a'b'; exit 1",
		"printf x",
	} {
		if isRefusal(c) {
			t.Errorf("%q read as a refusal", c)
		}
	}
	ad, _ := For(Cline, "")
	post := func(cmd string) Payload {
		b, _ := json.Marshal(map[string]any{"hookName": "tool_result", "taskId": "t", "workspaceRoots": []string{"/r"},
			"tool_result": map[string]any{"id": "c", "name": "run_commands", "input": map[string]any{"commands": []string{cmd}},
				"output": []any{map[string]any{"query": cmd, "result": "", "success": false}}},
			"postToolUse": map[string]any{"toolName": "run_commands", "result": "[]", "success": true}})
		e, err := ad.Decode(PostToolUse, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if !post(Refusal(reason)).Refused || post(Refusal("x")+"; touch y").Refused || post("ls").Refused {
		t.Fatal("Refused marks the wrong PostToolUse")
	}
}
