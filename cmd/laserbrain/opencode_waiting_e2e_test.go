package main

// The real opencode (1.18.33) against a scripted model, laserbrain's
// plugin installed, bash set to ask: the shell call the model makes is put
// to the person (opencode's permission.asked), which the plugin hands to
// laserbrain hook notification, and the run records that it waited for a
// person. opencode run has nobody to ask and rejects the call itself; the
// model's next turn ends the session, and the wait with it.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/supercode/fleet"
)

func TestAgentOpenCodeWaitsForAPerson(t *testing.T) {
	oc := agenttest.OpenCode
	s := agenttest.NewAgent(t, oc, oc.Shell("call_ask", "touch asked-marker"), agenttest.Say("Done."))
	lb := laserbrainBinary(t)
	home := filepath.Join(s.Home, "laserbrain")
	s.Env = append(s.Env, "LASERBRAIN_HOME="+home, "LASERBRAIN_FLEET=oc-wait")
	// The session's config, bash asking the person instead of allowed.
	var cfg map[string]any
	data, err := os.ReadFile(s.UserConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["permission"] = map[string]any{"edit": "allow", "bash": "ask", "webfetch": "allow"}
	if data, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.UserConfig, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s.Install(t, lb)

	r := s.PromptVia(t, lb, []string{"run", "--agent", "oc", "--"}, "work on the task")
	if r.ExitCode != 0 {
		t.Logf("opencode exited %d\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "asked-marker")); err == nil {
		t.Fatal("the call ran: opencode did not ask (is bash set to ask?)")
	}

	st, err := fleet.OpenLocal(filepath.Join(home, "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	runs, err := st.ListRuns(ctx, fleet.RunFilter{Fleet: "oc-wait"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs of the fleet: %v %v", runs, err)
	}
	events, err := st.Events(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var waited *fleet.RunEvent
	var kinds []string
	for i, e := range events {
		kinds = append(kinds, e.Kind+"/"+e.Name)
		if e.Kind == fleet.KindWaiting {
			waited = &events[i]
		}
	}
	if waited == nil {
		t.Fatalf("no wait for a person recorded on the run; its events: %v\nopencode stderr: %s", kinds, r.Stderr)
	}
	if waited.Name != "permission.asked" || !strings.Contains(waited.Text, "bash") || !strings.Contains(waited.Text, "touch asked-marker") {
		t.Fatalf("the wait recorded: %s %q", waited.Name, waited.Text)
	}
	if _, still := fleet.Waiting(events); still {
		t.Fatalf("the run still waits after the session ended; its events: %v", kinds)
	}
}
