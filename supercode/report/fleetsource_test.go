package report

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/hook"
)

// Two agents go through the real supervisor and hooks into real stores:
// checks, a file write each, a force-push the gate refuses. The fleet
// adapter must give back their checks as the instrument decided them, the
// files they wrote as footprints, the refusal with its label, and the
// collision of their grounds with the shared file as evidence.
func TestFromFleetThroughTheRealHooks(t *testing.T) {
	home, repo := t.TempDir(), t.TempDir()
	t.Setenv("LASERBRAIN_FLEET", "fleet-1")
	fl, runs := openHome(t, home)
	ctx := context.Background()
	clock := time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	agent := func(name, ground string, steps int) {
		env := map[string]string{agentrun.EnvRun: "run-" + name, agentrun.EnvAgent: name, agentrun.EnvFleet: "fleet-1"}
		sup := &agentrun.Tracker{Getenv: func(k string) string { return env[k] }, Now: now,
			Stores: agentrun.StoreFuncs{Fleet: func() (fleet.Store, error) { return fl, nil }, Runs: func() (laserbrain.Store, error) { return runs, nil }}.Open}
		if _, err := sup.Open(ctx, sup.Caller("", repo)); err != nil {
			t.Fatal(err)
		}
		for i := range steps {
			if _, err := sup.Check(ctx, "run-"+name, agentrun.CheckInput{StepInput: laserbrain.StepInput{Goal: ground, Progress: "advancing", Distance: laserbrain.Dist(8 - i)}}); err != nil {
				t.Fatal(err)
			}
		}
		h := &hook.Handler{Tracker: sup, Now: now}
		payload := func(tool string, input any) []byte {
			in, _ := json.Marshal(input)
			b, _ := json.Marshal(map[string]any{"session_id": "s-" + name, "cwd": repo, "tool_name": tool, "tool_input": json.RawMessage(in),
				"tool_use_id": "tu-" + name + tool, "tool_response": map[string]any{}})
			return b
		}
		if a := h.Handle(ctx, hook.PostToolUse, payload("Write", map[string]string{"file_path": filepath.Join(repo, "src", "parser.py")})); a.Exit != 0 {
			t.Fatalf("post-tool-use: %+v", a)
		}
		if a := h.Handle(ctx, hook.PostToolUse, payload("Edit", map[string]string{"file_path": filepath.Join(repo, name+".md")})); a.Exit != 0 {
			t.Fatalf("post-tool-use: %+v", a)
		}
		if name == "a1" {
			if a := h.Handle(ctx, hook.PreToolUse, payload("Bash", map[string]string{"command": "git push --force origin main"})); a.Exit != 2 {
				t.Fatalf("the force-push was not denied: %+v", a)
			}
		}
		if err := sup.Close(); err != nil {
			t.Fatal(err)
		}
	}
	agent("a1", "write a JSON parser in Python", 3)
	agent("a2", "write a fast JSON parser in Python", 2)

	agents, gate, err := FromFleet(ctx, fl, runs, "fleet-1", repo)
	if err != nil {
		t.Fatal(err)
	}
	// Named as the supervisor names them: <agent>:<run id>.
	if len(agents) != 2 || agents[0].Name != "a1:run-a1" || agents[1].Name != "a2:run-a2" {
		t.Fatalf("agents %+v", agents)
	}
	for _, a := range agents {
		lr, err := runs.ReadRun(ctx, fleet.TaskID(a.Run, 1))
		if err != nil {
			t.Fatal(err)
		}
		hist := lr.Steps()
		if len(a.Steps) != len(hist) || a.Steps[0].Reason != "grounded" {
			t.Errorf("%s: %d steps, the run has %d", a.Name, len(a.Steps), len(hist))
		}
		for i := range hist {
			if a.Steps[i].Reason != hist[i].Reason || a.Steps[i].Phi != hist[i].Phi {
				t.Errorf("%s step %d: %+v, history %+v", a.Name, i+1, a.Steps[i], hist[i])
			}
		}
		if strings.Join(a.Footprint, ",") != a.Run[len("run-"):]+".md,src/parser.py" {
			t.Errorf("%s footprint %v", a.Name, a.Footprint)
		}
	}
	if len(gate) != 1 || gate[0].Agent != "a1:run-a1" || gate[0].Decision != operator.Deny || gate[0].Tool != "Bash" {
		t.Fatalf("gate %+v", gate)
	}
	if gate[0].Role != "executed" || gate[0].Presence != "unknown" {
		t.Errorf("the refusal's role %q, presence %q; want executed, unknown", gate[0].Role, gate[0].Presence)
	}
	if len(gate[0].Labels) == 0 || !strings.Contains(strings.Join(gate[0].Labels, " "), "force") {
		t.Errorf("the refusal's labels %q (reason %q)", gate[0].Labels, gate[0].Reason)
	}
	t.Logf("labels %q from %q", gate[0].Labels, gate[0].Reason)
	cols := FindCollisions(agents)
	if len(cols) != 1 || strings.Join(cols[0].SharedFiles, ",") != "src/parser.py" {
		t.Errorf("collisions %+v", cols)
	}
}

// openHome opens the local fleet and run stores of the laserbrain home
// home.
func openHome(t *testing.T, home string) (*fleet.Local, *localstore.Store) {
	t.Helper()
	fl, err := fleet.OpenLocal(filepath.Join(home, "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := localstore.Open(localstore.Paths{Home: home, Config: home})
	if err != nil {
		t.Fatal(err)
	}
	return fl, runs
}
