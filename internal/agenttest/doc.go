// Package agenttest runs the real agent clients against scripted models,
// for tests only: the client's whole agent loop — tools, permissions,
// hooks, MCP — is its own; only the model's turns are written by the test.
//
// Model is a server on 127.0.0.1 speaking one of the four API shapes the
// clients use (Messages, Responses, Chat Completions, Gemini). It plays one
// script format for all of them — turns of text and tool calls, in order —
// answers side requests (titles, summaries, anything offered no tools) with
// a short text, and records every request, so a test can read what the
// model was told: ResultAfter finds a call's result in the very next
// request, in that API's shape.
//
// Client describes one real CLI (Claude Code, Codex, Gemini CLI, Qwen Code,
// opencode, Cline, Copilot CLI): the pinned npm version and where
// scripts/install-agents.sh caches it, how it is configured headless
// against a model, and how its shell and MCP tools are called. NewAgent
// gives a test a fresh HOME and project with the client set up; Run puts a
// deadline on every process and stops what a client leaves behind (Cline's
// hub daemon). A missing client skips the test loudly, and fails it when
// CI=true. README.md records what each client really sends and needs.
package agenttest
