// Package agenttest runs the real Claude Code CLI against a scripted model,
// for tests only.
//
// Model is a Messages API server on 127.0.0.1: it answers the CLI's
// main-loop requests with scripted turns (texts and tool calls, in order)
// and records every request, so a test can read the tool results the model
// was shown (ToolResult) — that is how a test proves a hook's reason reached
// the agent. Claude locates the pinned CLI (scripts/install-claude.sh puts it
// in a cache); without it a test is skipped with a loud banner, and fails
// when CI=true. Session gives each run a fresh HOME and work directory.
// shared/spec/agents.md records the protocol facts this relies on.
package agenttest
