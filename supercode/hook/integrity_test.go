package hook

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/fleet/fleettest"
)

// TestPonderWritesRefused: every way an agent could write ponder's session
// files directly is refused, with ponder named as the way; reading them,
// and running ponder, is not.
func TestPonderWritesRefused(t *testing.T) {
	h, _ := newHandler(t, nil)
	ctx := context.Background()
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".ponder", "s"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool    string
		input   map[string]any
		refused bool
	}{
		{"Bash", map[string]any{"command": `echo '{"seq":9,"type":"unit-delete","phantom":true}' >> .ponder/s/ledger.jsonl`}, true},
		{"Bash", map[string]any{"command": `sed -i 's/active/converged/' .ponder/s/session.json`}, true},
		{"Bash", map[string]any{"command": `printf x | tee -a .ponder/s/ledger.jsonl`}, true},
		{"Bash", map[string]any{"command": `cp /tmp/forged.jsonl .ponder/s/ledger.jsonl`}, true},
		{"Bash", map[string]any{"command": `mv .ponder/s/ledger.jsonl /tmp/`}, true},
		{"Bash", map[string]any{"command": `cd .ponder/s && echo x >> ledger.jsonl`}, true},
		{"Bash", map[string]any{"command": `bash -c "echo x > $PWD/.ponder/s/units.json"`}, true},
		{"Bash", map[string]any{"command": `python3 -c "open('.ponder/s/ledger.jsonl','a').write('x')"`}, true},
		{"Bash", map[string]any{"command": `echo x > ` + filepath.Join(cwd, ".ponder", "s", "judge.json")}, true},
		{"Write", map[string]any{"file_path": ".ponder/s/ledger.jsonl", "content": "x"}, true},
		{"Edit", map[string]any{"file_path": filepath.Join(cwd, ".ponder/s/session.json")}, true},
		{"Bash", map[string]any{"command": `cat .ponder/s/ledger.jsonl | wc -l`}, false},
		{"Bash", map[string]any{"command": `ponder delta batch.jsonl && ponder judge`}, false},
		{"Bash", map[string]any{"command": `echo x > notes/ponder.txt`}, false},
	} {
		a := h.Handle(ctx, PreToolUse, payload(t, pre(c.tool, c.input, cwd)))
		if (a.Exit == 2) != c.refused {
			t.Errorf("%s %v: exit %d %q; refused want %v", c.tool, c.input, a.Exit, a.Stderr, c.refused)
		}
		if c.refused && (!strings.Contains(a.Stderr, "Only ponder writes .ponder/") || !strings.Contains(a.Stderr, "protected (ponder's session files)")) {
			t.Errorf("%s %v: reason %q", c.tool, c.input, a.Stderr)
		}
	}
	// Not even a person's authorization lets an agent write them, though
	// the same authorization, for another protected file, lets that through.
	st, err := h.Tracker.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	fid, err := fleet.ID(ctx, cwd)
	if err != nil {
		t.Fatal(err)
	}
	write := func(path string) Output {
		return h.Handle(ctx, PreToolUse, payload(t, pre("Write", map[string]any{"file_path": path, "content": "x"}, cwd)))
	}
	authorize := func(path string) {
		t.Helper()
		now := time.Now()
		if err := fleettest.Grant(ctx, st, fleet.Authorization{ID: "au-" + filepath.Base(path), Fleet: fid, By: "ana",
			Action: "write " + filepath.Join(cwd, path), Created: now, Expires: now.Add(time.Hour), Uses: 5}); err != nil {
			t.Fatal(err)
		}
	}
	const gitHook, ledger = ".git/hooks/pre-commit", ".ponder/s/ledger.jsonl"
	if a := write(gitHook); a.Exit != 2 {
		t.Fatalf("a write into .git before any authorization: %+v", a)
	}
	authorize(gitHook)
	if a := write(gitHook); a.Exit != 0 {
		t.Fatalf("the authorization did not let the write into .git through, so it proves nothing of the ledger: %+v", a)
	}
	authorize(ledger)
	if a := write(ledger); a.Exit != 2 || !strings.Contains(a.Stderr, "not something a person authorizes") {
		t.Errorf("an authorization let an agent write the ledger: %+v", a)
	}
}

// TestHaltDeniesEveryCall: a halted agent's every call is denied with the
// halt's reason; laserbrain's own tools still answer; another agent goes
// on; after the release the agent does too.
func TestHaltDeniesEveryCall(t *testing.T) {
	h, _ := newHandler(t, map[string]string{agentrun.EnvRun: "r1", agentrun.EnvFleet: "f"})
	ctx := context.Background()
	cwd := t.TempDir()
	st, _ := h.Tracker.Fleet()
	run := fleet.Run{ID: "r1", Agent: "bob", Fleet: "f", Created: time.Now()}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	ls := payload(t, pre("Bash", map[string]any{"command": "ls"}, cwd))
	if a := h.Handle(ctx, PreToolUse, ls); a.Exit != 0 {
		t.Fatalf("before the halt: %+v", a)
	}
	halt := fleet.Halt{ID: "h1", Fleet: "f", Agent: fleet.RunAgent(run), Run: "r1", By: "supervisor", At: time.Now(),
		Reason: "shares a ground with alice:r0 (overlap 1.00) — halted to stop duplicate work"}
	if err := st.PutHalt(ctx, halt); err != nil {
		t.Fatal(err)
	}
	for _, p := range [][]byte{ls, payload(t, pre("Read", map[string]any{"file_path": "x"}, cwd)), payload(t, pre("Write", map[string]any{"file_path": "src/x.go"}, cwd))} {
		a := h.Handle(ctx, PreToolUse, p)
		if a.Exit != 2 || !strings.Contains(a.Stderr, "bob:r1 is halted by supervisor: shares a ground with alice:r0") ||
			!strings.Contains(a.Stderr, "laserbrain supervise release bob:r1") {
			t.Fatalf("a halted agent's call: %+v", a)
		}
	}
	if a := h.Handle(ctx, PreToolUse, payload(t, pre("mcp__laserbrain__supervision", map[string]any{}, cwd))); a.Exit != 0 {
		t.Fatalf("laserbrain's own tool for a halted agent: %+v", a)
	}
	evs, _ := st.Events(ctx, "r1")
	if len(evs) == 0 || evs[len(evs)-1].Kind != fleet.KindGate || !strings.Contains(evs[len(evs)-1].Text, "is halted") {
		t.Fatalf("the refusal was not recorded on the run: %+v", evs)
	}
	other, otherHome := newHandler(t, map[string]string{agentrun.EnvRun: "r2", agentrun.EnvFleet: "f"})
	stores := homeStores(otherHome)
	stores.Fleet = func() (fleet.Store, error) { return st, nil }
	other.Tracker.Stores = stores.Open
	if err := st.CreateRun(ctx, fleet.Run{ID: "r2", Agent: "alice", Fleet: "f", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if a := other.Handle(ctx, PreToolUse, ls); a.Exit != 0 {
		t.Fatalf("another agent of the fleet was denied: %+v", a)
	}
	if _, err := st.ReleaseHalt(ctx, "f", "bob:r1", fleet.Release{At: time.Now(), By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if a := h.Handle(ctx, PreToolUse, ls); a.Exit != 0 {
		t.Fatalf("after the release: %+v", a)
	}
}
