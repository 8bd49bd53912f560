// Package hook is laserbrain's Claude Code hooks as a library, one handler
// per event, so the command stays thin: pre-tool-use gates shell commands
// (Bash and the shell tools of other agent CLIs) and writes into protected
// paths through the operator, joined to the agent's run; post-tool-use and
// post-tool-use-failure record the observed call on the run; user-prompt-
// submit marks the next check a user turn; stop blocks a drifting run's stop
// once with its own advice; session-start and session-end open and close
// the run. A payload for another event is refused. Hooks never fail open:
// an internal error denies in pre-tool-use (exit 2) and is logged and passed
// over (exit 0) by the observers; nothing exits 1.
//
// Every pre-tool-use first asks the fleet store whether any halt is in force
// (one directory read when none is) and denies a halted agent's every call
// with the halt's reason — laserbrain's own MCP tools excepted, so a halted
// agent can still read why. Writes into .ponder/ (Write/Edit, and shell
// commands by the paths operator.WrittenPaths finds) are refused outright:
// only ponder writes its session files. Otherwise the run store opens only
// when an action needs authorization.
//
// Pre-tool-use answers for whoever is there (agentrun.Attendance reads it,
// Handler.unsure decides, operator/POLICY.md has the table): with a person
// there, or nobody saying, a call it cannot clear is asked; with nobody
// there (claude -p, CI, laserbrain loop, laserbrain run without a terminal)
// an ask would be a refusal, so a match only in data or a dry run goes ahead
// with hookSpecificOutput.additionalContext for the model (no
// permissionDecision: the agent's own rules still apply) and a gate event on
// the run, and code or a command it cannot read is refused like an action
// needing authorization, with what to do instead.
//
// What Claude Code 2.1.328 gives a hook, seen in the end-to-end tests: the
// environment has CLAUDECODE=1, CLAUDE_CODE_ENTRYPOINT (sdk-cli under
// claude -p, cli interactively), CLAUDE_CODE_SESSION_ATTENDED ("0" under
// claude -p, "1" interactively), CLAUDE_CODE_SESSION_ID, CLAUDE_CODE_CHILD_SESSION=1,
// CLAUDE_PID, CLAUDE_EFFORT, CLAUDE_PROJECT_DIR and AI_AGENT; an MCP server
// gets CLAUDE_CODE_SESSION_ID but not CLAUDE_CODE_SESSION_ATTENDED. Payloads
// also carry prompt_id and effort {level}; an MCP tool's mcp_server.source is
// "dynamic" for a --mcp-config server; SessionEnd's reason is "other" at the
// end of claude -p. A Stop answered {"decision":"block"} makes the agent go
// on with the reason as its next user message, and the next Stop carries
// stop_hook_active true. A PreToolUse additionalContext (with or without a
// permissionDecision) reaches the model as a system message after the tool
// result: "PreToolUse:Bash hook additional context: …".
package hook
