package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// A user prompt queued while the store was out of reach and replayed after
// a check was answered marks no user turn: that check has been answered
// without it, and the next check is the agent's own. A prompt queued after
// the check (the control) is the user's turn for the next one.
func TestReplayedPromptAfterACheckIsNoUserTurn(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		promptAt time.Time
		want     bool
	}{
		{"spoken before the check, recorded after it", t0.Add(-time.Minute), false},
		{"spoken after the check", t0.Add(time.Minute), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, home := newHandler(t, map[string]string{agentrun.EnvRun: "r-replay", agentrun.EnvFleet: "f"})
			h.QueueDir = QueueDirOf(home)
			h.Client = client.Claude
			ctx := context.Background()
			cwd := t.TempDir()
			now := t0
			h.Tracker.Now = func() time.Time { return now }
			prompt := []byte(`{"session_id":"s-r","cwd":"` + cwd + `","hook_event_name":"UserPromptSubmit","prompt":"now fix the importer"}`)
			// The run and its first check, at t0.
			if a := h.Handle(ctx, UserPromptSubmit, prompt); a.Exit != 0 {
				t.Fatalf("prompt: %+v", a)
			}
			in := agentrun.CheckInput{StepInput: laserbrain.StepInput{Goal: "fix the importer", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(5)}}
			out, err := h.Tracker.Check(ctx, "r-replay", in)
			if err != nil || !out.UserTurn {
				t.Fatalf("first check: %+v %v; want it to take the prompt's user turn", out, err)
			}
			// A prompt kept in the queue (the store was out of reach when it
			// was spoken), replayed now.
			kept := &event{Payload: client.Payload{Name: UserPromptSubmit}, arrived: tc.promptAt, input: prompt}
			if err := h.enqueue(kept, nil); err != nil {
				t.Fatal(err)
			}
			if n, err := h.Flush(ctx); err != nil || n != 1 {
				t.Fatalf("flush: %d %v; want the one prompt replayed", n, err)
			}
			st, err := h.Tracker.Fleet()
			if err != nil {
				t.Fatal(err)
			}
			r, err := st.Run(ctx, "r-replay")
			if err != nil {
				t.Fatal(err)
			}
			if r.UserTurn != tc.want {
				t.Fatalf("user turn after the replay = %v, want %v (last check at %v, prompt at %v)", r.UserTurn, tc.want, r.Last.At, tc.promptAt)
			}
		})
	}
}

// An event queued because the store did not answer in time is dated when
// it came, not when the hook gave up on the store: a prompt spoken before a
// check that the store was too slow to take is replayed as before it.
func TestQueuedEventKeepsItsArrivalTime(t *testing.T) {
	h, home := newHandler(t, map[string]string{agentrun.EnvRun: "r-slow", agentrun.EnvFleet: "f"})
	h.QueueDir = QueueDirOf(home)
	arrived := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	now := arrived
	h.Now = func() time.Time { return now }
	h.Tracker.Now = h.Now
	stores := homeStores(home)
	stores.Fleet = func() (fleet.Store, error) {
		now = now.Add(4 * time.Second) // the store's deadline, spent
		return nil, fmt.Errorf("the fleet store: %w", laserbrain.ErrUnavailable)
	}
	h.Tracker.Stores = stores.Open
	prompt := `{"session_id":"s-slow","cwd":"` + t.TempDir() + `","hook_event_name":"UserPromptSubmit","prompt":"now fix the importer"}`
	if a := h.Handle(context.Background(), UserPromptSubmit, []byte(prompt)); a.Exit != 0 {
		t.Fatalf("an observer with the store out of reach: %+v; want it answered and queued", a)
	}
	data, err := os.ReadFile(filepath.Join(h.QueueDir, "pending.jsonl"))
	if err != nil {
		t.Fatalf("nothing queued: %v", err)
	}
	var q queued
	if err := json.Unmarshal(bytes.TrimSpace(data), &q); err != nil {
		t.Fatalf("the queue holds %q: %v", data, err)
	}
	if !q.At.Equal(arrived) || !now.After(arrived) {
		t.Fatalf("queued at %v, the event came at %v (the clock is now %v)", q.At, arrived, now)
	}
}

// A prompt whose hook the client stopped waiting for (a slow store under
// a broker) and that is written after the agent's next check was answered
// marks no user turn either: it is dated when it came.
func TestLatePromptAfterACheckIsNoUserTurn(t *testing.T) {
	h, _ := newHandler(t, map[string]string{agentrun.EnvRun: "r-late", agentrun.EnvFleet: "f"})
	ctx := context.Background()
	cwd := t.TempDir()
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	now := t0
	h.Now = func() time.Time { return now }
	h.Tracker.Now = h.Now
	prompt := []byte(`{"session_id":"s-l","cwd":"` + cwd + `","hook_event_name":"UserPromptSubmit","prompt":"fix the importer"}`)
	if a := h.Handle(ctx, UserPromptSubmit, prompt); a.Exit != 0 {
		t.Fatalf("prompt: %+v", a)
	}
	in := agentrun.CheckInput{StepInput: laserbrain.StepInput{Goal: "fix the importer", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(5)}}
	now = t0.Add(time.Second)
	if _, err := h.Tracker.Check(ctx, "r-late", in); err != nil {
		t.Fatal(err)
	}
	// The second prompt came at t0+2s; its hook reaches the store at t0+9s,
	// after the check at t0+5s.
	h.Tracker.Now = func() time.Time { return t0.Add(5 * time.Second) }
	if _, err := h.Tracker.Check(ctx, "r-late", in); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(2 * time.Second)
	arrived := now
	h.Now = func() time.Time { return t0.Add(9 * time.Second) }
	p, err := h.decode(mustAdapter(t, h), UserPromptSubmit, prompt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.userPromptSubmit(ctx, &event{Payload: p, arrived: arrived}); err != nil {
		t.Fatal(err)
	}
	st, _ := h.Tracker.Fleet()
	r, err := st.Run(ctx, "r-late")
	if err != nil || r.UserTurn {
		t.Fatalf("run after the late prompt: user turn %v (%v); want none", r.UserTurn, err)
	}
}

func mustAdapter(t *testing.T, h *Handler) client.Adapter {
	t.Helper()
	ad, err := h.adapter()
	if err != nil {
		t.Fatal(err)
	}
	return ad
}
