// Package mcpserver is `laserbrain mcp`: a stdio MCP server through which
// an agent reports its state and reads the instrument.
//
// Its first eleven tools are the reference's (check_state, modulate,
// reset_task, get_history, similarity, laserscore, capabilities,
// store_list, store_find, store_vend, read_text) and answer as the
// reference's server answers, over whole sessions: the same protocol (one
// message at a time, in order, no initialization state; every request read
// is answered before the server exits, so `laserbrain mcp < requests.jsonl`
// answers every line), the same reading of arguments (Python's str(),
// int() and truth), the same refusals carried in a result with the valid
// names. The mcp vector kind holds it to that. Where the reference's own
// process or tool crashes on a bad call, this one answers an error naming
// what was wrong and goes on serving. Ours follow: judge_run, classify,
// lint, link_read and link_write (the shared link, laserbrain/link) and
// supervision (laserbrain supervise's report for the caller's repository,
// read-only, with the caller's own row).
//
// Unlike the reference, whose ground lives in the server process, the
// state is the caller's run in the stores: the run `laserbrain run` exported
// (LASERBRAIN_RUN), else the Claude Code session's (CLAUDE_CODE_SESSION_ID,
// which Claude Code passes to its MCP servers), else a run the server opens
// for its own connection. So the hooks, which find the same run, see every
// check — that is what joins the gate to drift.
package mcpserver
