package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/fleet/fleettest"
)

type localDir string

func (d localDir) Open(t testing.TB) fleet.Store {
	s, err := fleet.OpenLocal(string(d))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
func (d localDir) Env() []string { return []string{"LASERKIT_FLEET_TEST_DIR=" + string(d)} }

func TestLocalProcesses(t *testing.T) {
	fleettest.Processes(t, func(t *testing.T) fleettest.Place { return localDir(t.TempDir()) })
}

func TestLocal(t *testing.T) {
	fleettest.Run(t, func(t *testing.T) fleet.Store {
		return localDir(t.TempDir()).Open(t)
	})
}

// TestTornEventLine: a line a crash cut short at the end is skipped, the
// events before it are read; the next append cuts it off, so it never ends
// up in the middle; a damaged line in the middle is named by its line.
func TestTornEventLine(t *testing.T) {
	dir := t.TempDir()
	s, _ := fleet.OpenLocal(dir)
	ctx := context.Background()
	if _, err := s.AppendEvent(ctx, "r", fleet.RunEvent{ID: "a", Kind: fleet.KindTool}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(dir, "events", "r.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if _, err := f.WriteString(`{"id":"b","ki`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	evs, err := s.Events(ctx, "r")
	if err != nil || len(evs) != 1 || evs[0].ID != "a" {
		t.Fatalf("Events = %+v, %v", evs, err)
	}
	if _, err := s.AppendEvent(ctx, "r", fleet.RunEvent{ID: "c", Kind: fleet.KindTool}); err != nil {
		t.Fatal(err)
	}
	evs, err = s.Events(ctx, "r")
	if err != nil || len(evs) != 2 || evs[1].ID != "c" {
		t.Fatalf("after the next append: %+v, %v", evs, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "events", "r.jsonl"))
	if strings.Contains(string(data), `"ki`+"\n") || strings.Count(string(data), "\n") != 2 {
		t.Fatalf("the torn line is still in the file:\n%s", data)
	}
	if err := os.WriteFile(filepath.Join(dir, "events", "r.jsonl"), append([]byte(`{"id":"x",`+"\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Events(ctx, "r"); err == nil || !strings.Contains(err.Error(), "r.jsonl line 1") {
		t.Fatalf("a damaged first line: %v", err)
	}
}

// TestFleetID: clones and worktrees of one repository are one fleet (the
// root commit, checked against git's own answer); LASERBRAIN_FLEET wins; a
// directory outside any repository is its own fleet.
func TestFleetID(t *testing.T) {
	testenv.LookPath(t, "git")
	ctx := context.Background()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	git := func(dir string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git(repo, "init", "-q")
	git(repo, "commit", "-q", "--allow-empty", "-m", "first")
	first := git(repo, "rev-parse", "HEAD")
	git(repo, "commit", "-q", "--allow-empty", "-m", "second")
	git(root, "clone", "-q", repo, "clone")
	git(repo, "worktree", "add", "-q", filepath.Join(root, "wt"))
	t.Setenv("LASERBRAIN_FLEET", "")
	want := first[:40]
	for _, d := range []string{repo, filepath.Join(root, "clone"), filepath.Join(root, "wt")} {
		got, err := fleet.ID(ctx, d)
		if err != nil || got != want {
			t.Errorf("fleet of %s = %q, %v; want the root commit %s", d, got, err, want)
		}
	}
	plain := filepath.Join(root, "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := fleet.ID(ctx, plain); got != "dir:"+plain {
		t.Errorf("fleet outside a repository = %q", got)
	}
	t.Setenv("LASERBRAIN_FLEET", "shared-fleet")
	if got, _ := fleet.ID(ctx, repo); got != "shared-fleet" {
		t.Errorf("LASERBRAIN_FLEET not honoured: %q", got)
	}
}

// TestLocalWitness runs the round counter's witness on the local store,
// the forger editing the files as a person with a shell would.
func TestLocalWitness(t *testing.T) {
	fleettest.Witness(t, func(t *testing.T) fleet.Store {
		return localDir(t.TempDir()).Open(t)
	}, cutLocal)
}

func cutLocal(t *testing.T, s fleet.Store, fl string, keep int64) {
	t.Helper()
	path := fleet.JournalLocation(s, fl)
	head := strings.TrimSuffix(path, ".jsonl") + ".head"
	if keep == 0 {
		for _, p := range []string{path, head} {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	kept := strings.Join(lines[:keep], "")
	var last fleet.JournalRecord
	if err := json.Unmarshal([]byte(lines[keep-1]), &last); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(map[string]any{"fleet": fl, "records": keep, "hash": last.Hash, "size": len(kept)})
	if err := os.WriteFile(head, h, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestJournalRecordsAfter: reading the journal after a record reads it from
// the end backwards, and gives exactly what reading it whole and keeping
// the later records gives, on both sides of every 64 KB boundary; a torn
// last line is not a record.
func TestJournalRecordsAfter(t *testing.T) {
	dir := t.TempDir()
	s, _ := fleet.OpenLocal(dir)
	ctx := context.Background()
	for i := 1; i <= 1500; i++ {
		text := strings.Repeat("x", i%300)
		if _, err := s.AppendJournal(ctx, fleet.JournalRecord{Fleet: "f", Kind: fleet.JournalRound, Round: int64(i), Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.JournalRecords(ctx, "f", 0)
	if err != nil || len(all) != 1500 {
		t.Fatalf("%d records, %v", len(all), err)
	}
	for _, after := range []int64{1, 2, 299, 300, 301, 777, 1400, 1499, 1500, 1600} {
		got, err := s.JournalRecords(ctx, "f", after)
		if err != nil {
			t.Fatal(err)
		}
		var want []fleet.JournalRecord
		for _, r := range all {
			if r.Seq > after {
				want = append(want, r)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("after %d: %d records, want %d", after, len(got), len(want))
		}
		for i := range got {
			if got[i].Seq != want[i].Seq || string(got[i].Raw) != string(want[i].Raw) {
				t.Fatalf("after %d: record %d is seq %d, want %d", after, i, got[i].Seq, want[i].Seq)
			}
		}
	}
	f, _ := os.OpenFile(s.JournalLocation("f"), os.O_APPEND|os.O_WRONLY, 0)
	if _, err := f.WriteString(`{"seq":1501,"at":"`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, _ := s.JournalRecords(ctx, "f", 1499); len(got) != 1 || got[0].Seq != 1500 {
		t.Fatalf("with a torn last line: %d records after 1499", len(got))
	}
}

// TestAppendSeesWhatOtherWritersAppended: a store kept open (laserbrain
// run's broker keeps one for every hook of its agent) reads only what was
// appended since its last append, and still takes an event another
// process appended meanwhile as recorded; a run's events file removed and
// made again is read again from its start.
func TestAppendSeesWhatOtherWritersAppended(t *testing.T) {
	dir := t.TempDir()
	held, _ := fleet.OpenLocal(dir)
	other, _ := fleet.OpenLocal(dir)
	ctx := context.Background()
	appendOne := func(s *fleet.Local, id string) bool {
		t.Helper()
		added, err := s.AppendEvent(ctx, "r", fleet.RunEvent{ID: id, Kind: fleet.KindTool})
		if err != nil {
			t.Fatal(err)
		}
		return added
	}
	for i, id := range []string{"a", "b", "c"} {
		if !appendOne(held, id) {
			t.Fatalf("event %d (%s) not added", i, id)
		}
	}
	if !appendOne(other, "d") {
		t.Fatal("another writer's new event not added")
	}
	if appendOne(held, "d") || appendOne(held, "a") {
		t.Fatal("the held store added an event the run has (another writer's, or its own first)")
	}
	if err := os.Remove(filepath.Join(dir, "events", "r.jsonl")); err != nil {
		t.Fatal(err)
	}
	if !appendOne(other, "x") || !appendOne(held, "a") || appendOne(held, "x") {
		t.Fatal("after the file was made again: the held store still reads the old one")
	}
	evs, err := held.Events(ctx, "r")
	if err != nil || len(evs) != 2 || evs[0].ID != "x" || evs[1].ID != "a" {
		t.Fatalf("events = %+v, %v", evs, err)
	}
}

// BenchmarkAppendEventLongRun: one tool call's event on a run 5,000
// events in, by a store kept open across calls (laserbrain run's broker),
// beside the same by a store opened for the call (a hook process of its
// own, which reads the run's events whole to tell a repeated call).
// x-fresh is the held store's time over the fresh one's.
func BenchmarkAppendEventLongRun(b *testing.B) {
	dir := b.TempDir()
	held, _ := fleet.OpenLocal(dir)
	ctx := context.Background()
	for i := 0; i < 5000; i++ {
		if _, err := held.AppendEvent(ctx, "r", fleet.RunEvent{ID: fmt.Sprintf("tool:toolu_%06d", i), Kind: fleet.KindTool, Name: "Bash", Text: "go test ./..."}); err != nil {
			b.Fatal(err)
		}
	}
	var heldTime, freshTime time.Duration
	n := 0
	for b.Loop() {
		for _, s := range []*fleet.Local{held, nil} {
			if s == nil {
				s, _ = fleet.OpenLocal(dir)
			}
			start := time.Now()
			if _, err := s.AppendEvent(ctx, "r", fleet.RunEvent{ID: fmt.Sprintf("tool:bench_%d_%p", n, s), Kind: fleet.KindTool, Name: "Bash", Text: "go test ./..."}); err != nil {
				b.Fatal(err)
			}
			if s == held {
				heldTime += time.Since(start)
			} else {
				freshTime += time.Since(start)
			}
		}
		n++
	}
	b.ReportMetric(float64(heldTime.Microseconds())/float64(n), "held-µs")
	b.ReportMetric(float64(freshTime.Microseconds())/float64(n), "fresh-µs")
	b.ReportMetric(float64(heldTime)/float64(freshTime), "x-fresh")
}
