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
