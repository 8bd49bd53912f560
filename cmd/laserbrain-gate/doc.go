// Command laserbrain-gate answers the hooks a client runs on every tool
// call — PreToolUse, and with --event PostToolUse — with the same handler
// as `laserbrain hook pre-tool-use` (supercode/hook: the operator
// gate, protected paths, the run's drift and judgment, a person's
// authorizations) in a binary that links nothing the hook does not need.
// Claude Code starts a hook process for every tool call, so start-up is
// paid on every command an agent runs; a Go program runs the package
// initialisation of everything it links before main, and the laserbrain CLI
// links cobra, the grammar's JSON-schema validator and the MCP SDK (several
// milliseconds of init together). This binary starts in about 2 ms.
// TestGateLinksLean keeps it that way.
//
// Usage: laserbrain-gate [--event EVENT] [--client CLIENT] [--format exit|json] < event.json
package main
