package main

// The real Claude Code CLI on a terminal under laserbrain run: the model
// force-pushes, which reaches nothing from inside the boundary. The hook
// asks the person in Claude Code's own prompt, with the call rewritten
// into laserbrain act and a one-use pass only the supervisor keeps; the
// person's yes has the supervisor carry the push out, outside the
// boundary, and the remote on the loopback moves. Their no leaves it
// where it was.

import (
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/agenttest"
)

func TestClaudeApprovedPushGoesThroughAct(t *testing.T) {
	needTools(t, "git", "python3", "script")
	lb, _ := confinedBinaries(t)
	for _, tc := range []struct {
		name    string
		approve bool
	}{{"approved", true}, {"refused", false}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSupervised(t, agenttest.Bash("toolu_push", "git push -f origin HEAD:main"), agenttest.Say("Pushed, done."))
			s.lb = lb
			s.TrustHome(t)
			remote := claudePushWorld(t, s.Dir)
			before := refs(t, remote)
			term := s.InteractiveVia(t, s.lb, "run", "--agent", "pusher", "--", s.Claude, "--permission-mode", "default")
			term.Started()
			term.Type("ship it")
			term.WaitFor("ship it")
			term.Type("\r")
			term.WaitFor("Do you want to proceed?")
			screen := term.Screen()
			if !strings.Contains(screen, "act --pass") || !strings.Contains(screen, "git push -f origin HEAD:main") {
				t.Fatalf("the person was not shown the call rewritten into laserbrain act; the screen:\n%s", tail(screen))
			}
			for _, r := range s.Model.Requests() {
				if strings.Contains(string(r.Body), "--pass") {
					t.Fatal("the model was sent the pass before the call ran")
				}
			}
			if tc.approve {
				term.Type("\r") // 1. Yes
				// The model's second turn is asked for once the call's
				// result is in (the screen may draw its words with a
				// character moved over).
				played(t, s.Model, 2)
			} else {
				term.Type("\x1b") // Esc: no
				term.WaitForAny("What should Claude do instead?", "Interrupted", "do instead")
			}
			after := refs(t, remote)
			if tc.approve {
				tr := s.toolResult(t, "toolu_push")
				if after == before || tr.IsError {
					t.Fatalf("approved, the push did not land through act (is_error=%v %q)\nbefore %s\nafter  %s", tr.IsError, tr.Text, before, after)
				}
				// Witnessed, with what let it out.
				log := s.Run(t, s.lb, "supervise", "log", "--json").Stdout
				if !strings.Contains(log, "approval in their client") {
					t.Errorf("the journal does not say the person's approval let the act out:\n%s", clipOut(log))
				}
				return
			}
			if after != before {
				t.Fatalf("refused in the prompt, the remote moved anyway:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// played waits up to a minute for the model to have played n turns.
func played(t *testing.T, m *agenttest.Model, n int) {
	t.Helper()
	deadline := time.After(time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for m.Played() < n {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the model played %d turns within a minute, want %d:\n%s", m.Played(), n, m.Trace())
		}
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}
