package confine

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/laserkit/laserkit/internal/reap"
)

// exited blocks until the child pid has exited, leaving it to be
// collected (WNOWAIT).
func exited(t *testing.T, pid int) {
	t.Helper()
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatalf("waiting for child %d to exit: %v", pid, err)
	}
}

// The subreaper's collecting leaves a child this process waits for itself
// (started through internal/reap) to its own Wait, which gets its status;
// a child started otherwise, exited, is collected — so its Wait finds no
// child, which is what a broker's hook or a checkpoint's git would meet.
func TestReapLeavesWaitedChildren(t *testing.T) {
	mine := exec.Command("true")
	if err := reap.Start(mine); err != nil {
		t.Fatal(err)
	}
	exited(t, mine.Process.Pid)
	Reap(-1)
	if err := reap.Wait(mine); err != nil {
		t.Errorf("a child started through reap: Wait after the reaper ran: %v", err)
	}

	stray := exec.Command("true")
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	exited(t, stray.Process.Pid)
	Reap(-1)
	err := stray.Wait()
	if !errors.Is(err, syscall.ECHILD) {
		t.Errorf("a child started otherwise: Wait after the reaper ran gave %v, want no child processes (the reaper collected it)", err)
	}
}
