package fleet

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rotFixture is a local store with fleet f's journal: a halt (1), three
// rounds (2–4), a checkpoint (5) and a round (6); known is what a machine
// verified of it at record 4.
type rotFixture struct {
	t     *testing.T
	l     *Local
	known Witness
}

func newRotFixture(t *testing.T) *rotFixture {
	t.Helper()
	l, err := OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	x := &rotFixture{t: t, l: l}
	x.add(JournalHalt, Halt{ID: "h1", Fleet: "f", Agent: "a:r1", Reason: "yields"})
	for i := 0; i < 3; i++ {
		x.add(JournalRound, map[string]int{"n": i})
	}
	if x.known, err = ReadWitness(context.Background(), l, "f", nil); err != nil || len(x.known.Halts) != 1 || x.known.Records != 4 {
		t.Fatalf("the fixture's witness: %+v, %v", x.known, err)
	}
	x.add(JournalCheckpoint, map[string]int{"round": 3})
	x.add(JournalRound, map[string]int{"n": 4})
	return x
}

func (x *rotFixture) add(kind string, data any) JournalRecord {
	x.t.Helper()
	b, _ := json.Marshal(data)
	rec, err := x.l.AppendJournal(context.Background(), JournalRecord{Fleet: "f", Kind: kind, Text: kind, Data: b})
	if err != nil {
		x.t.Fatal(err)
	}
	return rec
}

func (x *rotFixture) rotate(at int64) {
	x.t.Helper()
	if ok, err := x.l.RotateJournal(context.Background(), "f", at, 1); err != nil || !ok {
		x.t.Fatalf("RotateJournal(%d): %v, %v", at, ok, err)
	}
}

// witness reads the witness on from what the machine verified.
func (x *rotFixture) witness() Witness {
	x.t.Helper()
	w, err := ReadWitness(context.Background(), x.l, "f", &x.known)
	if err != nil {
		x.t.Fatal(err)
	}
	return w
}

// A rotation archives the records before a checkpoint and the journal goes
// on from it: the live journal verifies from its checkpoint, the archive
// chains into it, the two read together verify as one journal from seq 1,
// and a machine that verified records now archived reads on across the
// rotation — no loss, its halt held until a journaled release, which is
// honoured. A second rotation chains on to the first.
func TestRotationIsNotALoss(t *testing.T) {
	ctx := context.Background()
	x := newRotFixture(t)
	x.rotate(5)
	live, err := x.l.JournalRecords(ctx, "f", 0)
	if err != nil || len(live) != 3 || live[0].Seq != 5 || live[2].Kind != JournalRotate {
		t.Fatalf("the live journal after the rotation: %d records from %d, %v", len(live), JournalFrom(live), err)
	}
	check := func(archived int64) {
		t.Helper()
		c, err := CheckJournal(ctx, x.l, "f")
		if err != nil || c.Problem != nil {
			t.Fatalf("CheckJournal: %v, %v", c.Problem, err)
		}
		n, p, err := CheckArchive(ctx, x.l, "f", c.Records)
		if err != nil || p != nil || n != archived {
			t.Fatalf("CheckArchive: %d archived, %v, %v", n, p, err)
		}
		all, missing, err := ReadJournal(ctx, x.l, "f")
		if err != nil || missing != nil {
			t.Fatal(err, missing)
		}
		if _, p := verifyChain(all, 1, "", c.Head); p != nil || int64(len(all)) != c.Head.Records {
			t.Fatalf("archive and journal read as one: %d records, %v", len(all), p)
		}
	}
	check(4)
	w := x.witness()
	if w.Problem != nil || len(w.Halts) != 1 || w.Records != 7 {
		t.Fatalf("read on across the rotation: %+v", w)
	}
	if w0, err := ReadWitness(ctx, x.l, "f", nil); err != nil || w0.Problem != nil || len(w0.Halts) != 1 || w0.Halts[0].ID != "h1" {
		t.Fatalf("read from the live journal alone: %+v, %v", w0, err)
	}
	x.add(JournalRelease, Halt{ID: "h1", Fleet: "f", Agent: "a:r1"})
	x.add(JournalCheckpoint, map[string]int{"round": 5})
	x.add(JournalRound, map[string]int{"n": 6})
	x.rotate(9)
	check(8)
	if w := x.witness(); w.Problem != nil || !w.Lifts("h1") || len(w.Halts) != 0 {
		t.Fatalf("across two rotations, after the release: %+v", w)
	}
	if w0, err := ReadWitness(ctx, x.l, "f", nil); err != nil || !w0.Lifts("h1") {
		t.Fatalf("the second rotation's witness: %+v, %v", w0, err)
	}
	// Appends go on after a rotation, each acknowledged.
	x.add(JournalRound, map[string]int{"n": 7})
	check(8)
}

// An archive segment deleted or changed is named by the archive's check,
// and a machine that verified records in it no longer reads on: its halt
// holds.
func TestArchiveMissingOrAltered(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, kind string
		damage     func(t *testing.T, seg string)
	}{
		{"deleted", TamperDeleted, func(t *testing.T, seg string) {
			if err := os.Remove(seg); err != nil {
				t.Fatal(err)
			}
		}},
		{"altered", TamperEdited, func(t *testing.T, seg string) {
			lines := gunzip(t, seg)
			// Record 4, the one the machine verified last.
			i := bytes.LastIndex(lines, []byte(`"text":"round"`))
			lines = append(lines[:i:i], append([]byte(`"text":"ROUND"`), lines[i+len(`"text":"round"`):]...)...)
			writeGzip(t, seg, lines)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newRotFixture(t)
			x.rotate(5)
			seg := filepath.Join(x.l.archiveDir("f"), segmentName(1, 4))
			tc.damage(t, seg)
			c, err := CheckJournal(ctx, x.l, "f")
			if err != nil || c.Problem != nil {
				t.Fatalf("the live journal still holds: %v, %v", c.Problem, err)
			}
			_, p, err := CheckArchive(ctx, x.l, "f", c.Records)
			if err != nil || p == nil || p.Kind != tc.kind {
				t.Fatalf("CheckArchive: %+v, %v; want %s", p, err, tc.kind)
			}
			w := x.witness()
			if w.Problem == nil || len(w.Halts) != 1 || w.Halts[0].ID != "h1" {
				t.Fatalf("a machine that verified archived records: %+v", w)
			}
		})
	}
}

// A "rotation" forged by hand — the records before a checkpoint cut and a
// rotation record appended that archives nothing the store holds, its
// witness without the halt, the head rewritten to match — is a loss to a
// machine that verified the records cut: its halt holds, and the archive's
// check names the missing segment.
func TestForgedRotationIsALoss(t *testing.T) {
	ctx := context.Background()
	x := newRotFixture(t)
	recs, err := x.l.JournalRecords(ctx, "f", 0)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(Rotation{From: 1, To: 4, Segment: segmentName(1, 4), LastHash: recs[3].Hash, Witness: Witness{Fleet: "f", Records: 4, Hash: recs[3].Hash}})
	forged, err := SealJournal(JournalRecord{Seq: 7, At: recs[5].At, Fleet: "f", Kind: JournalRotate, Text: "records 1–4 archived", Data: body}, recs[5].Hash)
	if err != nil {
		t.Fatal(err)
	}
	var file []byte
	for _, r := range append(recs[4:], forged) {
		file = append(append(file, r.Raw...), '\n')
	}
	path := x.l.journalPath("f", ".jsonl")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(x.l.journalPath("f", ".head"), localHead{Fleet: "f", JournalHead: JournalHead{Records: 7, Hash: forged.Hash}, Size: int64(len(file))}); err != nil {
		t.Fatal(err)
	}
	c, err := CheckJournal(ctx, x.l, "f")
	if err != nil || c.Problem != nil {
		t.Fatalf("the forged live journal chains (a consistent forgery of it): %v, %v", c.Problem, err)
	}
	w := x.witness()
	if w.Problem == nil || w.Problem.Kind != TamperDeleted || len(w.Halts) != 1 || !strings.Contains(w.Problem.Detail, "missing") {
		t.Fatalf("a forged rotation read on from what the machine verified: %+v", w)
	}
	if _, p, err := CheckArchive(ctx, x.l, "f", c.Records); err != nil || p == nil || p.Kind != TamperDeleted {
		t.Fatalf("CheckArchive: %+v, %v", p, err)
	}
	// Cut without even a rotation record: the journal itself no longer holds.
	if err := os.WriteFile(path, file[:len(file)-len(forged.Raw)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	_ = writeJSON(x.l.journalPath("f", ".head"), localHead{Fleet: "f", JournalHead: JournalHead{Records: 6, Hash: recs[5].Hash}, Size: int64(len(file) - len(forged.Raw) - 1)})
	if c, err := CheckJournal(ctx, x.l, "f"); err != nil || c.Problem == nil || c.Problem.Kind != TamperDeleted {
		t.Fatalf("a journal starting at seq 5 with no rotation: %+v, %v", c.Problem, err)
	}
}

// A crash after the journal was replaced and before its head's size moved
// is finished by the next append.
func TestRotationFinishedAfterACrash(t *testing.T) {
	x := newRotFixture(t)
	before, err := x.l.readHead("f")
	if err != nil {
		t.Fatal(err)
	}
	x.rotate(5)
	after, _ := x.l.readHead("f")
	// The head as the crash left it: the rotation record counted, the
	// size still the whole journal's.
	recs, _ := x.l.JournalRecords(context.Background(), "f", 0)
	rot, _ := rotationOf(recs[len(recs)-1])
	crashed := after
	crashed.Size = after.Size + rot.Bytes
	if err := writeJSON(x.l.journalPath("f", ".head"), crashed); err != nil {
		t.Fatal(err)
	}
	x.add(JournalRound, map[string]int{"n": 9})
	if c, err := CheckJournal(context.Background(), x.l, "f"); err != nil || c.Problem != nil || c.Head.Records != before.Records+2 {
		t.Fatalf("after the crash and an append: %+v, %v", c.Problem, err)
	}
}

func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeGzip(t *testing.T, path string, b []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
