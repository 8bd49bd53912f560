package hook

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/undo"
	"github.com/laserkit/laserkit/supercode/undo/undotest"
)

// A session with hooks installed and no laserbrain run: its start and end
// and each call that may write are checkpointed on the session's run —
// reads and laserbrain's own tools are not — so undo --last takes back
// what the session's call deleted.
func TestSessionCheckpoints(t *testing.T) {
	h, home := newHandler(t, nil)
	t.Setenv("LASERBRAIN_HOME", home)
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	undotest.Git(t, repo, "init", "-q")
	undotest.Write(t, repo, "src/a.go", "package a\n")
	ctx := context.Background()
	event := func(ev client.EventName, name string, v map[string]any) {
		t.Helper()
		v["hook_event_name"], v["session_id"], v["cwd"] = name, "s-undo", repo
		h.Handle(ctx, ev, payload(t, v))
	}
	event(SessionStart, "SessionStart", map[string]any{"source": "startup"})
	event(PreToolUse, "PreToolUse", map[string]any{"tool_name": "Read", "tool_use_id": "t-read", "tool_input": map[string]any{"file_path": "src/a.go"}})
	event(PreToolUse, "PreToolUse", map[string]any{"tool_name": "mcp__laserbrain__check_state", "tool_use_id": "t-own", "tool_input": map[string]any{}})
	event(PreToolUse, "PreToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "t-rm", "tool_input": map[string]any{"command": "rm -rf src"}})
	if err := os.RemoveAll(filepath.Join(repo, "src")); err != nil {
		t.Fatal(err)
	}
	event(SessionEnd, "SessionEnd", map[string]any{"reason": "other"})
	st, err := undo.Default()
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records("s-undo")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range recs {
		kinds = append(kinds, string(r.Kind)+":"+r.Call)
	}
	if got := strings.Join(kinds, " "); got != "start: call:t-rm end:" {
		t.Fatalf("checkpoints %q, want the start, the Bash call and the end", got)
	}
	i, err := undo.Select(recs, "")
	if err != nil || recs[i].Call != "t-rm" {
		t.Fatalf("--last chose %d (%v)", i, err)
	}
	if _, err := st.Undo(ctx, undo.UndoInput{Run: "s-undo", To: i, What: "test"}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(repo, "src", "a.go")); err != nil || string(b) != "package a\n" {
		t.Fatalf("after undo src/a.go: %q %v", b, err)
	}
}
