package client

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/internal/firstuse"
	"github.com/laserkit/laserkit/internal/shellquote"
)

// ServerName is the name laserbrain's MCP server is installed under; each
// client builds its tools' names from it.
const ServerName = "laserbrain"

// OwnToolNames are the tools laserbrain's MCP server offers (the loop's
// escalate and verdict included). Calling them is reporting, not work:
// they are never observed as evidence, and a halted agent may still call
// them to read why. (supercode/mcpserver's tests check this list against
// the tools the server registers.)
var OwnToolNames = []string{
	"capabilities", "check_state", "check_sub_task", "classify", "escalate", "get_history", "judge_run", "laserscore",
	"link_read", "link_write", "lint", "modulate", "read_text", "reset_task", "similarity", "store_find", "store_list",
	"store_vend", "sub_task", "supervision", "tree_report", "tree_status", "verdict",
}

// OwnTool reports whether a tool name is one of laserbrain's own tools
// under any client's MCP naming, and its base name: Claude Code, Codex and
// Qwen Code call it mcp__laserbrain__check_state, Gemini CLI
// mcp_laserbrain_check_state, opencode laserbrain_check_state. Where the
// name's separator is ambiguous (a server named laserbrain_x would make
// the same names) only a tool laserbrain really has counts.
func OwnTool(name string) (base string, ok bool) {
	if rest, ok := strings.CutPrefix(name, "mcp__"+ServerName+"__"); ok && rest != "" {
		return rest, true
	}
	for _, prefix := range []string{"mcp_" + ServerName + "_", ServerName + "__", ServerName + "_", ServerName + "-", ServerName + "/", ServerName + "."} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && slices.Contains(OwnToolNames, rest) {
			return rest, true
		}
	}
	return "", false
}

// Shell tools of the clients, by the name their payloads use: Claude Code
// and Codex's Bash (Codex also shell, local_shell, exec_command), Gemini
// CLI and Qwen Code's run_shell_command, opencode and Copilot CLI's bash,
// Cline's run_commands (an array of commands) and execute_command,
// Cursor's run_terminal_command. Any other tool whose input carries a
// command is read as a shell command too: a shell tool we do not know is
// gated, never waved through.
func isShellTool(name string) bool {
	switch name {
	case "Bash", "shell", "local_shell", "exec_command", "run_shell_command",
		"run_terminal_command", "bash", "run_commands", "execute_command":
		return true
	}
	return false
}

// Tools known to read or search and change nothing.
func isReadTool(name string) bool {
	switch name {
	case "Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch",
		"BashOutput", "read_file", "read_many_files", "list_directory", "glob",
		"search_file_content", "google_web_search", "web_fetch", "read", "grep", "list",
		"webfetch", "websearch", "view", "list_files", "search_files",
		"list_code_definition_names", "view_image", "web_search",
		// Cline 3.0.65's (read_files {files:[{path}]}, search_codebase {queries}, fetch_web_content {requests}).
		"read_files", "search_codebase", "fetch_web_content":
		return true
	}
	return false
}

// Tools known not to run commands nor write files: the clients' agents,
// plans, todo lists and questions. A "command" in their input is data.
func isOtherTool(name string) bool {
	switch name {
	case "Agent", "Task", "ListAgents", "ReportFindings", "ScheduleWakeup", "Skill",
		"ToolSearch", "Workflow", "DeferredToolPlaceholder", "TodoWrite", "ExitPlanMode",
		"KillShell", "SlashCommand", "save_memory", "write_todos", "todowrite",
		"todoread", "task", "skill", "update_plan", "ask_followup_question",
		"attempt_completion", "plan_mode_respond", "report_intent",
		"ask_question", "spawn_agent":
		return true
	}
	return false
}

// File-writing tools: Claude Code's Write, Edit, MultiEdit and
// NotebookEdit; Gemini CLI's write_file and replace, Qwen Code's edit;
// opencode's write and edit (filePath); Cline's editor (3.0.65: path,
// old_text, new_text — it creates a file that is not there), and its
// older write_to_file and replace_in_file; Copilot CLI's create and edit
// (path); Codex's apply_patch (the files its patch names).
func isWriteTool(name string) bool {
	switch name {
	case "Write", "Edit", "MultiEdit", "NotebookEdit", "write_file", "replace",
		"edit", "write", "write_to_file", "replace_in_file", "create", "apply_patch",
		"editor":
		return true
	}
	return false
}

// fileFields are the input fields naming the file a write tool writes.
var fileFields = []string{"file_path", "filePath", "notebook_path", "path"}

// mcpWriteTools are MCP servers' file tools (the reference filesystem
// server's names), by the tool's own name: any server offering them
// writes files, and the fields name them (move_file's source goes away)
// (ok false: not one of them). The field lists are package-level slices,
// laid out by the compiler; a map here would be built at package init.
func mcpWriteTools(tool string) (fields []string, ok bool) {
	switch tool {
	case "write_file", "edit_file", "write_text_file":
		return pathFields, true
	case "move_file":
		return moveFields, true
	case "create_directory", "delete_file":
		return pathOnly, true
	}
	return nil, false
}

var (
	pathFields = []string{"path", "file_path"}
	moveFields = []string{"source", "destination"}
	pathOnly   = []string{"path"}
)

// commandFields are the input fields holding a shell tool's command; an
// MCP tool may also carry one under "script", or an argv under "args".
var commandFields = []string{"command", "cmd", "commands", "script"}

// toolOf is classify for the tool call a payload names in its field
// field: name (nil when the payload lacks it) and input; the call about to
// run (a PreToolUse) is read strictly.
func toolOf(hook EventName, field string, name *string, input json.RawMessage) (*Tool, error) {
	if name == nil {
		return nil, fmt.Errorf("the event has no %q", field)
	}
	return classify(*name, input, hook == PreToolUse)
}

// classify reads a tool call: its kind and what supervision needs of it.
// strict (PreToolUse) makes a shell tool without a readable command, or a
// write tool without the file it writes, an error: a call the gate cannot
// read is refused, not waved through. Otherwise what cannot be read is
// left out.
func classify(name string, input json.RawMessage, strict bool) (*Tool, error) {
	t := &Tool{Name: name, Kind: KindOther, Input: input}
	if base, ok := OwnTool(name); ok {
		t.Kind, t.Own, t.Server = KindOwn, base, ServerName
		return t, nil
	}
	var in map[string]json.RawMessage
	isObject := json.Unmarshal(input, &in) == nil && in != nil
	// Cline's use_mcp_tool names the server and the tool in its input.
	if name == "use_mcp_tool" || name == "access_mcp_resource" {
		server, _ := stringOf(in["server_name"])
		t.Kind, t.Server = KindMCP, server
		if tool, _ := stringOf(in["tool_name"]); server == ServerName && slices.Contains(OwnToolNames, tool) {
			t.Kind, t.Own = KindOwn, tool
		}
		return t, nil
	}
	switch {
	case isReadTool(name):
		t.Kind = KindRead
		return t, nil
	case isOtherTool(name):
		return t, nil
	case isWriteTool(name):
		t.Kind = KindWrite
		t.Files = writtenFiles(name, in)
		if len(t.Files) == 0 && strict {
			if name == "apply_patch" {
				return t, fmt.Errorf("a %s event needs a patch naming the files it writes", name)
			}
			return t, fmt.Errorf("a %s event needs tool_input.%s as a string", name, fileFieldOf(in))
		}
		return t, nil
	}
	if strings.HasPrefix(name, "mcp__") || strings.HasPrefix(name, "mcp_") {
		t.Kind = KindMCP
		base := ""
		if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
			t.Server, base, _ = strings.Cut(rest, "__")
		}
		if fields, ok := mcpWriteTools(base); ok {
			t.Kind = KindWrite
			for _, f := range fields {
				if s, ok := stringOf(in[f]); ok && s != "" {
					t.Files = append(t.Files, s)
				}
			}
			if len(t.Files) == 0 && strict {
				return t, fmt.Errorf("a %s event needs tool_input.%s as a string", name, fields[0])
			}
			return t, nil
		}
	}
	return shellCall(t, in, isObject, strict)
}

// shellCall reads the command a shell tool (or a tool that carries one)
// runs into t: a command field, an argv under "args", or both.
func shellCall(t *Tool, in map[string]json.RawMessage, isObject, strict bool) (*Tool, error) {
	name := t.Name
	known := isShellTool(name)
	field, raw := "", json.RawMessage(nil)
	if isObject {
		for _, f := range commandFields {
			if r, ok := in[f]; ok {
				field, raw = f, r
				break
			}
		}
	}
	// An argv under "args": with a command it is the command's arguments,
	// alone (an MCP tool's) the whole argv.
	var args []string
	if a, ok := in["args"]; ok && isObject && !known {
		if json.Unmarshal(a, &args) != nil {
			if one, ok := stringOf(a); ok {
				args = []string{one}
			}
		}
	}
	if raw == nil && len(args) > 0 && t.Kind == KindMCP {
		t.Kind = KindShell
		t.Commands = []Command{{Line: shellquote.Join(args), Argv: args}}
		return t, nil
	}
	if raw == nil {
		if known {
			t.Kind = KindShell
			if strict {
				return t, fmt.Errorf("a %s event needs tool_input.command as a string", name)
			}
		}
		return t, nil
	}
	cmds, ok := commandsOf(raw, name == "run_commands" || field == "commands")
	t.Kind = KindShell
	if !ok {
		if strict {
			// A command we cannot read is not waved through.
			return t, fmt.Errorf("a %s event needs tool_input.%s as a string", name, field)
		}
		return t, nil
	}
	if len(args) > 0 && len(cmds) == 1 {
		argv := append(append([]string{}, cmds[0].Argv...), args...)
		if cmds[0].Argv == nil {
			argv = append([]string{cmds[0].Line}, args...)
		}
		cmds = []Command{{Line: shellquote.Join(argv), Argv: argv}}
	}
	t.Commands = cmds
	return t, nil
}

// commandsOf reads a command field: a string, or an array of strings —
// an argv (Codex's ["bash","-lc","…"]), or, when list is set (Cline's
// run_commands, a "commands" field), commands of their own, each a line
// (objects with a "command" each are read the same way). A JSON string
// holding such an array (Cline's parameters) is read through.
func commandsOf(raw json.RawMessage, list bool) ([]Command, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t := strings.TrimSpace(s); list && strings.HasPrefix(t, "[") {
			return commandArray(json.RawMessage(t), list)
		}
		return []Command{{Line: s}}, true
	}
	return commandArray(raw, list)
}

func commandArray(raw json.RawMessage, list bool) ([]Command, bool) {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return nil, false
	}
	var strs []string
	if json.Unmarshal(raw, &strs) == nil {
		if !list {
			return []Command{{Line: shellquote.Join(strs), Argv: strs}}, true
		}
		out := make([]Command, len(strs))
		for i, s := range strs {
			out[i] = Command{Line: s}
		}
		return out, true
	}
	if !list {
		return nil, false
	}
	out := make([]Command, 0, len(items))
	for _, it := range items {
		var o map[string]json.RawMessage
		if json.Unmarshal(it, &o) != nil {
			return nil, false
		}
		c, ok := stringOf(o["command"])
		if !ok {
			return nil, false
		}
		out = append(out, Command{Line: c})
	}
	return out, true
}

var patchFile = firstuse.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$`)
}} // compiled on first use: the gate starts without it

// writtenFiles are the files a write tool's input names.
func writtenFiles(name string, in map[string]json.RawMessage) []string {
	if name == "apply_patch" {
		var files []string
		for _, raw := range in {
			s, ok := stringOf(raw)
			if !ok {
				continue
			}
			for _, m := range patchFile.Get().FindAllStringSubmatch(s, -1) {
				f := strings.TrimSpace(m[1] + m[2])
				if f != "" && !slices.Contains(files, f) {
					files = append(files, f)
				}
			}
		}
		return files
	}
	for _, f := range fileFields {
		if s, ok := stringOf(in[f]); ok && s != "" {
			return []string{s}
		}
	}
	return nil
}

func fileFieldOf(in map[string]json.RawMessage) string {
	for _, f := range fileFields {
		if _, ok := in[f]; ok {
			return f
		}
	}
	return fileFields[0]
}

func stringOf(raw json.RawMessage) (string, bool) {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
