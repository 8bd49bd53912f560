package localstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMarkerOfADeadProcessIsTakenAtOnce: a lock marker left by a process
// that is gone (a real one, started and waited for) is taken without
// waiting out markerStale, so a hook is never stalled by it; a marker of a
// live process (this one) is not stolen before then.
func TestMarkerOfADeadProcessIsTakenAtOnce(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	path := filepath.Join(t.TempDir(), "contexts.json")
	if err := os.WriteFile(path+".lock", []byte(strconv.Itoa(dead)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	release, err := lockShared(path)
	if err != nil {
		t.Fatal(err)
	}
	// The budget itself: well under the steal's wait, which it must not need.
	if took := time.Since(start); took > markerStale/2 {
		t.Fatalf("a dead process's marker held the lock %v (markerStale is %v)", took, markerStale)
	}
	b, _ := os.ReadFile(path + ".lock")
	if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("the marker is %q, not this process's", b)
	}
	release()
	if markerDead(path+".lock") || !markerDeadFor(t, os.Getpid()) {
		t.Fatal("markerDead reads a live process as gone, or a missing marker as dead")
	}
}

// markerDeadFor is false for a marker naming a live pid.
func markerDeadFor(t *testing.T, pid int) bool {
	p := filepath.Join(t.TempDir(), "m.lock")
	if err := os.WriteFile(p, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return !markerDead(p)
}
