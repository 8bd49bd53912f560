package fleet_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// updateChild is the writer of TestRunUpdatesSurviveAKilledWriter: it
// counts run "r" of the store in dir up, one UpdateRun at a time, and
// prints each count once UpdateRun has returned for it, until it is killed.
func updateChild(dir string) int {
	s, err := fleet.OpenLocal(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := bufio.NewWriter(os.Stdout)
	for {
		r, err := s.UpdateRun(context.Background(), "r", func(r *fleet.Run) error { r.Checks++; return nil })
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(out, r.Checks)
		if err := out.Flush(); err != nil {
			return 1
		}
	}
}

// TestRunUpdatesSurviveAKilledWriter: a process updates a run as fast as
// it can while this one reads it without a lock, and is killed with
// SIGKILL at a moment it did not choose. Every read is whole and never
// goes back; after the kill the run holds every count the writer was told
// was kept, and at most the one it was writing; the next update goes on
// from there.
func TestRunUpdatesSurviveAKilledWriter(t *testing.T) {
	dir := t.TempDir()
	s := localDir(dir).Open(t)
	ctx := context.Background()
	if err := s.CreateRun(ctx, fleet.Run{ID: "r", Agent: "a", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FLEET_TEST_UPDATE_DIR="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := 150 + time.Now().Nanosecond()%100 // after this many kept counts
	acked, seen := 0, 0
	lines := bufio.NewScanner(stdout)
	for acked < kill && lines.Scan() {
		n, err := strconv.Atoi(lines.Text())
		if err != nil || n != acked+1 {
			t.Fatalf("the writer printed %q after %d", lines.Text(), acked)
		}
		acked = n
		r, err := s.Run(ctx, "r")
		if err != nil {
			t.Fatalf("a read while the writer writes: %v", err)
		}
		if r.Checks < seen || r.Checks < acked {
			t.Fatalf("a read while the writer writes gave %d checks, after %d read and %d kept", r.Checks, seen, acked)
		}
		seen = r.Checks
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() { // what it printed before it died was kept too
		if n, err := strconv.Atoi(lines.Text()); err == nil && n == acked+1 {
			acked = n
		}
	}
	_ = cmd.Wait()
	if acked < kill {
		t.Fatalf("the writer stopped at %d, before it was killed", acked)
	}
	r, err := s.Run(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if r.Checks != acked && r.Checks != acked+1 {
		t.Fatalf("after the kill the run holds %d checks; the writer was told %d were kept", r.Checks, acked)
	}
	next, err := s.UpdateRun(ctx, "r", func(x *fleet.Run) error { x.Checks++; return nil })
	if err != nil || next.Checks != r.Checks+1 {
		t.Fatalf("the update after the kill: %d checks, %v (want %d)", next.Checks, err, r.Checks+1)
	}
}

// TestTornRunSlot: an update a crash cut off leaves its slot of the run's
// file torn (here: garbage over the middle of the newest slot's record, at
// the place the format puts it). The run reads as the update before, whole
// — nothing an update returned for is lost — and the next update goes on
// from it. With both slots torn the run is damaged: reading it says so and
// names the file, and an update changes nothing.
func TestTornRunSlot(t *testing.T) {
	dir := t.TempDir()
	s, _ := fleet.OpenLocal(dir)
	ctx := context.Background()
	if err := s.CreateRun(ctx, fleet.Run{ID: "r", Agent: "a", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := s.UpdateRun(ctx, "r", func(r *fleet.Run) error { r.Checks++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "runs", "r.run")
	newest, _ := slotOffsets(t, path)
	scribble(t, path, newest+64+10)
	if r, err := s.Run(ctx, "r"); err != nil || r.Checks != 4 {
		t.Fatalf("the newest slot torn: the run reads %d checks, %v; want the 4 before it", r.Checks, err)
	}
	if runs, err := s.ListRuns(ctx, fleet.RunFilter{}); err != nil || len(runs) != 1 || runs[0].Checks != 4 {
		t.Fatalf("the newest slot torn: ListRuns = %+v, %v", runs, err)
	}
	if r, err := s.UpdateRun(ctx, "r", func(r *fleet.Run) error { r.Checks++; return nil }); err != nil || r.Checks != 5 {
		t.Fatalf("the update after the tear: %d checks, %v", r.Checks, err)
	}
	if r, err := s.Run(ctx, "r"); err != nil || r.Checks != 5 {
		t.Fatalf("after the update the run reads %d checks, %v", r.Checks, err)
	}
	newest, older := slotOffsets(t, path)
	scribble(t, path, newest+64+10)
	scribble(t, path, older+64+10)
	before, _ := os.ReadFile(path)
	if _, err := s.Run(ctx, "r"); err == nil || !contains(err.Error(), path, "damaged") {
		t.Fatalf("both slots torn: Run = %v, want the file named as damaged", err)
	}
	if _, err := s.UpdateRun(ctx, "r", func(r *fleet.Run) error { r.Checks++; return nil }); err == nil || !contains(err.Error(), path, "damaged") {
		t.Fatalf("both slots torn: UpdateRun = %v, want the file named as damaged", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("an update of a damaged run changed its file")
	}
}

// slotOffsets are where the newest and the older slot of a run's file
// start, read off the format's header: magic (8 bytes), the sequence
// number (8, little-endian), the slot's size (4).
func slotOffsets(t *testing.T, path string) (newest, older int) {
	t.Helper()
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	size := int(binary.LittleEndian.Uint32(buf[16:]))
	if binary.LittleEndian.Uint64(buf[size+8:]) > binary.LittleEndian.Uint64(buf[8:]) {
		return size, 0
	}
	return 0, size
}

func scribble(t *testing.T, path string, off int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("#torn#"), int64(off)); err != nil {
		t.Fatal(err)
	}
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestEarlierRunFile: a home an earlier version wrote keeps a run in
// runs/<id>.json, replaced whole (and its sessions in sessions/). It
// reads and lists as it is, a new run of its id is refused, and its first
// update moves it into the slot file (the old file gone) without losing a
// field.
func TestEarlierRunFile(t *testing.T) {
	dir := t.TempDir()
	s, _ := fleet.OpenLocal(dir)
	ctx := context.Background()
	old := fleet.Run{ID: "old", Agent: "a", Fleet: "f", Goal: "g", Sessions: []string{"s1"}, Checks: 3, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	data, _ := json.MarshalIndent(old, "", "  ")
	legacy := filepath.Join(dir, "runs", "old.json")
	if err := os.WriteFile(legacy, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sessions", "s1"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Run(ctx, "old"); err != nil || r.Goal != "g" || r.Checks != 3 {
		t.Fatalf("Run(old) = %+v, %v", r, err)
	}
	if err := s.CreateRun(ctx, fleet.Run{ID: "old"}); err == nil {
		t.Fatal("CreateRun over an earlier version's run succeeded")
	}
	if err := s.CreateRun(ctx, fleet.Run{ID: "new", Fleet: "f", Created: old.Created.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if runs, err := s.ListRuns(ctx, fleet.RunFilter{Fleet: "f"}); err != nil || len(runs) != 2 || runs[0].ID != "old" || runs[1].ID != "new" {
		t.Fatalf("ListRuns = %+v, %v", runs, err)
	}
	r, err := s.UpdateRun(ctx, "old", func(r *fleet.Run) error { r.Checks++; return nil })
	if err != nil || r.Checks != 4 || r.Goal != "g" || len(r.Sessions) != 1 {
		t.Fatalf("UpdateRun(old) = %+v, %v", r, err)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Fatalf("the earlier file is still there after the update: %v", err)
	}
	if r, err := s.Run(ctx, "old"); err != nil || r.Checks != 4 || !r.Created.Equal(old.Created) {
		t.Fatalf("Run(old) after the move = %+v, %v", r, err)
	}
	if got, err := s.RunForSession(ctx, "s1"); err != nil || got.ID != "old" {
		t.Fatalf("RunForSession(s1) = %+v, %v", got, err)
	}
}
