package loop

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
)

// A run whose lock is held and whose run.json names a live process that
// started at another time than recorded — a pid the kernel gave to someone
// else — is refused, and that process gets no signal.
func TestCancelRefusesAReusedPid(t *testing.T) {
	home := t.TempDir()
	run := "aaaaaaaaaaaa"
	dir := filepath.Join(home, run)
	stranger := exec.Command("sleep", "30")
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stranger.Process.Kill(); _ = stranger.Wait() })
	start, err := procStart(stranger.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	m := Meta{ID: run, Script: "x.sh", Status: "running", Created: time.Now().UTC(),
		Process: &Process{PID: stranger.Process.Pid, Start: start + 1, Home: home}}
	if err := writeMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	lk, err := fsx.LockFile(filepath.Join(dir, "lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	_, err = Cancel(context.Background(), CancelOptions{Run: run, Home: home, Wait: time.Second})
	var le *Error
	if !errors.As(err, &le) || le.Kind != KindUsage || !strings.Contains(err.Error(), "is not the loop that took the run") {
		t.Fatalf("Cancel: %v; want a usage refusal naming the other process", err)
	}
	// The stranger was not signalled: it dies of our SIGTERM, not of SIGINT.
	_ = stranger.Process.Signal(syscall.SIGTERM)
	_ = stranger.Wait()
	if ws := stranger.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the process with the reused pid ended %v; want killed by our SIGTERM", stranger.ProcessState)
	}
}

// A run nobody holds is not running: refused, whatever run.json says.
func TestCancelRefusesARunNobodyHolds(t *testing.T) {
	home := t.TempDir()
	run := "bbbbbbbbbbbb"
	m := Meta{ID: run, Status: "running", Created: time.Now().UTC(), Process: selfProcess(home)}
	if err := writeMeta(filepath.Join(home, run), m); err != nil {
		t.Fatal(err)
	}
	_, err := Cancel(context.Background(), CancelOptions{Run: run, Home: home})
	if err == nil || !strings.Contains(err.Error(), "is not running") {
		t.Fatalf("Cancel of an unheld run: %v", err)
	}
}

// procStart reads field 22 of /proc/PID/stat; a process's value does not
// change, and a later process's is not smaller.
func TestProcStart(t *testing.T) {
	me, err := procStart(os.Getpid())
	if err != nil || me == 0 {
		t.Fatalf("procStart(self) = %d, %v", me, err)
	}
	again, _ := procStart(os.Getpid())
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	later, err := procStart(child.Process.Pid)
	if err != nil || again != me || later < me {
		t.Fatalf("self %d then %d, child %d (%v)", me, again, later, err)
	}
	if _, err := procStart(1 << 30); err == nil {
		t.Fatal("procStart of no process succeeded")
	}
}
