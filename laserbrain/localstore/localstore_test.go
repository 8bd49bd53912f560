package localstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/storetest"
)

func step(goal string, d int) laserbrain.StepInput {
	return laserbrain.StepInput{Goal: goal, Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(d)}
}

// set gives *v the value x for the rest of the test.
func set[T any](t testing.TB, v *T, x T) {
	old := *v
	*v = x
	t.Cleanup(func() { *v = old })
}

// appendTo appends data to the file at path, which must exist: a write
// as another process (or a crash cutting one short) leaves it.
func appendTo(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

// With LASERBRAIN_HOME the store and its config
// live under it; without, under the user config directory.
func TestDefaultPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("LASERBRAIN_HOME", home)
	p, err := DefaultPaths()
	if err != nil || p.Home != home || p.Config != filepath.Join(home, "config") {
		t.Errorf("with LASERBRAIN_HOME: %+v, %v", p, err)
	}
	xdg := t.TempDir()
	t.Setenv("LASERBRAIN_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	p, err = DefaultPaths()
	if err != nil || p.Home != filepath.Join(xdg, "laserbrain") || p.Config != p.Home {
		t.Errorf("without: %+v, %v", p, err)
	}
}

// A run survives the store: another Store on the same directory (another
// process) continues it, and sees the contexts it recorded.
func TestRunContinuesAcrossStores(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for i, want := range []string{"grounded", "advancing", "advancing"} {
		s := open(t, dir)
		h, err := s.OpenRun(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if h.Created() != (i == 0) {
			t.Errorf("check %d: created = %v", i+1, h.Created())
		}
		v, _ := h.Run().Step(step("keep the cache warm", 4))
		if v.Reason != want || v.Step != i+1 {
			t.Errorf("check %d: %s step %d, want %s", i+1, v.Reason, v.Step, want)
		}
		if err := h.Save(ctx); err != nil {
			t.Fatal(err)
		}
		h.Close()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Three identical spellings on one ground: the judgment reads them back
	// from contexts.json → repeating (the judgment's rule 7).
	r, err := open(t, dir).ReadRun(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if j := r.Phronesis(); j.Verdict != laserbrain.JudgmentRepeating {
		t.Errorf("judgment %s, want repeating", j.Verdict)
	}
	if _, err := open(t, dir).ReadRun(ctx, "r2"); !errors.Is(err, laserbrain.ErrNoRun) {
		t.Errorf("ReadRun(r2) = %v, want ErrNoRun", err)
	}
	if _, err := open(t, dir).OpenRun(ctx, "../escape"); err == nil {
		t.Error("a run id with a path in it was accepted")
	}
}

// Two holders of one run: the second waits, and gives up with a clear
// error when the first holds on past the timeout.
func TestRunLock(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	set(t, &LockTimeout, 200*time.Millisecond)
	a, b := open(t, dir), open(t, dir)
	h, err := a.OpenRun(ctx, "busy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.OpenRun(ctx, "busy"); err == nil || !strings.Contains(err.Error(), "run busy is in use") {
		t.Errorf("second OpenRun: %v, want in use", err)
	}
	h.Close()
	h2, err := b.OpenRun(ctx, "busy")
	if err != nil {
		t.Errorf("after release: %v", err)
	} else {
		h2.Close()
	}
}

// Two stores recording into one contexts.json at once lose no update:
// flush merges under the lock.
func TestContextsMergeAcrossStores(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := open(t, dir)
			for k := 0; k < 5; k++ {
				r := laserbrain.NewRun(laserbrain.RunOptions{Contexts: s.Contexts()})
				if _, err := r.Step(step("ship the sky billboard", 5)); err != nil {
					t.Error(err)
				}
				if err := s.Flush(ctx); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	e, ok, err := open(t, dir).Contexts().Context("ctx_2qbvsr") // "ship the sky billboard"
	if err != nil || !ok || e.Checks != 20 || e.SessionCount != 20 || e.Spellings["⟨billboard|ship|sky⟩ advancing d5"] != 20 {
		t.Errorf("merged entry %+v (ok %v, err %v), want 20 checks from 20 runs", e, ok, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "config", "contexts.json.lock")); !os.IsNotExist(err) {
		t.Errorf("the reference's lock marker was left behind: %v", err)
	}
}

// A marker abandoned by a dead process (older than 10 s) is taken over; a
// corrupt contexts.json stops the store with a message naming the file, and
// is left as it was.
func TestContextsLockMarkerAndCorruptFile(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	marker := filepath.Join(dir, "config", "contexts.json.lock")
	if err := os.WriteFile(marker, []byte("123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-20 * time.Second)
	if err := os.Chtimes(marker, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := laserbrain.NewRun(laserbrain.RunOptions{Contexts: s.Contexts()}).Step(step("ship it", 5)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatalf("flush with a stale marker: %v", err)
	}
	path := filepath.Join(dir, "config", "contexts.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Paths{Home: dir, Config: filepath.Join(dir, "config")}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Open over a corrupt contexts.json: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "{not json" {
		t.Errorf("the corrupt file was changed: %q", data)
	}
}

// Tool events bump evidence.json: counters, the last six signatures, and
// the progress read from them.
func TestRecordToolEvent(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	if _, ok := s.Evidence().Evidence(); ok {
		t.Error("evidence before any event")
	}
	for i := 0; i < 8; i++ {
		ok := i < 6
		if err := s.RecordToolEvent(ctx, laserbrain.ToolCall("Bash", map[string]any{"command": "make test"}, ok)); err != nil {
			t.Fatal(err)
		}
	}
	ev, ok := open(t, dir).Evidence().Evidence()
	if !ok || ev.OK != 6 || ev.Fail != 2 || ev.Steps != 8 || len(ev.Window) != 6 || ev.Progress != laserbrain.ProgressCircling ||
		ev.Window[5].Sig != `Bash|{"command": "make test"}` {
		t.Errorf("evidence %+v", ev)
	}
}

// A compacted run's history file may hold bytes past its committed length
// (a compaction cut short between the history append and the state's
// rename): readers ignore them and the next compaction writes over them.
func TestHistoryBeyondCommittedLengthIsIgnored(t *testing.T) {
	ownFiles(t)
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir)
	storetest.Save(t, s, "cut", step("keep the cache warm", 4))
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(dir, "runs", "cut.history.jsonl")
	if _, err := os.Stat(hist); err != nil {
		t.Fatalf("compaction wrote no history file: %v", err)
	}
	appendTo(t, hist, []byte(`{"n":2,"reason":"half-writ`))
	r, err := s.ReadRun(ctx, "cut")
	if err != nil || len(r.Steps()) != 1 {
		t.Fatalf("ReadRun over a torn tail: %v, %d steps", err, len(r.Steps()))
	}
	storetest.Save(t, s, "cut", step("keep the cache warm", 3))
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	r, err = s.ReadRun(ctx, "cut")
	if err != nil || len(r.Steps()) != 2 || r.Steps()[1].N != 2 || r.Steps()[1].Reason != "advancing" {
		t.Fatalf("after the next save: %v, %+v", err, r.Steps())
	}
	data, _ := os.ReadFile(hist)
	if strings.Contains(string(data), "half-writ") {
		t.Error("the torn tail survived the next compaction")
	}
}

// OpenReader on a home nothing was saved in creates nothing: every run is
// missing (the same error as a fresh store's) and writes are refused; on a
// home with runs it reads them.
func TestOpenReader(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	p := Paths{Home: home, Config: filepath.Join(home, "config")}
	r, err := OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadRun(ctx, "r1"); !errors.Is(err, laserbrain.ErrNoRun) || !strings.Contains(err.Error(), filepath.Join(home, "runs")) {
		t.Fatalf("ReadRun = %v", err)
	}
	if _, err := r.OpenRun(ctx, "r1"); !errors.Is(err, laserbrain.ErrReadOnly) {
		t.Fatalf("OpenRun = %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the reader created %s (%v)", home, err)
	}
	w, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Save(t, w, "r1", step("ship it", 3))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := r.ReadRun(ctx, "r1"); err != nil || len(got.Steps()) != 1 {
		t.Fatalf("the reader does not see the saved run: %v", err)
	}
}

// Writers recording at once, each through its own store (as processes
// do), lose no call: the advisory lock alone queues them.
func TestRecordToolEventConcurrentLosesNone(t *testing.T) {
	dir := t.TempDir()
	const writers, each = 6, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		s := open(t, dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := s.RecordToolEvent(context.Background(), laserbrain.ToolCall("Bash", map[string]any{"command": "go test"}, i%5 != 0)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ev, ok := open(t, dir).Evidence().Evidence()
	if !ok || ev.OK != writers*each*4/5 || ev.Fail != writers*each/5 || ev.Steps != writers*each {
		t.Errorf("after %d calls by %d writers: %+v", writers*each, writers, ev)
	}
}

// An evidence.json of no bytes — what a crash can leave of a replace that
// was not synced, never what a write leaves — reads as no evidence, and the
// next call starts the counters over; any other unreadable file is left
// as it is and the call is refused.
func TestEmptyEvidenceStartsOver(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	path := filepath.Join(dir, "config", "evidence.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Evidence().Evidence(); ok {
		t.Error("an empty evidence.json read as evidence")
	}
	if err := s.RecordToolEvent(context.Background(), laserbrain.ToolCall("Bash", map[string]any{"command": "ls"}, true)); err != nil {
		t.Fatal(err)
	}
	if ev, ok := open(t, dir).Evidence().Evidence(); !ok || ev.OK != 1 || ev.Steps != 1 {
		t.Errorf("after one call over an empty file: %+v, %v", ev, ok)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordToolEvent(context.Background(), laserbrain.ToolCall("Bash", map[string]any{"command": "ls"}, true)); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a call over a damaged evidence.json: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "{not json" {
		t.Errorf("the damaged file was changed: %q", data)
	}
}
