package agenttest

import (
	"path/filepath"
	"testing"
)

// ClaudeVersion is the Claude Code CLI the end-to-end tests are written
// against; README.md here records what was observed with it.
const ClaudeVersion = "2.1.328"

// ClaudeCode is Anthropic's Claude Code: the Messages API, hooks in
// settings layers, print mode.
var ClaudeCode = &Client{
	Name: "claude", Package: "@anthropic-ai/claude-code", Version: ClaudeVersion,
	CacheDir: "claude-code", Bin: "claude", EnvVar: "LASERKIT_CLAUDE",
	API: MessagesAPI, ShellTool: "Bash",
	shell: Bash,
	mcp:   func(server, tool string) (string, string) { return "", "mcp__" + server + "__" + tool },
	env: func(s *Session) []string {
		return []string{
			"ANTHROPIC_BASE_URL=" + s.Model.URL,
			"ANTHROPIC_API_KEY=sk-test",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1",
		}
	},
	setup: func(t testing.TB, s *Session) {
		s.UserConfig = filepath.Join(s.Home, ".claude", "settings.json")
	},
	// Every tool of the scripted turns: the shell and our MCP server's.
	args: func(s *Session, prompt string) []string {
		return ClaudeArgs(prompt, "Bash", "mcp__laserbrain")
	},
}

// ClaudeCachePath is where scripts/install-agents.sh puts the pinned CLI.
func ClaudeCachePath() string { return ClaudeCode.CachePath() }

// LocateClaude finds the Claude Code CLI: $LASERKIT_CLAUDE, else the cache
// scripts/install-agents.sh fills, else `claude` on PATH when it reports the
// pinned version. It returns "" and why when there is none.
func LocateClaude() (path, why string) { return ClaudeCode.Locate() }

// Claude returns the CLI's path. Without one the test is skipped with a
// loud banner, or fails when CI=true.
func Claude(t testing.TB) string {
	t.Helper()
	return ClaudeCode.Require(t)
}
