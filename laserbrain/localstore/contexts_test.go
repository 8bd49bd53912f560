package localstore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
)

// billboard is the context id of "ship the sky billboard".
const billboard = "ctx_2qbvsr"

func checkBillboard(t *testing.T, s *Store, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		r := laserbrain.NewRun(laserbrain.RunOptions{Contexts: s.Contexts()})
		if _, err := r.Step(step("ship the sky billboard", 5)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func fileEntry(t *testing.T, dir, id string) (laserbrain.ContextEntry, bool) {
	t.Helper()
	entries, err := readContexts(filepath.Join(dir, "config", "contexts.json"))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := entries[id]
	return e, ok
}

func setAges(t *testing.T, flush, close time.Duration) {
	set(t, &ContextsCompactAge, flush)
	set(t, &contextsCloseAge, close)
}

// emptyContexts writes an empty contexts.json into the home dir's config
// directory, and returns that directory.
func emptyContexts(t *testing.T, dir string) string {
	t.Helper()
	cfg := filepath.Join(dir, "config")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "contexts.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A flush appends to contexts.log and leaves contexts.json alone; another
// store reads both; closing a store whose log record is old enough merges
// the log into contexts.json, the Python reference's file.
func TestContextsLogThenCompaction(t *testing.T) {
	setAges(t, time.Hour, time.Hour)
	dir := t.TempDir()
	emptyContexts(t, dir)
	s := open(t, dir)
	checkBillboard(t, s, 3)
	if _, ok := fileEntry(t, dir, billboard); ok {
		t.Fatal("a flush rewrote contexts.json")
	}
	e, ok, err := open(t, dir).Contexts().Context(billboard)
	if err != nil || !ok || e.Checks != 3 || e.SessionCount != 3 {
		t.Fatalf("another store sees %+v (%v, %v), want 3 checks", e, ok, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := fileEntry(t, dir, billboard); ok {
		t.Fatal("a close compacted though contexts.json was just written")
	}
	s = open(t, dir)
	setAges(t, time.Hour, 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fe, ok := fileEntry(t, dir, billboard)
	if !ok || fe.Checks != 3 || fe.Spellings["⟨billboard|ship|sky⟩ advancing d5"] != 3 {
		t.Fatalf("contexts.json after close: %+v", fe)
	}
	if _, err := os.Stat(filepath.Join(dir, "config", "contexts.log")); !os.IsNotExist(err) {
		t.Errorf("the log survived its compaction: %v", err)
	}
	if e, _, _ := open(t, dir).Contexts().Context(billboard); e.Checks != 3 {
		t.Errorf("after compaction a store reads %d checks, want 3 (counted once)", e.Checks)
	}
}

// A Python process rewriting contexts.json (under the reference's marker)
// between our flush and our compaction keeps its entry, and ours arrives.
func TestContextsPythonWriterBetweenFlushes(t *testing.T) {
	setAges(t, time.Hour, 0)
	dir := t.TempDir()
	s := open(t, dir)
	checkBillboard(t, s, 2)
	path := filepath.Join(dir, "config", "contexts.json")
	unlock, err := lockShared(path)
	if err != nil {
		t.Fatal(err)
	}
	py := map[string]laserbrain.ContextEntry{"ctx_python": {ID: "ctx_python", Tokens: []string{"python"}, Checks: 7, Outcomes: map[string]int{"grounded": 7}}}
	data, _ := json.Marshal(py)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	unlock()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if e, ok := fileEntry(t, dir, "ctx_python"); !ok || e.Checks != 7 {
		t.Errorf("the Python entry was lost: %+v", e)
	}
	if e, ok := fileEntry(t, dir, billboard); !ok || e.Checks != 2 {
		t.Errorf("our entry: %+v", e)
	}
}

// A compaction cut short at any step applies the log exactly once.
func TestContextsCompactionCutShort(t *testing.T) {
	for _, stage := range []string{"after the rename of the log", "after next was written", "after ready", "after the commit"} {
		t.Run(stage, func(t *testing.T) {
			setAges(t, time.Hour, time.Hour)
			dir := t.TempDir()
			cfg := emptyContexts(t, dir)
			s := open(t, dir)
			checkBillboard(t, s, 4)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			c := newContexts(cfg)
			if _, err := os.Stat(c.logPath); err != nil {
				t.Fatalf("no log to compact: %v", err)
			}
			// Play the compaction by hand up to the stage, then "crash".
			if err := os.Rename(c.logPath, c.applyingPath()); err != nil {
				t.Fatal(err)
			}
			if stage != "after the rename of the log" {
				recs, _, _ := readContextLog(c.applyingPath(), 0)
				entries := map[string]laserbrain.ContextEntry{}
				for _, r := range recs {
					for i := range r.Ctx {
						e := entries[r.Ctx[i].ID]
						e.Merge(&r.Ctx[i])
						entries[r.Ctx[i].ID] = e
					}
				}
				data, _ := json.Marshal(entries)
				if err := os.WriteFile(c.nextPath(), data, 0o644); err != nil {
					t.Fatal(err)
				}
				if stage != "after next was written" {
					if err := os.WriteFile(c.readyPath(), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if stage == "after the commit" {
					if err := os.Rename(c.nextPath(), c.jsonPath); err != nil {
						t.Fatal(err)
					}
				}
			}
			// A later store finishes the job: four checks, never eight or none.
			s2 := open(t, dir)
			if e, _, _ := s2.Contexts().Context(billboard); e.Checks != 4 {
				t.Fatalf("the store reads %d checks, want 4", e.Checks)
			}
			if e, ok := fileEntry(t, dir, billboard); !ok || e.Checks != 4 {
				t.Fatalf("contexts.json holds %+v, want 4 checks", e)
			}
			for _, p := range []string{c.applyingPath(), c.readyPath(), c.nextPath()} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("%s left behind", filepath.Base(p))
				}
			}
		})
	}
}

// Importing another store's contexts combines them once per source.
func TestImportContextsOncePerSource(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	checkBillboard(t, s, 1)
	in := map[string]laserbrain.ContextEntry{billboard: {ID: billboard, Tokens: []string{"billboard", "ship", "sky"}, Checks: 5, SessionCount: 2,
		Sessions: []string{"x1", "x2"}, Outcomes: map[string]int{"advancing": 5}}}
	ctx := context.Background()
	for i, want := range []bool{true, false} {
		got, err := s.ImportContexts(ctx, "home-a", in)
		if err != nil || got != want {
			t.Fatalf("import #%d: %v, %v", i+1, got, err)
		}
	}
	e, _, _ := open(t, dir).Contexts().Context(billboard)
	if e.Checks != 6 || e.SessionCount != 3 || len(e.Sessions) != 3 {
		t.Fatalf("after the import: %+v, want 6 checks from 3 runs", e)
	}
}

// A record a crash left unfinished at the end of contexts.log is not read,
// and the next flush cuts it off before its own: every complete record is
// counted once, the torn one never, and the log reads whole after.
func TestContextsLogTornRecord(t *testing.T) {
	setAges(t, time.Hour, time.Hour)
	dir := t.TempDir()
	s := open(t, dir)
	checkBillboard(t, s, 2)
	logPath := filepath.Join(dir, "config", "contexts.log")
	appendTo(t, logPath, []byte(`{"at":"2026-08-24T15:00:00Z","ctx":[{"id":"`+billboard+`","st`))
	other := open(t, dir)
	e, ok, err := other.Contexts().Context(billboard)
	if err != nil || !ok || e.Checks != 2 {
		t.Fatalf("with a torn record: %+v, %v, %v; want the 2 steps flushed", e, ok, err)
	}
	checkBillboard(t, other, 1)
	data, _ := os.ReadFile(logPath)
	if strings.Contains(string(data), `"st`+"{") || !strings.HasSuffix(string(data), "\n") {
		t.Fatalf("the torn record is still in the log:\n%s", data)
	}
	e, ok, err = open(t, dir).Contexts().Context(billboard)
	if err != nil || !ok || e.Checks != 3 {
		t.Fatalf("after the next flush: %+v, %v, %v; want 3 steps", e, ok, err)
	}
}
