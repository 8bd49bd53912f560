package loop

import (
	"os"
	"path/filepath"
	"testing"
)

// A session's tokens are its transcript's, found under the session's own
// HOME, cache reads counted; without a transcript, what the result
// reported, cache reads counted too.
func TestSessionTokens(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "projects", "-work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":10,"output_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":5}}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "sess-1.jsonl"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=/elsewhere", "HOME=" + home}
	if got := sessionTokens(env, "sess-1", 1); got != 122 {
		t.Errorf("from the transcript: %d tokens, want 122", got)
	}
	if got := sessionTokens(env, "sess-2", 9); got != 9 {
		t.Errorf("no transcript: %d tokens, want the reported 9", got)
	}
	if got := usageTokens([]byte(`{"input_tokens":10,"output_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":5}`)); got != 122 {
		t.Errorf("reported usage: %d tokens, want 122 (cache reads counted)", got)
	}
}
