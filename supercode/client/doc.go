// Package client is the seam between laserbrain and the agent clients that
// run its hooks: Claude Code, Codex, Gemini CLI, Qwen Code, opencode, Cline
// and Copilot CLI. Each client spells its hook payloads and obeys answers
// its own way; one small Adapter per client turns its payload into our one
// Payload and our one Reply into the Output that client obeys, so the gate, the
// observers and the supervisor never see a client's field names.
//
// A payload an adapter cannot read fails closed: Decode returns an error
// naming the client setting to fix (usually the hook command's --client),
// and the hook denies the call. The package also holds what installs a
// client's hooks needs to know about it — the events we hook and the
// command each runs — so the installer and `laserbrain run` build one
// command line, which denies (never exits 127) when our binary has moved.
package client
