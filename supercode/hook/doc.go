// Package hook is laserbrain's agent hooks as a library, one handler per
// event, so the command stays thin. Every client's payload comes in through
// its adapter (supercode/client) as one client.Payload, and every answer goes
// out as one client.Reply that the adapter writes the way that client
// obeys; nothing here reads a client's field names. pre-tool-use gates
// shell commands (each of a call's commands: Cline sends several) and
// writes into protected paths through the operator, joined to the agent's
// run; post-tool-use and post-tool-use-failure record the observed call on
// the run (as the subagent that made it, when one did); user-prompt-submit
// marks the next check a user turn (an empty prompt is not one); stop
// blocks a drifting run's stop once with its own advice; session-start and
// session-end open and close the run; notification records that the agent
// waits for a person, when the client's notification says it does (a
// permission or an idle prompt: client.Notice.WaitsFor), until the run's
// next event (fleet.Waiting). A payload for another event, or
// another client, is refused. Hooks never fail open: an internal error
// denies in pre-tool-use (in the client's form of a denial) and is logged
// and passed over (exit 0) by the observers; nothing exits 1.
//
// Before a call that may write, pre-tool-use checkpoints the caller's work
// tree for its run (supercode/undo), whatever it then decides, and records
// on the run what the run's previous call changed, with the command that
// undoes it; a loss past the project policy's threshold is reported to
// laserbrain run, which under --halt-on-loss refuses the call.
//
// Every pre-tool-use first asks the fleet store whether any halt is in force
// (one directory read when none is) and denies a halted agent's every call
// with the halt's reason — laserbrain's own MCP tools excepted, so a halted
// agent can still read why. Then coverage holds it, in one call
// (coverage.go): past the threshold without a check it is refused with how
// to check under this client. Then it is one straight line (gate.go): the
// event is read into shell.Analyze (a shell command) or
// shell.AnalyzeWrite (a write tool's files), the gate answers it
// (gate.Check) with the project policy (agentrun.LoadPolicy), the run read
// once and a person's authorizations once, only when the decision needs
// them; the decision is recorded once on the caller's run, and answered. A policy
// file the lean laserbrain-gate cannot check (it links no schema
// validator) is handed to laserbrain, which checks it and keeps a record of
// the bytes it passed.
//
// Coverage (supercode/coverage decides; the record lives with the run, in
// either store): every observed tool call is a step, check_state's
// post-tool-use a check, a Stop with unchecked steps is held once, and
// session-start tells the model the grammar's notation and the run's
// ground. Settings: the run's variables over the project policy's
// "coverage" over our default. The supervisor's messages (messages.go): every
// answer whose text the client shows its model (client.Tells) also hands
// out what waits in the agent's queue, once, journaled.
//
// When the store is a database out of reach (queue.go): the gate decides
// from the command alone — a call it clears goes on, an action needing
// authorization is refused with "cannot read the run: <reason>" — and the
// observers append their events to a queue on the machine, which the next
// observer that reaches the database replays, idempotently, before its own
// event. Each session is told once. A binary that cannot read the store
// LASERBRAIN_STORE names (the lean laserbrain-gate) hands the event to the
// laserbrain beside it: to its long-lived hook server (supercode/hookserver),
// which keeps its connection, and only when none can be started to a
// laserbrain process (Run).
//
// Pre-tool-use answers for whoever is there (agentrun.Attendance reads it,
// the gate decides, operator/POLICY.md has the table): with a person
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
