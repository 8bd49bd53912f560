package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// haltRecord journals a halt on agent, as the supervisor does.
func haltRecord(t *testing.T, st fleet.Store, kind string, h fleet.Halt) {
	t.Helper()
	data, _ := json.Marshal(h)
	if _, err := st.AppendJournal(context.Background(), fleet.JournalRecord{Fleet: h.Fleet, Kind: kind, Agent: h.Agent, Data: data}); err != nil {
		t.Fatal(err)
	}
}

// A release whose hash is not its own, its head moved to it, releases
// nothing: what is past the break is not applied, read from the start or
// on from what was verified.
func TestWitnessHonoursNothingPastABreak(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := fleet.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := fleet.Halt{ID: "h1", Fleet: "f", Agent: "a:r1", Run: "r1", Reason: "duplicate work", By: "supervisor", At: time.Now().UTC()}
	haltRecord(t, st, fleet.JournalHalt, h)
	known, err := fleet.ReadWitness(ctx, st, "f", nil)
	if err != nil || known.Problem != nil {
		t.Fatalf("before: %v, %v", known.Problem, err)
	}
	haltRecord(t, st, fleet.JournalRelease, h)
	// The release's hash changed by hand: its content no longer matches it.
	path := fleet.JournalLocation(st, "f")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var rel map[string]any
	if err := json.Unmarshal(lines[1], &rel); err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(lines[1], []byte(rel["hash"].(string)), []byte(strings.Repeat("0", 64)), 1)
	if err := os.WriteFile(path, append(bytes.Clone(lines[0]), forged...), 0o644); err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSuffix(path, ".jsonl") + ".head"
	hd, _ := os.ReadFile(head)
	if err := os.WriteFile(head, bytes.Replace(hd, []byte(rel["hash"].(string)), []byte(strings.Repeat("0", 64)), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, from := range map[string]*fleet.Witness{"from the start": nil, "on from what was verified": &known} {
		w, err := fleet.ReadWitness(ctx, st, "f", from)
		if err != nil {
			t.Fatal(err)
		}
		if w.Problem == nil || w.Problem.Seq != 2 || w.Problem.Kind != fleet.TamperEdited {
			t.Errorf("%s: problem %v; want record 2 edited", name, w.Problem)
		}
		if _, halted := w.HaltOn("a:r1", "r1"); !halted || w.Lifts("h1") {
			t.Errorf("%s: the forged release lifted the halt (halts %v, released %v)", name, w.Halts, w.Released)
		}
	}
}

// A journal deleted with its head and round counter — the fleet's
// directory removed — releases nothing against what was verified: its
// halts hold, and the loss is named.
func TestWitnessHoldsWhatWasVerified(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := fleet.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := fleet.Halt{ID: "h1", Fleet: "f", Agent: "a:r1", Run: "r1", Reason: "duplicate work", By: "supervisor", At: time.Now().UTC()}
	haltRecord(t, st, fleet.JournalStart, fleet.Halt{Fleet: "f"})
	haltRecord(t, st, fleet.JournalHalt, h)
	known, err := fleet.ReadWitness(ctx, st, "f", nil)
	if err != nil || known.Records != 2 {
		t.Fatalf("before: %+v, %v", known, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if st, err = fleet.OpenLocal(dir); err != nil {
		t.Fatal(err)
	}
	w, err := fleet.ReadWitness(ctx, st, "f", &known)
	if err != nil {
		t.Fatal(err)
	}
	if w.Problem == nil || w.Problem.Kind != fleet.TamperDeleted || !strings.Contains(w.Problem.Detail, "the journal is missing or empty: this machine verified 2 records") {
		t.Fatalf("problem %v", w.Problem)
	}
	if got, halted := w.HaltOn("a:r1", "r1"); !halted || got.ID != "h1" {
		t.Fatalf("the halt verified before the loss does not hold: %+v", w.Halts)
	}
	// Not even a journal started again by hand, with a release of its own
	// chained correctly, lifts it: it does not hold what was verified.
	haltRecord(t, st, fleet.JournalRelease, h)
	if w, _ := fleet.ReadWitness(ctx, st, "f", &known); w.Problem == nil || w.Lifts("h1") {
		t.Fatalf("a new chain with a release: problem %v, lifts %v", w.Problem, w.Lifts("h1"))
	}
}
