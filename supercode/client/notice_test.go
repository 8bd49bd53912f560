package client

import (
	"slices"
	"testing"
)

// Notifications as the clients send them: Claude Code 2.1.328's schema
// for its Notification hook input (hook_event_name, message, optional
// title, notification_type; its kinds read from the binary, and its
// permission prompt's message as TestClaudeWaitingForAPerson saw it) — Qwen Code
// 0.24.4 sends the same names — and Gemini CLI 0.61.0's
// (fireNotificationEvent: notification_type, message, details), and
// opencode's permission.asked as our plugin hands it on. Those that stop
// for a person wait; the others do not.
func TestNotificationsThatWait(t *testing.T) {
	for _, c := range []struct {
		client  Name
		payload string
		kind    string
		message string
		waits   bool
	}{
		{Claude, `{"session_id":"s-1","transcript_path":"/t.jsonl","cwd":"/repo","hook_event_name":"Notification","message":"Claude needs your permission","notification_type":"permission_prompt"}`,
			"permission_prompt", "Claude needs your permission", true},
		{Claude, `{"session_id":"s-1","cwd":"/repo","hook_event_name":"Notification","message":"Claude is waiting for your input","title":"Claude Code","notification_type":"idle_prompt"}`,
			"idle_prompt", "Claude is waiting for your input", true},
		{Claude, `{"session_id":"s-1","cwd":"/repo","hook_event_name":"Notification","message":"a question from the github server","notification_type":"elicitation_dialog"}`,
			"elicitation_dialog", "a question from the github server", true},
		{Claude, `{"session_id":"s-1","cwd":"/repo","hook_event_name":"Notification","message":"Logged in","notification_type":"auth_success"}`,
			"auth_success", "Logged in", false},
		{Claude, `{"session_id":"s-1","cwd":"/repo","hook_event_name":"Notification","message":"answered","notification_type":"elicitation_response"}`,
			"elicitation_response", "answered", false},
		{Claude, `{"session_id":"s-1","cwd":"/repo","hook_event_name":"Notification","message":"Claude needs your permission"}`,
			"", "Claude needs your permission", true},
		{Qwen, `{"session_id":"q-1","cwd":"/repo","hook_event_name":"Notification","message":"Approve run_shell_command?","notification_type":"permission_prompt"}`,
			"permission_prompt", "Approve run_shell_command?", true},
		{Gemini, `{"session_id":"g-1","cwd":"/repo","hook_event_name":"Notification","timestamp":"2026-12-01T00:00:00Z","notification_type":"ToolPermission","message":"Allow run_shell_command?","details":{"type":"exec"}}`,
			"ToolPermission", "Allow run_shell_command?", true},
		// What our opencode plugin sends on opencode 1.18.33's
		// permission.asked (TestAgentOpenCodeWaitsForAPerson).
		{OpenCode, `{"hook_event_name":"permission.asked","sessionID":"ses_1","directory":"/repo","message":"opencode asks permission: bash (touch asked-marker)"}`,
			"permission.asked", "opencode asks permission: bash (touch asked-marker)", true},
	} {
		ad, err := For(c.client, "")
		if err != nil {
			t.Fatal(err)
		}
		e, err := ad.Decode(Notification, []byte(c.payload), nil)
		if err != nil {
			t.Fatalf("%s %s: %v", c.client, c.kind, err)
		}
		if e.Notice == nil || e.Notice.Type != c.kind || e.Notice.Message != c.message {
			t.Fatalf("%s %s: notice %+v", c.client, c.kind, e.Notice)
		}
		if _, waits := e.Notice.WaitsFor(); waits != c.waits {
			t.Errorf("%s %s: waits %v, want %v", c.client, c.kind, waits, c.waits)
		}
	}
	if _, waits := (*Notice)(nil).WaitsFor(); waits {
		t.Error("no notice waits")
	}
}

// The Notification hook is installed where the client has one the seam
// reads — Claude Code, Qwen Code, Gemini CLI, opencode (its plugin, on the
// permission.asked bus event) — and not where it has none (Codex, Cline)
// or its payload was never seen (Copilot CLI).
func TestNotificationHookInstalled(t *testing.T) {
	has := func(n Name) bool {
		return slices.ContainsFunc(Hooks(n), func(h Hook) bool { return h.Event == Notification })
	}
	for _, n := range []Name{Claude, Qwen, Gemini, OpenCode} {
		if !has(n) {
			t.Errorf("%s: no Notification hook", n)
		}
	}
	for _, n := range []Name{Codex, Cline, Copilot} {
		if has(n) {
			t.Errorf("%s: a Notification hook it does not have", n)
		}
	}
	if Subcommand(Notification) != "notification" {
		t.Errorf("the hook subcommand is %q", Subcommand(Notification))
	}
}
