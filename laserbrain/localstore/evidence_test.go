package localstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
)

// evidence.json is written in place, so a reader may meet a write half
// done: a read that does not parse is read again under the writers' lock,
// and sees the write once it is whole, rather than counting the check as
// dark.
func TestEvidenceReadMidWriteWaitsForTheWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "evidence.json")
	if err := os.WriteFile(path, []byte(`{"ok": 3, "fail": 0, "at": "2026-`), 0o644); err != nil {
		t.Fatal(err)
	}
	lk, err := fsx.LockFile(path+".flock", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan evidenceRead, 1)
	go func() {
		ev, ok := OpenEvidence(dir).Evidence()
		got <- evidenceRead{ok, ev.OK}
	}()
	waitForLockOpened(t, path+".flock", got)
	if err := fsx.OverwriteUnsynced(path, []byte(`{"ok": 4, "fail": 0, "at": "2026-12-07T18:00:00Z", "window": [], "progress": "", "steps": 4}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lk.Unlock()
	if r := <-got; !r.ok || r.n != 4 {
		t.Errorf("a read that met a write half done: ok %v, %d calls; want the whole write's 4", r.ok, r.n)
	}
}

type evidenceRead struct {
	ok bool
	n  int
}

// waitForLockOpened waits, up to a deadline, until this process holds the
// lock file at path open twice (the test's lock and the reader's try),
// failing if the reader answers first (it did not go for the lock).
func waitForLockOpened(t *testing.T, path string, answered <-chan evidenceRead) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(answered) > 0 {
			t.Fatal("the reader answered without going for the writers' lock")
		}
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("no /proc/self/fd: %v", err)
		}
		n := 0
		for _, fd := range fds {
			if to, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && to == path {
				n++
			}
		}
		if n >= 2 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the reader did not open the writers' lock within 10 s")
}
