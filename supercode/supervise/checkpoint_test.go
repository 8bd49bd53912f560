package supervise

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// countingFleet counts the journal records a supervisor reads.
type countingFleet struct {
	*fleet.Local
	read int
}

func (c *countingFleet) JournalRecords(ctx context.Context, fl string, after int64) ([]fleet.JournalRecord, error) {
	recs, err := c.Local.JournalRecords(ctx, fl, after)
	c.read += len(recs)
	return recs, err
}

// openCounting opens a supervisor on o through a counting store.
func (o onceFleet) openCounting(t *testing.T) (*Supervisor, *countingFleet, error) {
	t.Helper()
	fl, runs := o.stores(t)
	t.Cleanup(func() { runs.Close() })
	c := &countingFleet{Local: fl}
	s, err := Open(context.Background(), Options{Repo: o.repo, FleetID: "bench", Fleet: c, Runs: runs, EscalateAfter: -1})
	return s, c, err
}

// fullFold is what the whole journal amounts to, read from its first
// record: the state a start must arrive at from a checkpoint too.
func fullFold(t *testing.T, o onceFleet) resumeState {
	t.Helper()
	fl, _ := o.stores(t)
	recs, err := fl.JournalRecords(context.Background(), "bench", 0)
	if err != nil {
		t.Fatal(err)
	}
	var st resumeState
	for _, r := range recs {
		st.apply(r)
	}
	return st
}

func journalOf(t *testing.T, o onceFleet) []fleet.JournalRecord {
	t.Helper()
	fl, _ := o.stores(t)
	recs, err := fl.JournalRecords(context.Background(), "bench", 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// A start resumes from the last checkpoint: it reads a bounded tail of a
// long journal and arrives at exactly what reading the journal whole
// gives; rounds journal the agents that changed, not the fleet; a round
// that saw nothing new journals nothing.
func TestStartFromCheckpoint(t *testing.T) {
	old := CheckpointEvery
	CheckpointEvery = 8
	t.Cleanup(func() { CheckpointEvery = old })
	o := buildFleetOf(t, t.TempDir(), 6, 5)
	for i := 0; i < 60; i++ {
		o.check(t, i)
		o.once(t)
	}
	recs := journalOf(t, o)
	kinds := map[string]int{}
	for _, r := range recs {
		kinds[r.Kind]++
	}
	if kinds[fleet.JournalCheckpoint] < 5 || kinds[fleet.JournalRound] != 60 {
		t.Fatalf("journal kinds after 60 --once: %v", kinds)
	}
	// The first round lists every agent; each later one the agent that
	// made a check.
	var rounds []roundData
	for _, r := range recs {
		if r.Kind == fleet.JournalRound {
			var d roundData
			if err := json.Unmarshal(r.Data, &d); err != nil {
				t.Fatal(err)
			}
			rounds = append(rounds, d)
		}
	}
	if len(rounds[0].Agents) != 6 || rounds[0].Unchanged != 0 {
		t.Fatalf("the first round journals %d agents, %d unchanged", len(rounds[0].Agents), rounds[0].Unchanged)
	}
	for i, d := range rounds[1:] {
		if len(d.Agents) != 1 || d.Unchanged != 5 || d.Agents[0].Agent != "agent:"+fmtRun((i+1)%6) {
			t.Fatalf("round %d journals %+v, %d unchanged; want the one agent that checked", i+2, d.Agents, d.Unchanged)
		}
	}
	// Nothing new: nothing journaled.
	o.once(t)
	if n := len(journalOf(t, o)); n != len(recs) {
		t.Fatalf("a round that saw nothing new journaled %d records", n-len(recs))
	}
	s, c, err := o.openCounting(t)
	if err != nil {
		t.Fatal(err)
	}
	if c.read > int(4*CheckpointEvery) || len(recs) < 3*int(4*CheckpointEvery) {
		t.Fatalf("the start read %d of %d records", c.read, len(recs))
	}
	want := fullFold(t, o)
	if s.fold.Round != want.Round || s.fold.Seen != want.Seen || len(s.fold.Agents) != len(want.Agents) || s.fold.Route != want.Route {
		t.Fatalf("from the checkpoint: round %d seen %d, %d agents; whole: round %d seen %d, %d agents", s.fold.Round, s.fold.Seen, len(s.fold.Agents), want.Round, want.Seen, len(want.Agents))
	}
	for name, line := range want.Agents {
		if !s.fold.Agents[name].same(line) {
			t.Fatalf("%s: %+v from the checkpoint, %+v from the whole journal", name, s.fold.Agents[name], line)
		}
	}
}

func fmtRun(i int) string { return "run0" + string(rune('0'+i)) }

// rewrite changes the journal's line for record seq with edit, in place.
func rewrite(t *testing.T, o onceFleet, seq int64, edit func([]byte) []byte) {
	t.Helper()
	fl, _ := o.stores(t)
	path := fl.JournalLocation("bench")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		var r struct {
			Seq int64 `json:"seq"`
		}
		if json.Unmarshal(l, &r) == nil && r.Seq == seq {
			lines[i] = edit(l)
		}
	}
	if err := os.WriteFile(path, bytes.Join(lines, []byte("\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A tampered checkpoint or a tampered record after it stops a start (the
// chain from the checkpoint to the witnessed head no longer holds); a
// record edited before the checkpoint is not read by a start, and laserbrain
// supervise verify (CheckJournal, the whole journal) names it.
func TestCheckpointTampering(t *testing.T) {
	old := CheckpointEvery
	CheckpointEvery = 8
	t.Cleanup(func() { CheckpointEvery = old })
	build := func(t *testing.T) (onceFleet, int64) {
		o := buildFleetOf(t, t.TempDir(), 4, 3)
		for i := 0; i < 30; i++ {
			o.check(t, i)
			o.once(t)
		}
		var last int64
		for _, r := range journalOf(t, o) {
			if r.Kind == fleet.JournalCheckpoint {
				last = r.Seq
			}
		}
		if last < 10 {
			t.Fatalf("no checkpoint late enough: %d", last)
		}
		// One more round, so that records follow the last checkpoint.
		o.check(t, 31)
		o.once(t)
		return o, last
	}
	broken := func(t *testing.T, o onceFleet, what string) {
		t.Helper()
		_, _, err := o.openCounting(t)
		if !errors.Is(err, fleet.ErrJournalBroken) {
			t.Fatalf("a start after %s: %v, want the journal refused as broken", what, err)
		}
	}
	t.Run("checkpoint edited", func(t *testing.T) {
		o, cp := build(t)
		rewrite(t, o, cp, func(l []byte) []byte { return bytes.Replace(l, []byte(`"round":`), []byte(`"round":1`), 1) })
		broken(t, o, "the checkpoint was edited")
	})
	t.Run("checkpoint replaced", func(t *testing.T) {
		// A checkpoint rewritten with its own hash recomputed: the next
		// record no longer follows it.
		o, cp := build(t)
		rewrite(t, o, cp, func(l []byte) []byte {
			var r fleet.JournalRecord
			if err := json.Unmarshal(l, &r); err != nil {
				t.Fatal(err)
			}
			r.Data = json.RawMessage(`{"round":0,"seen":0,"asked":["drift:agent:run00:1"],"answered":[],"questions":[],"marked":[],"halts":[],"agents":{},"route":""}`)
			forged, err := fleet.SealJournal(r, r.Prev)
			if err != nil {
				t.Fatal(err)
			}
			return forged.Raw
		})
		broken(t, o, "the checkpoint was rewritten and rehashed")
	})
	t.Run("after the checkpoint", func(t *testing.T) {
		o, cp := build(t)
		rewrite(t, o, cp+1, func(l []byte) []byte { return bytes.Replace(l, []byte(`"text":"`), []byte(`"text":"X`), 1) })
		broken(t, o, "a record after the checkpoint was edited")
	})
	t.Run("before the checkpoint", func(t *testing.T) {
		o, cp := build(t)
		rewrite(t, o, cp-3, func(l []byte) []byte { return bytes.Replace(l, []byte(`"text":"`), []byte(`"text":"X`), 1) })
		if _, _, err := o.openCounting(t); err != nil {
			t.Fatalf("a start does not read before its checkpoint, yet: %v", err)
		}
		fl, _ := o.stores(t)
		c, err := fleet.CheckJournal(context.Background(), fl, "bench")
		if err != nil {
			t.Fatal(err)
		}
		if c.Problem == nil || c.Problem.Seq != cp-3 || c.Problem.Kind != fleet.TamperEdited {
			t.Fatalf("verify: %+v, want record %d edited", c.Problem, cp-3)
		}
	})
	t.Run("counter ahead of the journal", func(t *testing.T) {
		// The journal cut back to before its checkpoint, head and all: the
		// round counter's mark names a record that is gone.
		o, cp := build(t)
		fl, _ := o.stores(t)
		path := fl.JournalLocation("bench")
		data, _ := os.ReadFile(path)
		lines := bytes.SplitAfter(data, []byte("\n"))
		cut := bytes.Join(lines[:cp-2], nil)
		if err := os.WriteFile(path, cut, 0o644); err != nil {
			t.Fatal(err)
		}
		var last fleet.JournalRecord
		_ = json.Unmarshal(lines[cp-3], &last)
		head, _ := json.Marshal(map[string]any{"fleet": "bench", "records": last.Seq, "hash": last.Hash, "size": len(cut)})
		if err := os.WriteFile(filepath.Join(filepath.Dir(path), filepath.Base(path[:len(path)-len(".jsonl")])+".head"), head, 0o644); err != nil {
			t.Fatal(err)
		}
		broken(t, o, "the journal was cut back with its head")
	})
}

// The questions and halts a checkpoint carries are what the whole journal
// says: a question asked and not answered is asked again after a start
// from a checkpoint, one answered is not.
func TestCheckpointCarriesQuestions(t *testing.T) {
	st := resumeState{}
	recs := []fleet.JournalRecord{
		{Seq: 1, Kind: fleet.JournalEscalation, Data: json.RawMessage(`{"id":"q1","kind":"drift","who":"a"}`)},
		{Seq: 2, Kind: fleet.JournalEscalation, Data: json.RawMessage(`{"id":"q2","kind":"collision","agents":["a","b"]}`)},
		{Seq: 3, Kind: fleet.JournalAnswer, Data: json.RawMessage(`{"id":"q1","exit":0}`)},
		{Seq: 4, Kind: fleet.JournalAnswer, Data: json.RawMessage(`{"id":"q2","exit":1}`)},
		{Seq: 5, Kind: fleet.JournalHalt, Round: 7, Data: json.RawMessage(`{"id":"h7","fleet":"f","agent":"b","reason":"r"}`)},
	}
	for _, r := range recs[:3] {
		st.apply(r)
	}
	// Through a checkpoint's JSON and back, then the rest.
	data, _ := json.Marshal(st)
	var back resumeState
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[3:] {
		back.apply(r)
	}
	var whole resumeState
	for _, r := range recs {
		whole.apply(r)
	}
	a, _ := json.Marshal(back)
	b, _ := json.Marshal(whole)
	if !bytes.Equal(a, b) {
		t.Fatalf("through a checkpoint:\n%s\nwhole:\n%s", a, b)
	}
	if len(whole.Questions) != 1 || whole.Questions[0].ID != "q2" || !slices.Equal(whole.Answered, []string{"q1"}) ||
		len(whole.Halts) != 1 || whole.Round != 7 {
		t.Fatalf("%s", b)
	}
}

// A supervised fleet's journal rotates at a checkpoint the round counter
// has seen once the records before it take RotateBytes: the live journal
// stays bounded, the archive chains into it, a start after a rotation
// resumes from the journal as if it had read it whole, and the journal,
// archive and all, verifies from seq 1.
func TestJournalRotates(t *testing.T) {
	oldEvery, oldBytes := CheckpointEvery, RotateBytes
	CheckpointEvery, RotateBytes = 8, 4<<10
	t.Cleanup(func() { CheckpointEvery, RotateBytes = oldEvery, oldBytes })
	o := buildFleetOf(t, t.TempDir(), 6, 5)
	ctx := context.Background()
	fl, _ := o.stores(t)
	var largest int64
	for i := 0; i < 80; i++ {
		o.check(t, i)
		o.once(t)
		if info, err := os.Stat(fl.JournalLocation("bench")); err == nil {
			largest = max(largest, info.Size())
		}
	}
	live := journalOf(t, o)
	first := fleet.JournalFrom(live)
	c, err := fleet.CheckJournal(ctx, fl, "bench")
	if err != nil || c.Problem != nil {
		t.Fatalf("the rotated journal: %v, %v", c.Problem, err)
	}
	archived, p, err := fleet.CheckArchive(ctx, fl, "bench", c.Records)
	if err != nil || p != nil || archived != first-1 || first < 50 {
		t.Fatalf("the archive: %d records (the journal starts at %d), %v, %v", archived, first, p, err)
	}
	if largest > 3*RotateBytes {
		t.Fatalf("the live journal reached %d bytes; rotation at %d", largest, RotateBytes)
	}
	all, gone, err := fleet.ReadJournal(ctx, fl, "bench")
	if err != nil || gone != nil {
		t.Fatal(err, gone)
	}
	if _, p := fleet.VerifyJournal(all, c.Head); p != nil || all[0].Seq != 1 || int64(len(all)) != c.Head.Records {
		t.Fatalf("archive and journal as one: %d records from %d, %v", len(all), all[0].Seq, p)
	}
	var whole resumeState
	for _, r := range all {
		whole.apply(r)
	}
	s, _, err := o.openCounting(t)
	if err != nil {
		t.Fatal(err)
	}
	if s.fold.Round != whole.Round || s.fold.Seen != whole.Seen || len(s.fold.Agents) != len(whole.Agents) {
		t.Fatalf("a start after rotations: round %d seen %d; the whole journal: round %d seen %d", s.fold.Round, s.fold.Seen, whole.Round, whole.Seen)
	}
	for name, line := range whole.Agents {
		if !s.fold.Agents[name].same(line) {
			t.Fatalf("%s: %+v from the start, %+v from the whole journal", name, s.fold.Agents[name], line)
		}
	}
}
