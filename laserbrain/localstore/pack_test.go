package localstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
)

// ownFiles makes compactions give every run files of its own, as before
// packs, for the tests of that path.
func ownFiles(t *testing.T) { set(t, &PackBelow, 0) }

func packBelow(t *testing.T, n int64) { set(t, &PackBelow, n) }

func packNames(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "runs", "packs", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names
}

// runFiles lists the files of runs of their own in runs/.
func runFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, n := range listDir(t, filepath.Join(dir, "runs")) {
		if strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".history.jsonl") {
			out = append(out, n)
		}
	}
	return out
}

// Compacting small runs creates one file, not two per run: 200 runs go
// into one pack, read back the same by this store and by another, listed,
// and go on stepping afterwards.
func TestSmallRunsGoIntoOnePack(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	for i := 0; i < 200; i++ {
		stepRun(t, s, fmt.Sprintf("p%03d", i), 1+i%4)
	}
	before := compacted(t, s)
	if got := runFiles(t, dir); len(got) != 0 {
		t.Errorf("compaction gave small runs files of their own: %v", got[:min(len(got), 4)])
	}
	if got := packNames(t, dir); fmt.Sprint(got) != "[0000000001.pack]" {
		t.Errorf("runs/packs holds %v, want one pack", got)
	}
	sameSnapshot(t, "after packing, same store", snapshot(t, s), before)
	sameSnapshot(t, "after packing, another store", snapshot(t, open(t, dir)), before)
	recent, err := open(t, dir).RecentRunIDs(ctx)
	if err != nil || len(recent) != 200 {
		t.Fatalf("RecentRunIDs: %d runs, %v", len(recent), err)
	}
	// A packed run goes on: its next step follows its last, in the log and
	// after the next compaction, whose pack is small beside the first
	// (which it therefore leaves as it is) and holds p003 from then on.
	stepRun(t, s, "p003", 2)
	stepRun(t, s, "fresh", 1)
	r, err := open(t, dir).ReadRun(ctx, "p003")
	if err != nil || r.StepCount() != 6 || len(r.Steps()) != 6 || r.Steps()[5].N != 6 {
		t.Fatalf("p003 after two more steps: %v", err)
	}
	before = compacted(t, s)
	if got := packNames(t, dir); fmt.Sprint(got) != "[0000000001.pack 0000000002.pack]" {
		t.Errorf("runs/packs holds %v after the second compaction, want the first and a second", got)
	}
	sameSnapshot(t, "after the second compaction", snapshot(t, open(t, dir)), before)
	h, err := open(t, dir).OpenRun(ctx, "p199")
	if err != nil || h.Created() || h.Run().StepCount() != 4 {
		t.Fatalf("OpenRun(p199) from its pack: %v", err)
	}
	h.Close()
}

// A run in a pack that grows past PackBelow leaves it for files of its own
// at the next compaction, with every step it had; its record left in the
// pack is passed over (the new pack says it left), and both go when the
// packs are folded.
func TestRunLeavesItsPack(t *testing.T) {
	packBelow(t, 8<<10)
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	stepRun(t, s, "grow", 2)
	stepRun(t, s, "stay", 2)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if got := runFiles(t, dir); len(got) != 0 {
		t.Fatalf("small runs on file: %v", got)
	}
	for i := 0; i < 10; i++ {
		stepRun(t, s, "grow", 5)
	}
	stepRun(t, s, "stay", 1)
	before := compacted(t, s)
	if got := runFiles(t, dir); fmt.Sprint(got) != "[grow.history.jsonl grow.json]" {
		t.Fatalf("after growing past PackBelow: files %v, want grow's own", got)
	}
	sameSnapshot(t, "after the move", snapshot(t, open(t, dir)), before)
	hist, _ := os.ReadFile(filepath.Join(dir, "runs", "grow.history.jsonl"))
	if n := strings.Count(string(hist), "\n"); n != 52 {
		t.Errorf("grow's history file holds %d steps, want all 52", n)
	}
	s2 := open(t, dir)
	if got := packEntries(t, s2); got != "1:grow 1:stay 2:grow=gone 2:stay" {
		t.Errorf("the packs hold %s", got)
	}
	// More compactions make foldTiers packs of one tier, folded into one:
	// grow's record and that it left are gone from the packs.
	want := []string{}
	for i := 0; i < foldTiers-2; i++ {
		id := fmt.Sprint("more", i)
		stepRun(t, s2, id, 1)
		if err := s2.Compact(); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%d:%s", foldTiers, id))
	}
	sort.Strings(want)
	if got := packEntries(t, s2); got != strings.Join(append(want, fmt.Sprintf("%d:stay", foldTiers)), " ") {
		t.Errorf("the packs hold %s after folding", got)
	}
	stepRun(t, s2, "grow", 1)
	if r, err := open(t, dir).ReadRun(ctx, "grow"); err != nil || len(r.Steps()) != 53 || r.Steps()[52].N != 53 {
		t.Fatalf("grow after one more step: %v", err)
	}
}

// packEntries is every entry of s's packs, as seq:id (=gone for a run
// that left them).
func packEntries(t *testing.T, s *Store) string {
	t.Helper()
	var out []string
	err := s.log.withLock(false, func() error {
		if err := s.packs.current(s.log.generation); err != nil {
			return err
		}
		for _, p := range s.packs.packs {
			p.eachEntry(func(id string, off int64) {
				e := fmt.Sprintf("%d:%s", p.seq, id)
				if off == gone {
					e += "=gone"
				}
				out = append(out, e)
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// A reader in another store reads a run while it is stepped, packed, moved
// to its own files and its packs folded, again and again: every read is
// whole (its history as long as its state says, numbered from 1) and no
// read goes back.
func TestReaderDuringPackMoves(t *testing.T) {
	packBelow(t, 16<<10)
	dir := t.TempDir()
	w := open(t, dir)
	stepRun(t, w, "moving", 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads int
	var readErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		rd := open(t, dir)
		last := 0
		for {
			select {
			case <-stop:
				return
			default:
			}
			r, err := rd.ReadRun(context.Background(), "moving")
			if err == nil && (len(r.Steps()) != r.StepCount() || len(r.Steps()) < last) {
				err = fmt.Errorf("read %d steps, state says %d, an earlier read had %d", len(r.Steps()), r.StepCount(), last)
			}
			for i, st := range r.Steps() {
				if err == nil && st.N != i+1 {
					err = fmt.Errorf("step %d is numbered %d", i+1, st.N)
				}
			}
			if err != nil {
				readErr = err
				return
			}
			last = len(r.Steps())
			reads++
		}
	}()
	for round := 0; round < 30; round++ {
		stepRun(t, w, "moving", 3)
		stepRun(t, w, fmt.Sprintf("other%d", round), 1)
		if err := w.Compact(); err != nil {
			close(stop)
			wg.Wait()
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if readErr != nil {
		t.Fatalf("after %d good reads: %v", reads, readErr)
	}
	if reads == 0 {
		t.Fatal("the reader read nothing")
	}
	if got := runFiles(t, dir); fmt.Sprint(got) != "[moving.history.jsonl moving.json]" {
		t.Errorf("files %v: the run never left its pack", got)
	}
	if r, err := open(t, dir).ReadRun(context.Background(), "moving"); err != nil || len(r.Steps()) != 91 {
		t.Fatalf("moving at the end: %v", err)
	}
}

// A crash anywhere in a compaction that packs loses and doubles nothing:
// with the pack's records written but not its index (under its temporary
// name), written but not renamed, in place with the folded packs and the
// old log still there, and with the folded packs gone but the log not yet
// replaced. The next compaction finishes the job and leaves no temporary
// file.
func TestPackCompactionCutShort(t *testing.T) {
	for _, stage := range []string{"pack records written", "pack written", "pack in place", "folded packs removed"} {
		t.Run(stage, func(t *testing.T) {
			packBelow(t, 8<<10)
			dir := t.TempDir()
			s := open(t, dir)
			for i := 0; i < 8; i++ {
				stepRun(t, s, fmt.Sprintf("k%d", i), 2)
			}
			if err := s.Compact(); err != nil { // a first pack
				t.Fatal(err)
			}
			for i := 0; i < 8; i += 2 {
				stepRun(t, s, fmt.Sprintf("k%d", i), 1)
			}
			for i := 0; i < 10; i++ {
				stepRun(t, s, "k1", 5) // past PackBelow: to its own files
			}
			stepRun(t, s, "fresh", 3)
			before := snapshot(t, s)
			compactCrashAt = func(at string) bool { return at == stage }
			err := s.Compact()
			compactCrashAt = nil
			if err == nil || !strings.Contains(err.Error(), stage) {
				t.Fatalf("the compaction was not cut short at %q: %v", stage, err)
			}
			if stage == "pack records written" || stage == "pack written" {
				if got := packNames(t, dir); fmt.Sprint(got) != "[0000000001.pack 0000000002.pack.tmp]" {
					t.Fatalf("runs/packs holds %v, want the first pack and the unfinished one", got)
				}
			}
			s2 := open(t, dir)
			sameSnapshot(t, "after the cut", snapshot(t, s2), before)
			stepRun(t, s2, "k2", 1) // runs go on from the cut
			before = compacted(t, s2)
			sameSnapshot(t, "after compacting again", snapshot(t, open(t, dir)), before)
			for _, n := range packNames(t, dir) {
				if strings.HasSuffix(n, ".tmp") {
					t.Errorf("%s left after the next compaction", n)
				}
			}
		})
	}
}

// A pack in place is whole (it is renamed there only once written and
// synced), so one that is not is damage: reading a run says which file.
func TestDamagedPackIsNamed(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	stepRun(t, s, "a", 2)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "runs", "packs", "0000000001.pack")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"no index":         data[:len(data)-packTrailerSize-5],
		"a changed record": []byte(strings.Replace(string(data), `"step_count":2`, `"step_count":3`, 1)),
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := open(t, dir).ReadRun(context.Background(), "a")
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "damaged") {
				t.Fatalf("ReadRun of a run in a damaged pack: %v; want an error naming %s", err, path)
			}
		})
	}
}

// Packs stay few: 64 compactions of fresh small runs leave fewer than
// foldTiers packs, and every run readable.
func TestFoldingKeepsPacksFew(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	for c := 0; c < 64; c++ {
		for i := 0; i < 5; i++ {
			stepRun(t, s, fmt.Sprintf("c%02d-%d", c, i), 1)
		}
		if err := s.Compact(); err != nil {
			t.Fatal(err)
		}
	}
	if got := packNames(t, dir); len(got) >= foldTiers {
		t.Errorf("%d packs after 64 compactions: %v", len(got), got)
	}
	if snap := snapshot(t, open(t, dir)); len(snap) != 320 {
		t.Fatalf("%d runs read back, want 320", len(snap))
	}
}

// A home of the earlier layout (every run in files of its own) keeps its
// runs there: a compaction after more steps appends to their files and
// packs only the runs new to it; RunIDs and ImportRun (what store migrate
// copies through) see both.
func TestEarlierLayoutBesidePacks(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	func() { // the earlier layout: compactions that pack nothing
		old := PackBelow
		PackBelow = 0
		defer func() { PackBelow = old }()
		s := open(t, dir)
		stepRun(t, s, "old1", 3)
		stepRun(t, s, "old2", 1)
		if err := s.Compact(); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}()
	s := open(t, dir)
	stepRun(t, s, "old1", 1)
	stepRun(t, s, "new1", 2)
	before := compacted(t, s)
	if got := runFiles(t, dir); fmt.Sprint(got) != "[old1.history.jsonl old1.json old2.history.jsonl old2.json]" {
		t.Errorf("files after compaction: %v", got)
	}
	sameSnapshot(t, "after compaction", snapshot(t, open(t, dir)), before)
	// Copied run by run into another home, as store migrate does.
	src, dst := open(t, dir), open(t, t.TempDir())
	ids, err := src.RunIDs(ctx)
	if err != nil || fmt.Sprint(ids) != "[new1 old1 old2]" {
		t.Fatalf("RunIDs: %v %v", ids, err)
	}
	for _, id := range ids {
		r, err := src.ReadRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.ImportRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := dst.ImportRun(ctx, mustRead(t, src, "old1")); err == nil {
		t.Error("a second import of old1 was taken")
	}
	sameSnapshot(t, "copied", snapshot(t, dst), before)
	if err := dst.Compact(); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "copied and compacted", snapshot(t, dst), before)
}

func mustRead(t *testing.T, s *Store, id string) *laserbrain.Run {
	t.Helper()
	r, err := s.ReadRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The index is searched, not scanned: every id of a pack is found, and
// ids between and around them are not.
func TestPackIndexSearch(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	var ids []string
	for i := 0; i < 37; i++ {
		id := fmt.Sprintf("r%03d", i*2)
		ids = append(ids, id)
		stepRun(t, s, id, 1)
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	p, err := openPack(filepath.Join(dir, "runs", "packs", "0000000001.pack"), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.f.Close()
	for _, id := range ids {
		off, ok := p.find(id)
		if !ok {
			t.Fatalf("%s not found", id)
		}
		sp, body, err := p.record(id, off, nil)
		if err != nil || sp.n != 1 {
			t.Fatalf("%s's record: %+v %v", id, sp, err)
		}
		var v struct{ ID string }
		if err := json.Unmarshal(body[sp.steps:], &v); err != nil || v.ID != id {
			t.Fatalf("%s's record holds the state of %q", id, v.ID)
		}
	}
	for _, id := range []string{"r001", "r073", "a", "r", "r0000", "z"} {
		if _, ok := p.find(id); ok {
			t.Errorf("%s found, and no such run was packed", id)
		}
	}
}

// A store that looked for many runs' files in vain lists the runs on file
// instead, for as long as the log is the same: a run another store moves
// to files of its own is seen there once its compaction replaced the log,
// and read the same from the log while a compaction cut short left it.
func TestListedRunsFollowCompactions(t *testing.T) {
	packBelow(t, 4<<10)
	for _, cut := range []bool{false, true} {
		t.Run(fmt.Sprint("cut short ", cut), func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			a, b := open(t, dir), open(t, dir)
			for i := 0; i < listAfterMisses+6; i++ {
				stepRun(t, a, fmt.Sprintf("a%02d", i), 1)
			}
			if a.onFile == nil {
				t.Fatal("the store did not list the runs on file")
			}
			for i := 0; i < 8; i++ {
				stepRun(t, b, "own", 5)
			}
			if cut {
				compactCrashAt = func(at string) bool { return at == "pack in place" }
			}
			err := b.Compact()
			compactCrashAt = nil
			if (err != nil) != cut {
				t.Fatalf("compaction: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "runs", "own.json")); err != nil {
				t.Fatalf("own was not moved to its files: %v", err)
			}
			r, err := a.ReadRun(ctx, "own")
			if err != nil || len(r.Steps()) != 40 || r.StepCount() != 40 {
				t.Fatalf("own read by the listing store: %v", err)
			}
			stepRun(t, a, "own", 1)
			r, err = open(t, dir).ReadRun(ctx, "own")
			if err != nil || len(r.Steps()) != 41 || r.Steps()[40].N != 41 {
				t.Fatalf("own after a step by the listing store: %v", err)
			}
			if !cut && a.onFile != nil && a.onFileGen == a.log.generation && !a.onFile["own"] {
				t.Error("the listing store kept a list from before the compaction")
			}
		})
	}
}

// A fold reads the packs it folds record by record in file order, through
// one window: runs whose records straddle windows come through whole, and
// a record damaged since its pack was written ends the compaction with an
// error naming the pack, leaving every pack as it was.
func TestFoldCopiesWholeAndStopsAtDamage(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	fill := func(c int) {
		for i := 0; i < 4; i++ {
			stepRun(t, s, fmt.Sprintf("f%02d-%d", c, i), 40+i*13) // tens of KB: records cross 64 KB windows
		}
		if err := s.Compact(); err != nil {
			t.Fatal(err)
		}
	}
	for c := 0; c < foldTiers-1; c++ {
		fill(c)
	}
	if got := packNames(t, dir); len(got) != foldTiers-1 {
		t.Fatalf("%d packs before the fold: %v", len(got), got)
	}
	before := snapshot(t, open(t, dir))
	first := filepath.Join(dir, "runs", "packs", "0000000001.pack")
	data, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte(strings.Replace(string(data), `"step_count":53`, `"step_count":54`, 1))
	if bytes.Equal(bad, data) {
		t.Fatal("no record to damage")
	}
	if err := os.WriteFile(first, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	packsBefore := packNames(t, dir)
	stepRun(t, s, "last", 1)
	err = s.Compact()
	if err == nil || !strings.Contains(err.Error(), first) || !strings.Contains(err.Error(), "does not match its checksum") {
		t.Fatalf("compaction folding a damaged pack: %v; want an error naming %s", err, first)
	}
	if got := packNames(t, dir); fmt.Sprint(got) != fmt.Sprint(packsBefore) {
		t.Fatalf("packs after the failed fold: %v, before: %v", got, packsBefore)
	}
	if err := os.WriteFile(first, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before["last"] = snapshot(t, open(t, dir))["last"]
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if got := packNames(t, dir); len(got) != 1 {
		t.Fatalf("packs after the fold: %v, want one", got)
	}
	sameSnapshot(t, "after the fold", snapshot(t, open(t, dir)), before)
}

// A load keeps the packs it has open when their files are unchanged (their
// indexes and filters are not read again), reads a pack whose file changed,
// and closes those no longer in place.
func TestPackLoadKeepsUnchangedPacks(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	for c := 0; c < 2; c++ {
		stepRun(t, s, fmt.Sprintf("p%d", c), 2)
		if err := s.Compact(); err != nil {
			t.Fatal(err)
		}
	}
	ps := s.packs
	load := func() map[string]*pack {
		t.Helper()
		if err := ps.load(0); err != nil {
			t.Fatal(err)
		}
		m := map[string]*pack{}
		for _, p := range ps.packs {
			m[filepath.Base(p.path)] = p
		}
		return m
	}
	first := load()
	if len(first) != 2 {
		t.Fatalf("packs: %v", first)
	}
	second := load()
	for name, p := range first {
		if second[name] != p {
			t.Errorf("%s read again though unchanged", name)
		}
	}
	one := filepath.Join(dir, "runs", "packs", "0000000001.pack")
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(one, later, later); err != nil {
		t.Fatal(err)
	}
	third := load()
	if third["0000000001.pack"] == first["0000000001.pack"] || third["0000000002.pack"] != first["0000000002.pack"] {
		t.Errorf("after 0000000001.pack changed: %v, before %v", third, first)
	}
	if _, err := first["0000000001.pack"].f.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the replaced pack's file is still open: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "runs", "packs", "0000000002.pack")); err != nil {
		t.Fatal(err)
	}
	if fourth := load(); len(fourth) != 1 || fourth["0000000001.pack"] != third["0000000001.pack"] {
		t.Errorf("after 0000000002.pack went: %v", fourth)
	}
	if _, err := first["0000000002.pack"].f.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the removed pack's file is still open: %v", err)
	}
}
