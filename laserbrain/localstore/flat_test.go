package localstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// bigLog leaves a log of one long run (steps steps, saved a thousand at a
// time, as a stream spills) in dir, uncompacted, and returns its size.
func bigLog(t *testing.T, dir, id string, steps int) int64 {
	t.Helper()
	set(t, &CompactAt, 1<<40)
	s := open(t, dir)
	ctx := context.Background()
	h, err := s.OpenRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < steps; i++ {
		if _, err := h.Run().Step(step("keep the cache warm across deploys", 9-i%9)); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			if err := h.Save(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := h.Save(ctx); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "runs", "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// The run log is read through a bounded window: opening a run on a big log
// (indexing it) and compacting it allocate a small fraction of the log's
// size, where reading it whole allocated it once or twice over. Every step
// is still there afterwards, in order.
func TestBigLogIsReadInAWindow(t *testing.T) {
	dir := t.TempDir()
	size := bigLog(t, dir, "long", 30_000)
	if size < 4<<20 {
		t.Fatalf("the log is only %d bytes", size)
	}
	s := open(t, dir)
	ctx := context.Background()
	if got := allocated(func() {
		h, err := s.OpenRun(ctx, "long")
		if err != nil {
			t.Fatal(err)
		}
		h.Close()
	}); got > uint64(size)/8 {
		t.Errorf("opening the run over a %d-byte log allocated %d bytes", size, got)
	}
	if got := allocated(func() {
		if err := s.Compact(); err != nil {
			t.Fatal(err)
		}
	}); got > uint64(size)/8 {
		t.Errorf("compacting a %d-byte log allocated %d bytes", size, got)
	}
	r, err := open(t, dir).ReadRun(ctx, "long")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Steps()) != 30_000 || r.Steps()[29_999].N != 30_000 {
		t.Fatalf("%d steps after the compaction", len(r.Steps()))
	}
	for i, st := range r.Steps() {
		if st.N != i+1 {
			t.Fatalf("step %d is numbered %d", i+1, st.N)
		}
	}
}

// A compaction keeps two files open at a time, however many runs the log
// holds: with 600 runs in the log and room for 64 open files, it goes
// through (writing every file first and closing them after needed 1,200).
func TestCompactionOpensFewFiles(t *testing.T) {
	dir := t.TempDir()
	set(t, &CompactAt, 1<<40)
	s := open(t, dir)
	for i := 0; i < 600; i++ {
		stepRun(t, s, fmt.Sprintf("r%03d", i), 2)
	}
	want := snapshot(t, s)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = 64
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower the open-file limit: %v", err)
	}
	err := s.Compact()
	if rerr := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		t.Fatalf("compacting 600 runs with room for 64 open files: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "runs", "log.jsonl")); bytes.Count(data, []byte("\n")) != 1 {
		t.Fatalf("the log is not empty after the compaction: %d lines", bytes.Count(data, []byte("\n")))
	}
	sameSnapshot(t, "after the compaction", snapshot(t, open(t, dir)), want)
}

// A record larger than the reading window, torn in the middle of its body
// and followed by whole records, is told from them as a small one is: the
// torn one is passed over, the next read whole, and a whole big record
// whose bytes changed fails its CRC.
func TestBigRecordsAcrossTheWindow(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	stepRun(t, s, "a", 1)
	logPath := filepath.Join(dir, "runs", "log.jsonl")
	var steps []byte
	for i := 2; i <= 3000; i++ {
		steps = fmt.Appendf(steps, `{"n":%d,"reason":"advancing","goal":"keep the cache warm across every deploy"}`+"\n", i)
	}
	if len(steps) < 3*cursorWindow {
		t.Fatalf("the record is %d bytes, not past the window", len(steps))
	}
	big := encodeRecord(nil, "a", 1, 3000, steps, []byte(`{"id":"a","step_count":3000}`))
	appendTo(t, logPath, big[:len(big)*2/3]) // torn two windows in
	stepRun(t, s, "b", 1)
	stepRun(t, s, "a", 1)
	s2 := open(t, dir)
	if r, err := s2.ReadRun(ctx, "a"); err != nil || r.StepCount() != 2 {
		t.Fatalf("a after its torn big save: %v", err)
	}
	if r, err := s2.ReadRun(ctx, "b"); err != nil || r.StepCount() != 1 {
		t.Fatalf("b after a torn big record: %v", err)
	}
	// A whole big record reads whole; changed by one byte, it is passed over.
	c := encodeRecord(nil, "c", 0, 2999, steps, []byte(`{"id":"c","step_count":2999}`))
	appendTo(t, logPath, c)
	if _, count, _ := mustChain(t, open(t, dir), "c"); count != 2999 {
		t.Fatalf("the whole big record chains to %d steps", count)
	}
	data, _ := os.ReadFile(logPath)
	i := bytes.LastIndex(data, []byte(`"n":1500,`))
	data[i+len(`"n":1500,`)+1] ^= 1
	if err := os.WriteFile(logPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if saves, _, _ := mustChain(t, open(t, dir), "c"); len(saves) != 0 {
		t.Fatal("a big record with a changed byte still chains")
	}
}

func mustChain(t *testing.T, s *Store, id string) ([]span, int, error) {
	t.Helper()
	var saves []span
	var count int
	err := s.log.withLock(false, func() (err error) { saves, count, err = s.log.chain(id, 0); return err })
	if err != nil {
		t.Fatal(err)
	}
	return saves, count, nil
}
