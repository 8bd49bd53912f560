// Package mcpserver is `laserbrain mcp`: a stdio MCP server (on the
// official Go SDK) through which an agent reports its state and reads the
// instrument. Its tools keep the reference's names and arguments
// (check_state, modulate, reset_task, get_history, similarity, laserscore,
// capabilities, read_text, store_list, store_find, store_vend), so existing
// agent configurations keep working, and add ours: judge_run, classify,
// lint, link_read and link_write (the shared link, laserbrain/link) and
// supervision (laserbrain supervise's report for the caller's repository,
// read-only, with the caller's own row). A bad argument is an MCP tool error with the reason, never a crash.
//
// Unlike the reference, whose ground lives in the server process, the
// state is the caller's run in the stores: the run `laserbrain run` exported
// (LASERBRAIN_RUN), else the Claude Code session's (CLAUDE_CODE_SESSION_ID,
// which Claude Code passes to its MCP servers), else a run the server opens
// for its own connection. So the hooks, which find the same run, see every
// check — that is what joins the gate to drift.
package mcpserver
