package pgfleet

import (
	"context"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// Version moves with every kind of change a live view shows — a run made
// and updated, an event, a message, a halt put and released, a journal
// record — and stands still while nothing changes.
func TestVersionMovesWithTheFleet(t *testing.T) {
	st := database(newDatabase(t)).Open(t).(*Store)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	last, err := st.Version(ctx, "f1")
	if err != nil {
		t.Fatal(err)
	}
	step := func(what string, change func() error) {
		t.Helper()
		if err := change(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		v, err := st.Version(ctx, "f1")
		if err != nil {
			t.Fatal(err)
		}
		if v == last {
			t.Fatalf("%s: the version stayed %s", what, v)
		}
		again, _ := st.Version(ctx, "f1")
		if again != v {
			t.Fatalf("%s: read twice without a change, the version went %s → %s", what, v, again)
		}
		last = v
	}
	step("a run made", func() error { return st.CreateRun(ctx, fleet.Run{ID: "r1", Agent: "a", Fleet: "f1", Created: now}) })
	step("a run updated", func() error {
		_, err := st.UpdateRun(ctx, "r1", func(r *fleet.Run) error { r.Checks++; return nil })
		return err
	})
	step("an event", func() error {
		_, err := st.AppendEvent(ctx, "r1", fleet.RunEvent{At: now, Kind: fleet.KindTool, Name: "Bash", Text: "ls"})
		return err
	})
	step("a message", func() error {
		_, err := st.Say(ctx, fleet.Message{ID: "m1", Fleet: "f1", Agent: "a:r1", Kind: fleet.MessageAdvice, Text: "return", At: now})
		return err
	})
	step("a halt", func() error {
		return st.PutHalt(ctx, fleet.Halt{ID: "h1", Fleet: "f1", Agent: "a:r1", Reason: "r", By: "supervisor", At: now})
	})
	step("a release", func() error {
		_, err := st.ReleaseHalt(ctx, "f1", "a:r1", fleet.Release{At: now, By: "p"})
		return err
	})
	step("a journal record", func() error {
		_, err := st.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f1", Kind: fleet.JournalRound, Round: 1, Text: "x"})
		return err
	})
}
