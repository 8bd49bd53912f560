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
	st := localDir(dir).Open(t)
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
	st := localDir(dir).Open(t)
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

// TestMachineReadAgainOnlyWhenChanged: a process keeps what it read of
// machine.json and reads the file again only when another one is there —
// another inode, size or modification time — or when the file was
// written so close to the read that the file system's clock could not
// tell a later write apart. Shown by changing the bytes behind the
// stamp's back: in place, the same size, the time set back as it was.
func TestMachineReadAgainOnlyWhenChanged(t *testing.T) {
	home := t.TempDir()
	t.Setenv("LASERBRAIN_HOME", home)
	path, err := fleet.MachinePath()
	if err != nil {
		t.Fatal(err)
	}
	halt := func(agent string) string {
		m := fleet.Machine{InForce: []fleet.KnownHalt{{Halt: fleet.Halt{ID: "h", Fleet: "f", Agent: agent, Reason: "r"}, ReadAt: time.Unix(0, 0).UTC()}}}
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	agentOf := func() string {
		m := fleet.ReadMachine()
		if m.Damaged != nil || len(m.InForce) != 1 {
			t.Fatalf("ReadMachine = %+v", m)
		}
		return m.InForce[0].Agent
	}
	settled := time.Now().Add(-time.Hour).Truncate(time.Second)
	write := func(data string, mod time.Time) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte(data), 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	write(halt("a:1"), settled)
	if got := agentOf(); got != "a:1" {
		t.Fatalf("first read: %s", got)
	}
	// Changed in place behind the stamp: the kept read stands, so the
	// file was not read again.
	write(halt("b:1"), settled)
	if got := agentOf(); got != "a:1" {
		t.Fatalf("the same stamp read the file again (%s)", got)
	}
	// A new modification time: read again.
	write(halt("c:1"), settled.Add(time.Second))
	if got := agentOf(); got != "c:1" {
		t.Fatalf("a new modification time: %s", got)
	}
	// Another size: read again.
	write(halt("dd:1"), settled.Add(time.Second))
	if got := agentOf(); got != "dd:1" {
		t.Fatalf("another size: %s", got)
	}
	// Another inode (replaced by rename, as writers do), the same size and time.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(halt("ee:1")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, settled.Add(time.Second), settled.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if got := agentOf(); got != "ee:1" {
		t.Fatalf("another inode: %s", got)
	}
	// Written just now: even the same stamp is not trusted yet.
	now := time.Now()
	write(halt("ff:1"), now)
	if got := agentOf(); got != "ff:1" {
		t.Fatalf("a fresh file: %s", got)
	}
	write(halt("gg:1"), now)
	if got := agentOf(); got != "gg:1" {
		t.Fatalf("a file written as it was read, its stamp unchanged: %s", got)
	}
	// What a caller changes on its copy is not what the next one reads.
	m := fleet.ReadMachine()
	m.InForce[0].Agent = "changed"
	m.InForce = append(m.InForce, fleet.KnownHalt{})
	if got := agentOf(); got != "gg:1" {
		t.Fatalf("a caller's change reached the next read: %s", got)
	}
}
