package main

// Issue 25, the client's own sandbox: laserbrain run gives Claude Code
// permission rules that keep its own file tools off what supervision
// stands on. Seen with the real CLI and the kernel's confinement off, on a
// path the gate does not guard (the user's ssh keys): only the rule stands
// there, and the write does not happen; the same Write elsewhere does.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
)

func TestClaudeRulesDenyItsFileTools(t *testing.T) {
	// The inputs are filled in once the session's home and project exist
	// (the model writes them out when Claude Code asks).
	keysIn, plainIn := map[string]any{}, map[string]any{}
	s := newSupervised(t, agenttest.CallID("toolu_keys", "Write", keysIn), agenttest.CallID("toolu_plain", "Write", plainIn), agenttest.Say("Done."))
	keys := filepath.Join(s.Home, ".ssh", "authorized_keys")
	plain := filepath.Join(s.Dir, "notes", "plain.txt")
	keysIn["file_path"], keysIn["content"] = keys, "ssh-ed25519 AAAAC3Nza agent@elsewhere\n"
	plainIn["file_path"], plainIn["content"] = plain, "a note\n"
	s.Env = append(s.Env, "LASERBRAIN_CONFINE=off")
	r := s.Run(t, s.lb, append([]string{"run", "--agent", "writer", "--", s.Claude}, agenttest.ClaudeArgs("tidy up", "Write", "Edit")...)...)
	if r.JSON == nil {
		t.Fatalf("claude printed no result (exit %d)\n%s\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(keys); err == nil {
		t.Errorf("Claude Code's Write reached %s: its own rules did not hold", keys)
	}
	if tr := s.toolResult(t, "toolu_keys"); !tr.IsError {
		t.Errorf("the denied Write's result is not an error: %q", tr.Text)
	} else {
		t.Logf("the denied Write: %q", tr.Text)
	}
	if b, err := os.ReadFile(plain); err != nil || !strings.Contains(string(b), "a note") {
		t.Errorf("the same Write elsewhere did not happen (the control): %v; result %q", err, s.toolResult(t, "toolu_plain").Text)
	}
}

// laserbrain install claude alone (no laserbrain run, no kernel
// confinement) writes the same deny rules into the project's settings: the
// real Claude Code then refuses its own Write into the laserbrain home's
// halts by that rule, and the file stays as it was; the same Write
// elsewhere in the project goes through.
func TestClaudeInstalledRulesDenyItsFileTools(t *testing.T) {
	haltIn, plainIn := map[string]any{}, map[string]any{}
	s := newSupervised(t, agenttest.CallID("toolu_halt", "Write", haltIn), agenttest.CallID("toolu_plain", "Write", plainIn), agenttest.Say("Done."))
	halt, held := holdHalt(t, s.lbHome, "writer")
	plain := filepath.Join(s.Dir, "notes", "plain.txt")
	haltIn["file_path"], haltIn["content"] = halt, "{}\n"
	plainIn["file_path"], plainIn["content"] = plain, "a note\n"

	dry := s.Run(t, s.lb, "install", "claude", "--dry-run")
	if dry.ExitCode != 0 || !strings.Contains(dry.Stdout, `"Edit(/`+s.lbHome+`/**)"`) {
		t.Fatalf("install --dry-run does not show the home's deny rule (exit %d):\n%s\n%s", dry.ExitCode, dry.Stdout, dry.Stderr)
	}
	if r := s.Run(t, s.lb, "install", "claude"); r.ExitCode != 0 {
		t.Fatalf("install: %s", r.Stderr)
	}
	r := s.Run(t, s.Claude, agenttest.ClaudeArgs("tidy up", "Write", "Edit")...)
	if r.JSON == nil {
		t.Fatalf("claude printed no result (exit %d)\n%s\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	if b, _ := os.ReadFile(halt); string(b) != held {
		t.Errorf("Claude Code's Write changed the halt %s: %q", halt, b)
	}
	tr := s.toolResult(t, "toolu_halt")
	if !tr.IsError || !strings.Contains(tr.Text, "permission settings") {
		t.Errorf("the Write into the home was not refused by Claude Code's rule: is_error=%v %q", tr.IsError, tr.Text)
	}
	t.Logf("the denied Write: %q", tr.Text)
	if b, err := os.ReadFile(plain); err != nil || string(b) != "a note\n" {
		t.Errorf("the same Write elsewhere did not happen (the control): %v; result %q", err, s.toolResult(t, "toolu_plain").Text)
	}

	// Uninstall takes the rules out with the hooks.
	if r := s.Run(t, s.lb, "uninstall", "claude"); r.ExitCode != 0 {
		t.Fatalf("uninstall: %s", r.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, ".claude", "settings.json")); err == nil {
		t.Errorf("uninstall left the project's settings: %s", b)
	}
}
