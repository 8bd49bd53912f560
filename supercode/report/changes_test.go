package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/hook"
	"github.com/laserkit/laserkit/supercode/undo"
	"github.com/laserkit/laserkit/supercode/undo/undotest"
)

// An agent's calls go through the real pre-tool-use hook in a real
// repository: the call that deleted two files (past the project policy's
// threshold of one) is a change on the report, in the summary and on the
// page, with the command that undoes it and its loss as the hook reported
// it; a call that changed nothing is not listed.
func TestChangesThroughTheRealHooks(t *testing.T) {
	home, repo := t.TempDir(), filepath.Join(t.TempDir(), "repo")
	t.Setenv("LASERBRAIN_HOME", home)
	t.Setenv("LASERBRAIN_FLEET", "fleet-c")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	undotest.Git(t, repo, "init", "-q")
	undotest.Write(t, repo, "src/a.go", "package a\n")
	undotest.Write(t, repo, "src/b.go", "package b\n")
	undotest.Write(t, repo, ".laserbrain/policy.json", `{"version": 1, "undo": {"loss_files": 1}}`)
	fl, runs := openHome(t, home)
	ctx := context.Background()
	env := map[string]string{agentrun.EnvRun: "run-c1", agentrun.EnvAgent: "c1", agentrun.EnvFleet: "fleet-c"}
	tr := &agentrun.Tracker{Getenv: func(k string) string { return env[k] },
		Stores: agentrun.StoreFuncs{Fleet: func() (fleet.Store, error) { return fl, nil }, Runs: func() (laserbrain.Store, error) { return runs, nil }}.Open}
	if _, err := tr.Open(ctx, tr.Caller("", repo)); err != nil {
		t.Fatal(err)
	}
	h := &hook.Handler{Tracker: tr, ValidatePolicy: policyschema.Validate}
	call := func(id, command string) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"session_id": "s-c1", "cwd": repo, "tool_name": "Bash", "tool_use_id": id,
			"tool_input": map[string]string{"command": command}})
		h.Handle(ctx, hook.PreToolUse, b)
	}
	call("tu-1", "rm -rf src")
	if err := os.RemoveAll(filepath.Join(repo, "src")); err != nil {
		t.Fatal(err)
	}
	call("tu-2", "ls")
	call("tu-3", "ls")
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := undo.Default()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Load(ctx, Options{Repo: repo, FleetID: "fleet-c", Runs: runs, Fleet: fl, Undo: st, Now: func() time.Time { return time.Now() }})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Agents) != 1 || len(f.Agents[0].Changes) != 1 {
		t.Fatalf("agents and their changes: %+v", f.Agents)
	}
	c := f.Agents[0].Changes[0]
	if c.Call != "tu-1" || c.Tool != "Bash" || c.What != "rm -rf src" || !strings.HasPrefix(c.Changed, "2 deleted (20 bytes lost)") ||
		c.Undo != "laserbrain undo --run run-c1 --to tu-1" || !strings.Contains(c.Loss, "deleted or overwrote 2 files (20 bytes), more than undo.loss_files 1") {
		t.Fatalf("the change: %+v", c)
	}
	var out bytes.Buffer
	if err := Summarize(f).WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "tu-1 (Bash: rm -rf src) — LOSS: 2 deleted") || !strings.Contains(out.String(), "undo: laserbrain undo --run run-c1 --to tu-1") {
		t.Errorf("the summary:\n%s", out.String())
	}
	page := string(Render(f))
	if !strings.Contains(page, "What the calls changed") || !strings.Contains(page, "laserbrain undo --run run-c1 --to tu-1") {
		t.Errorf("the page has no change with its undo command")
	}
}
