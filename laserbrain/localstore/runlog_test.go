package localstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/storetest"
)

// snapshot is every run of a store as ReadRun gives it: state and history
// as JSON, so two stores (or one before and after) compare byte for byte.
func snapshot(t *testing.T, s *Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	ids, err := s.RunIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, id := range ids {
		r, err := s.ReadRun(ctx, id)
		if err != nil {
			t.Fatalf("ReadRun(%s): %v", id, err)
		}
		state, _ := json.Marshal(r)
		hist, _ := json.Marshal(r.Steps())
		out[id] = string(state) + "\n" + string(hist)
	}
	return out
}

// compacted compacts s and returns its snapshot from before, for the test
// to hold a store's after it to.
func compacted(t *testing.T, s *Store) map[string]string {
	t.Helper()
	before := snapshot(t, s)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	return before
}

func sameSnapshot(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d runs, want %d", what, len(got), len(want))
	}
	for id, w := range want {
		if got[id] != w {
			t.Fatalf("%s: run %s differs:\n got %s\nwant %s", what, id, got[id], w)
		}
	}
}

// stepRun opens run id, takes n steps and saves it.
func stepRun(t *testing.T, s *Store, id string, n int) {
	t.Helper()
	steps := make([]laserbrain.StepInput, n)
	for i := range steps {
		steps[i] = step("keep the cache warm", 8-i%8)
	}
	storetest.Save(t, s, id, steps...)
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// Creating a run creates no file: fifty new runs are fifty records in the
// run log, read back whole by another store.
func TestCreatingARunCreatesNoFile(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	for i := 0; i < 50; i++ {
		stepRun(t, s, fmt.Sprintf("r%02d", i), 1+i%5)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, filepath.Join(dir, "runs")); fmt.Sprint(got) != "[locks.d log.jsonl log.lock]" {
		t.Errorf("runs/ holds %v, want only the log and the lock files", got)
	}
	snap := snapshot(t, open(t, dir))
	if len(snap) != 50 {
		t.Fatalf("%d runs read back, want 50", len(snap))
	}
	r, err := open(t, dir).ReadRun(context.Background(), "r04")
	if err != nil || len(r.Steps()) != 5 || r.StepCount() != 5 || r.Steps()[4].N != 5 {
		t.Fatalf("r04: %v, %d steps", err, len(r.Steps()))
	}
}

// Compaction moves every run to its own files and empties the log; what
// ReadRun gives is the same before and after, and runs go on afterwards.
func TestCompactionKeepsEveryRun(t *testing.T) {
	ownFiles(t)
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		stepRun(t, s, fmt.Sprintf("c%02d", i), 3)
	}
	for i := 0; i < 20; i += 3 { // a second save on some
		stepRun(t, s, fmt.Sprintf("c%02d", i), 2)
	}
	// A save with no new step (events seen between checks) is a record too.
	h, _ := s.OpenRun(ctx, "c01")
	h.Run().Saw(laserbrain.ToolCall("Bash", nil, true))
	if err := h.Save(ctx); err != nil {
		t.Fatal(err)
	}
	h.Close()
	before := compacted(t, s)
	if data, _ := os.ReadFile(filepath.Join(dir, "runs", "log.jsonl")); bytes.Count(data, []byte("\n")) != 1 {
		t.Errorf("the log after compaction is not just its header: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "c07.history.jsonl")); err != nil {
		t.Errorf("c07 has no history file after compaction: %v", err)
	}
	sameSnapshot(t, "after compaction", snapshot(t, open(t, dir)), before)
	stepRun(t, s, "c00", 1)
	stepRun(t, s, "new", 2)
	r, err := open(t, dir).ReadRun(ctx, "c00")
	if err != nil || r.StepCount() != 6 || len(r.Steps()) != 6 || r.Steps()[5].N != 6 {
		t.Fatalf("c00 after compaction and one more step: %v, %d steps", err, len(r.Steps()))
	}
	// The store that compacted reads on (its index followed the new log).
	if r, err := s.ReadRun(ctx, "new"); err != nil || len(r.Steps()) != 2 {
		t.Fatalf("new run after compaction, same store: %v", err)
	}
}

// A crash anywhere in a compaction loses and doubles nothing: after the
// history files grew and the states were renamed, but before the log was
// replaced, the old log's records are already on file and are passed over;
// with the states not yet renamed either, the history files' extra bytes
// are past the committed length and ignored.
func TestCompactionCutShort(t *testing.T) {
	ownFiles(t)
	for _, stage := range []string{"log not replaced", "states not renamed"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir)
			for i := 0; i < 6; i++ {
				stepRun(t, s, fmt.Sprintf("k%d", i), 2)
			}
			if err := s.Compact(); err != nil { // some runs on file already
				t.Fatal(err)
			}
			for i := 0; i < 6; i += 2 {
				stepRun(t, s, fmt.Sprintf("k%d", i), 3)
			}
			stepRun(t, s, "fresh", 4)
			before := snapshot(t, s)
			runs := filepath.Join(dir, "runs")
			logBefore, _ := os.ReadFile(filepath.Join(runs, "log.jsonl"))
			states := map[string][]byte{}
			for _, id := range []string{"k0", "k2", "k4"} {
				states[id], _ = os.ReadFile(filepath.Join(runs, id+".json"))
			}
			if err := s.Compact(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(runs, "log.jsonl"), logBefore, 0o644); err != nil {
				t.Fatal(err)
			}
			if stage == "states not renamed" {
				for id, data := range states {
					if err := os.WriteFile(filepath.Join(runs, id+".json"), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				os.Remove(filepath.Join(runs, "fresh.json"))
			}
			s2 := open(t, dir)
			sameSnapshot(t, "after the cut", snapshot(t, s2), before)
			if err := s2.Compact(); err != nil {
				t.Fatal(err)
			}
			sameSnapshot(t, "after compacting again", snapshot(t, open(t, dir)), before)
		})
	}
}

// A torn record (a write cut short) is its own line and is skipped, the
// next record is read whole; a record that does not continue its run's
// chain (its predecessor lost) is passed over, and the run goes on from its
// last good save.
func TestTornAndOrphanRecords(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	stepRun(t, s, "a", 2)
	logPath := filepath.Join(dir, "runs", "log.jsonl")
	// A save of a's third step, cut off a third of the way into its body.
	whole := encodeRecord(nil, "a", 2, 3, []byte(`{"n":3,"reason":"advancing"}`+"\n"), []byte(`{"id":"a","step_count":3}`))
	appendTo(t, logPath, whole[:len(whole)-20])
	stepRun(t, s, "b", 1)
	// An orphan: a save on top of 7 steps run a never had.
	orphan := encodeRecord(nil, "a", 7, 8, []byte(`{"n":8}`+"\n"), []byte(`{"id":"a","step_count":8}`))
	appendTo(t, logPath, orphan)
	s2 := open(t, dir)
	if r, err := s2.ReadRun(ctx, "b"); err != nil || len(r.Steps()) != 1 {
		t.Fatalf("b after a torn record: %v", err)
	}
	r, err := s2.ReadRun(ctx, "a")
	if err != nil || r.StepCount() != 2 || len(r.Steps()) != 2 {
		t.Fatalf("a: %v, %d steps; want its 2 good ones", err, r.StepCount())
	}
	stepRun(t, s2, "a", 1)
	if r, err := open(t, dir).ReadRun(ctx, "a"); err != nil || len(r.Steps()) != 3 || r.Steps()[2].N != 3 {
		t.Fatalf("a after one more step: %v", err)
	}
}

// A home written by an earlier version (a run as <id>.json and its
// history file, no log) is read as it is and goes on in the log.
func TestEarlierVersionHome(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	r := laserbrain.NewRun(laserbrain.RunOptions{ID: "old"})
	var hist []byte
	for i := 0; i < 3; i++ {
		if _, err := r.Step(step("keep the cache warm", 6-i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range r.Steps() {
		hist = append(st.AppendJSON(hist), '\n')
	}
	state, _ := json.Marshal(r)
	if err := os.WriteFile(filepath.Join(runs, "old.history.jsonl"), hist, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runs, "old.json"), []byte(fmt.Sprintf(`{"run":%s,"history_bytes":%d}`+"\n", state, len(hist))), 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	ctx := context.Background()
	got, err := s.ReadRun(ctx, "old")
	if err != nil || len(got.Steps()) != 3 {
		t.Fatalf("ReadRun of an earlier version's run: %v", err)
	}
	h, err := s.OpenRun(ctx, "old")
	if err != nil || h.Created() {
		t.Fatalf("OpenRun: %v, created %v", err, h != nil && h.Created())
	}
	v, _ := h.Run().Step(step("keep the cache warm", 3))
	if v.Step != 4 {
		t.Errorf("the next step is %d, want 4", v.Step)
	}
	if err := h.Save(ctx); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	got, err = open(t, dir).ReadRun(ctx, "old")
	if err != nil || len(got.Steps()) != 4 || got.Steps()[3].N != 4 {
		t.Fatalf("after a step and compaction: %v, %d steps", err, len(got.Steps()))
	}
}

// A flush past CompactAt compacts: a long stream of saves leaves the log
// small and every step readable.
func TestFlushCompactsABigLog(t *testing.T) {
	set(t, &CompactAt, 16<<10)
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		stepRun(t, s, "long", 5)
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "runs", "log.jsonl")); fi.Size() >= CompactAt {
		t.Errorf("the log is %d bytes, past CompactAt", fi.Size())
	}
	r, err := open(t, dir).ReadRun(ctx, "long")
	if err != nil || len(r.Steps()) != 200 {
		t.Fatalf("long: %v, %d steps", err, len(r.Steps()))
	}
	for i, st := range r.Steps() {
		if st.N != i+1 {
			t.Fatalf("step %d is numbered %d", i+1, st.N)
		}
	}
}

// Two handles on one run in one process exclude each other as two
// processes do (the run lock belongs to the open file, not the process).
func TestRunLockWithinAProcess(t *testing.T) {
	dir := t.TempDir()
	set(t, &LockTimeout, 100*time.Millisecond)
	s := open(t, dir)
	ctx := context.Background()
	h, err := s.OpenRun(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenRun(ctx, "x"); err == nil {
		t.Fatal("a second handle on a held run in the same store")
	}
	other, err := s.OpenRun(ctx, "y")
	if err != nil {
		t.Fatalf("another run is not held: %v", err)
	}
	other.Close()
	h.Close()
}

// A record being written is read once it is whole; a whole record whose
// bytes changed (its CRC fails) is passed over.
func TestRecordInProgressAndDamaged(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	stepRun(t, s, "p", 1)
	logPath := filepath.Join(dir, "runs", "log.jsonl")
	next := encodeRecord(nil, "p", 1, 2, []byte(`{"n":2,"reason":"advancing"}`+"\n"), []byte(`{"id":"p","step_count":2}`))
	f, _ := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if _, err := f.Write(next[:len(next)-10]); err != nil {
		t.Fatal(err)
	}
	if r, err := s.ReadRun(ctx, "p"); err != nil || r.StepCount() != 1 {
		t.Fatalf("with a record half written: %v, %d steps", err, r.StepCount())
	}
	if _, err := f.Write(next[len(next)-10:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if r, err := s.ReadRun(ctx, "p"); err != nil || r.StepCount() != 2 || len(r.Steps()) != 2 {
		t.Fatalf("once it is whole: %v", err)
	}
	// Damage the second record's state in place: p reads as its first save.
	data, _ := os.ReadFile(logPath)
	i := bytes.LastIndex(data, []byte(`"step_count":2`))
	data[i+len(`"step_count":`)] = '9'
	if err := os.WriteFile(logPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := open(t, dir).ReadRun(ctx, "p"); err != nil || r.StepCount() != 1 {
		t.Fatalf("with the record damaged: %v, %d steps, want 1", err, r.StepCount())
	}
}

// A compaction moves a run's saved state byte for byte, whether the run
// was saved once (its steps and state read together) or several times.
func TestCompactionKeepsStateBytes(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	stepRun(t, s, "once", 3)
	for i := 0; i < 3; i++ {
		stepRun(t, s, "thrice", 2)
	}
	states := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		if err := s.log.withLock(false, func() error {
			for _, id := range []string{"once", "thrice"} {
				st, err := s.lookup(id)
				if err != nil || st == nil {
					return fmt.Errorf("lookup %s: %v %v", id, st, err)
				}
				out[id] = string(st.state)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := states()
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	after := states()
	for id, want := range before {
		if after[id] != want {
			t.Errorf("%s's state after compaction:\n%q\nbefore:\n%q", id, after[id], want)
		}
	}
}
