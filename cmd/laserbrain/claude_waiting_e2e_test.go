package main

// The real Claude Code CLI on a terminal, its hooks installed: a Bash call
// it must ask the person about puts up its permission prompt and sends its
// Notification hook, which records the run as waiting for a person; the
// person's yes runs the call, and the wait is over.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/internal/fswatch"
)

func TestClaudeWaitingForAPerson(t *testing.T) {
	s := newSupervised(t,
		agenttest.Bash("toolu_ask", "touch asked-marker"),
		agenttest.Say("Done."))
	s.TrustHome(t)
	s.installProject(t)
	// Watch the fleet store, to read the summary each time it changes.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed, err := fswatch.Watch(ctx, []string{filepath.Join(s.lbHome, "fleet")}, fswatch.Lock)
	if err != nil {
		t.Fatal(err)
	}
	waiting := func() []map[string]any {
		r := s.Run(t, s.lb, "report", "--fleet", s.Dir, "--json")
		var out struct {
			Summary struct {
				Waiting []map[string]any `json:"waiting"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatalf("report --json: %v\n%s\n%s", err, r.Stdout, r.Stderr)
		}
		return out.Summary.Waiting
	}
	until := func(what string, ok func([]map[string]any) bool) []map[string]any {
		t.Helper()
		deadline := time.After(45 * time.Second)
		// The store's change signal wakes the check; a slow tick as well,
		// for a change the watch saw before it was armed on a new tree.
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if w := waiting(); ok(w) {
				return w
			}
			select {
			case <-changed:
			case <-tick.C:
			case <-deadline:
				t.Fatalf("%s: not within 45 s (waiting: %v)", what, waiting())
			}
		}
	}

	term := s.Interactive(t, "--permission-mode", "default")
	term.WaitFor("for shortcuts")
	term.Type("work on the task")
	term.WaitFor("work on the task")
	term.Type("\r")
	term.WaitFor("Do you want to proceed?")
	w := until("the permission prompt recorded", func(w []map[string]any) bool { return len(w) == 1 })
	wt, _ := w[0]["waiting"].(map[string]any)
	if wt["kind"] != "permission_prompt" || !strings.Contains(wt["message"].(string), "Claude needs your permission") || w[0]["client"] != "Claude Code" {
		t.Fatalf("waiting: %v", w)
	}
	term.Type("\r") // 1. Yes
	term.WaitFor("Done.")
	until("the wait over once the person answered", func(w []map[string]any) bool { return len(w) == 0 })
	if tr := s.toolResult(t, "toolu_ask"); tr.IsError {
		t.Fatalf("the model was shown an error: %q", tr.Text)
	}
}
