package client

import (
	"github.com/laserkit/laserkit/internal/envconfig"
	"github.com/laserkit/laserkit/supercode/agentrun"
)

// MCPEnv are the variables laserbrain's MCP server reads to find the
// caller's run and store, and, behind laserbrain run's boundary, the
// broker it hands its session to (the store is read-only in there).
// Clients that start MCP servers with a scrubbed environment (Codex: only
// what env_vars lists) must be told to pass them.
var MCPEnv = []string{agentrun.EnvRun, agentrun.EnvAgent, agentrun.EnvFleet, envconfig.HomeEnv, envconfig.StoreEnv, envconfig.BrokerEnv}

// ClaudeHooks is Claude Code's settings "hooks" object running every
// laserbrain hook (Qwen Code reads the same shape).
func ClaudeHooks(self string, n Name) map[string]any {
	hooks := map[string]any{}
	for _, h := range Hooks(n) {
		cmd := map[string]any{"type": "command", "command": HookCommand(self, n, h.Event), "timeout": HookTimeout}
		entry := map[string]any{"hooks": []any{cmd}}
		if h.Matcher != "" {
			entry["matcher"] = h.Matcher
		}
		hooks[h.ClientEvent] = []any{entry}
	}
	return hooks
}

// MCPServer is Claude Code's MCP configuration entry for `laserbrain mcp`.
func MCPServer(self string) map[string]any {
	return map[string]any{"type": "stdio", "command": self, "args": []string{"mcp"}}
}
