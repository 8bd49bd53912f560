// Package install merges laserbrain's hooks and MCP server into Claude Code's
// settings files, and takes them out again. Per scope: project writes
// .claude/settings.json (hooks, and enabledMcpjsonServers approving our
// server) and .mcp.json; local writes .claude/settings.local.json and the
// project's entry in ~/.claude.json; user writes ~/.claude/settings.json and
// ~/.claude.json's top-level mcpServers.
//
// Every key the user has is kept, in its place, numbers as written; our
// entries are recognised by their command (a program named laserbrain
// running `hook EVENT`), replaced in place on reinstall and appended when
// missing, so a second install changes no byte. Hooks run laserbrain by its
// absolute path: a hook command Claude Code cannot find exits 127, which it
// treats as a non-blocking error, so a PATH-dependent gate would silently
// turn itself off. Files are rendered as Claude Code writes them (JSON with
// two-space indent); a file that is not a JSON object is refused with
// nothing written.
package install
