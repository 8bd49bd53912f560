// Package install merges laserbrain's hooks and MCP server into an agent
// client's settings, and takes them out again, for each client the seam
// knows (supercode/client): Claude Code's settings layers and .mcp.json;
// Codex's hooks.json and config.toml, its hooks then trusted through
// `codex app-server` (never by computing its hashes); Gemini CLI's and
// Qwen Code's settings.json; opencode's plugin (plugin/laserbrain.js,
// shipped here) and opencode.json; Cline's hook scripts and MCP settings;
// Copilot CLI's hooks file or settings and mcp-config.json. Locate says
// where each lives for a scope; Prepare writes the layer `laserbrain run`
// adds for one invocation.
//
// Every key the user has is kept, in its place, numbers as written (JSON
// with two-space indent, as the clients write it; Codex's TOML edited as
// text, every other line kept, read back before it is written); our
// entries are recognised by their command (client.ParseCommand), replaced
// in place on reinstall and appended when missing, so a second install
// changes no byte, and uninstall gives the user's files back. Hooks run
// laserbrain by its absolute path, guarded (client.HookCommand): a hook
// command a client cannot find exits 127, which most take for a
// non-blocking error, so a moved binary would silently turn the gate off.
// A file that cannot be read as what it should be, or one laserbrain
// writes whole that someone else wrote, is refused with nothing written.
//
// Where a client has a sandbox of its own for the agent's shell, install
// turns it on beside the gate when the person named no choice of their
// own (Claude Code's sandbox settings, marked ours; Codex's
// workspace-write), and Prepare turns it off for a run the kernel already
// confines, where it cannot start.
package install
