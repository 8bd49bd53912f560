// Package agentrun is an agent's run under supervision. Tracker is what
// the hooks and the MCP server share: it finds the caller's run (from
// LASERBRAIN_RUN, which `laserbrain run` exports, or from the client's
// session id: in the payload for a hook, and for an MCP server in its
// environment (Claude Code, Qwen Code) or through the binding its client
// process's hooks made (binding.go)), checks spelled states on the run's current task, records the
// tool calls the agent's runtime observed, and judges the whole run. Spawn
// is `laserbrain run`: it registers a run, starts the agent command with the
// run in its environment (and what its client needs for one run — our
// hooks and MCP server, which the caller prepares: supercode/install's
// Prepare), forwards signals, keeps the agent's exit code and prints the
// whole-run judgment at the end. It holds the agent to runaway limits (a
// timeout, a number of tool calls, drifting checks in a row): its hooks and
// MCP server tell it of each tool call and check on a socket it owns, and
// past a limit it refuses the calls and stops the agent (limits.go).
//
// Attendance is the one place presence is read (whether a person can
// answer the agent's questions): Claude Code's CLAUDE_CODE_SESSION_ATTENDED,
// laserbrain loop, LASERBRAIN_ATTENDED (which Spawn exports from
// SpawnPresence: nobody without a terminal on the agent's standard input,
// in a client's headless mode such as claude -p, or with --unattended) and
// CI.
//
// Checks are made durable in batches (Tracker.CheckBatch, group commit):
// a batch holds the run's record and its task once, saves the task and
// flushes the store once, writes the record and appends the checks' events
// together, and returns only when all of it is durable — check --stream
// answers a batch of lines after one such commit, a hook or an MCP call
// (whose answer depends on its check) commits a batch of one.
//
// A run's checks go to a laserbrain run (its task) in laserbrain's own store;
// reset_task sets a task aside and the next check grounds a new one, and a
// later goal closer to a set-aside ground resumes it.
package agentrun
