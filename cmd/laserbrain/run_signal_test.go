package main

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// laserbrain run passes signals to the agent and keeps its exit code: a
// TERM the agent traps ends it with its own status (7); an INT that kills
// it is reported as 128+2, as a shell would.
func TestRunForwardsSignals(t *testing.T) {
	lb := laserbrainBinary(t)
	dir := t.TempDir()
	start := func(t *testing.T, script string) (*exec.Cmd, *strings.Builder) {
		cmd := exec.Command(lb, "run", "--agent", "sig", "--", "sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LASERBRAIN_HOME="+filepath.Join(dir, "home"), "LASERBRAIN_FLEET=sig")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, filepath.Join(dir, "ready"))
		return cmd, &stderr
	}
	exitOf := func(t *testing.T, cmd *exec.Cmd) int {
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}

	t.Run("TERM trapped by the agent", func(t *testing.T) {
		os.Remove(filepath.Join(dir, "ready"))
		cmd, stderr := start(t, `trap 'echo got-term > marker; exit 7' TERM; touch ready; while :; do sleep 0.05; done`)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := exitOf(t, cmd); code != 7 {
			t.Fatalf("exit %d, want the agent's 7\n%s", code, stderr)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "marker")); err != nil || strings.TrimSpace(string(b)) != "got-term" {
			t.Fatalf("the agent never saw TERM: %v", err)
		}
		if !strings.Contains(stderr.String(), "(agent sig): exit 7") {
			t.Fatalf("no closing judgment: %s", stderr)
		}
	})
	t.Run("HUP kills the agent", func(t *testing.T) {
		os.Remove(filepath.Join(dir, "ready"))
		cmd, stderr := start(t, `touch ready; exec sleep 30`)
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if code := exitOf(t, cmd); code != 128+int(syscall.SIGHUP) {
			t.Fatalf("exit %d, want 129 (killed by SIGHUP)\n%s", code, stderr)
		}
	})
	// INT is forwarded when standard input is not a terminal. A shell
	// started with INT ignored (as under a job-control-less runner) cannot
	// even trap it, so the agent here is this test binary, which can.
	t.Run("INT reaches the agent", func(t *testing.T) {
		os.Remove(filepath.Join(dir, "ready"))
		self, _ := os.Executable()
		cmd := exec.Command(lb, "run", "--agent", "sig", "--", self)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LASERBRAIN_HOME="+filepath.Join(dir, "home"), "LASERBRAIN_FLEET=sig", "LASERBRAIN_TEST_SIGNAL_CHILD="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, filepath.Join(dir, "ready"))
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code := exitOf(t, cmd); code != 9 {
			t.Fatalf("exit %d, want the agent's 9 after it saw INT", code)
		}
	})
}

// signalChild waits for SIGINT, then exits 9 (or 3 after 20 s without it).
func signalChild(dir string) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	_ = os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
	select {
	case <-c:
		os.Exit(9)
	case <-time.After(20 * time.Second):
		os.Exit(3)
	}
}

func waitFor(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}
