package agenttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeSession is a session whose "client" is a shell script.
func fakeSession(t *testing.T, script string) *Session {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fake-client")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &Client{Name: "fake", API: ChatAPI, args: func(*Session, string) []string { return nil }}
	return newSession(t, c, bin, NewModelFor(t, ChatAPI))
}

// A process the client leaves behind in its own session (the way Cline's
// hub daemon detaches) is found by the session's HOME and stopped when the
// run returns; one that was already running (an interactive session) is
// left alone.
func TestRunStopsWhatTheClientLeaves(t *testing.T) {
	// The client returns once its daemon runs (as a daemonising client
	// does): until sleep has replaced the forked shell, the process the run
	// leaves is still named fake-client.
	s := fakeSession(t, "setsid sleep 300 </dev/null >/dev/null 2>&1 &\n"+
		"i=0; until tr '\\0' ' ' </proc/$!/cmdline 2>/dev/null | grep -q '^sleep 300'; do i=$((i+1)); [ $i -lt 2000 ] || exit 3; sleep 0.01; done\n"+
		"echo started\n")
	// Already running in the session when the run starts, as an Interactive one would be.
	earlier := exec.Command("sleep", "301")
	earlier.Env = s.BaseEnv()
	if err := earlier.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = earlier.Process.Kill(); _ = earlier.Wait() }()
	if r := s.Run(t, s.Bin); r.ExitCode != 0 || r.Stdout != "started\n" {
		t.Fatalf("run: %+v", r)
	}
	if len(s.Reaped) != 1 || !strings.Contains(s.Reaped[0], "sleep 300") {
		t.Fatalf("Reaped = %q; want the detached sleep", s.Reaped)
	}
	if left := s.Processes(); len(left) != 1 || left[0] != earlier.Process.Pid {
		t.Fatalf("running after the run: %v; want only the earlier sleep %d", describe(left), earlier.Process.Pid)
	}
}

// A run past its deadline fails the test and leaves no process behind.
func TestRunDeadlineKillsTheGroup(t *testing.T) {
	s := fakeSession(t, "sleep 300 &\nsleep 300\n")
	s.Timeout = time.Second
	r := &recorder{TB: t}
	began := time.Now()
	s.Run(r, s.Bin)
	if took := time.Since(began); took > 30*time.Second {
		t.Fatalf("Run took %s past a 1 s deadline", took)
	}
	if len(r.calls) == 0 || !strings.Contains(r.calls[0], "did not finish within 1s") {
		t.Fatalf("calls = %q; want the deadline reported", r.calls)
	}
	if left := s.Processes(); len(left) != 0 {
		t.Fatalf("still running: %v", describe(left))
	}
}

// Two clients in one session's HOME at once: each Wait stops only what its
// own run left behind, never the other's.
func TestJoinedRunsStopOnlyTheirOwn(t *testing.T) {
	a := fakeSession(t, "setsid sleep 300 </dev/null >/dev/null 2>&1 &\n")
	bBin := filepath.Join(t.TempDir(), "fake-b")
	if err := os.WriteFile(bBin, []byte("#!/bin/sh\nsetsid sleep 301 </dev/null >/dev/null 2>&1 &\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := a.join(t, &Client{Name: "fake-b", API: ChatAPI}, bBin, NewModelFor(t, ChatAPI))
	ra, rb := a.Start(t, a.Bin), b.Start(t, b.Bin)
	// Both sleeps running before a's Wait looks (under load a's may not
	// have been started yet: then there is nothing of a's to stop).
	for _, w := range []struct {
		s    *Session
		name string
	}{{a, "sleep 300"}, {b, "sleep 301"}} {
		for end := time.Now().Add(10 * time.Second); !strings.Contains(strings.Join(describe(w.s.Processes()), " "), w.name); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s never started", w.name)
			}
		}
	}
	ra.Wait(t)
	if len(a.Reaped) != 1 || !strings.Contains(a.Reaped[0], "300") {
		t.Fatalf("a stopped %q; want its own sleep only", a.Reaped)
	}
	if !strings.Contains(strings.Join(describe(b.Processes()), " "), "sleep 301") {
		t.Fatalf("a's Wait stopped b's sleep; b runs %v", describe(b.Processes()))
	}
	rb.Wait(t)
	if len(b.Reaped) != 1 || !strings.Contains(b.Reaped[0], "301") {
		t.Fatalf("b stopped %q", b.Reaped)
	}
	if len(a.Processes())+len(b.Processes()) != 0 {
		t.Fatalf("left: %v %v", describe(a.Processes()), describe(b.Processes()))
	}
}
