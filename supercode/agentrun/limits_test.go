package agentrun

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A control socket held by a process that is not an ancestor of the hook —
// an agent that removed laserbrain run's socket and listens in its place,
// answering yes to everything — is not believed: the call is refused, and
// the impostor is never asked.
func TestLimitToolCallRefusesAnImpostor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	asked := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		asked <- line
		_, _ = c.Write([]byte(`{"ok":true}` + "\n"))
	}()
	// This process listens: it is not its own ancestor.
	s := &Supervisor{Getenv: func(k string) string {
		if k == EnvControl {
			return path
		}
		return ""
	}}
	reason := s.LimitToolCall("Bash", "t1")
	if !strings.Contains(reason, "not the laserbrain run this agent runs under") {
		t.Fatalf("LimitToolCall through an impostor's socket: %q; want a refusal naming the owner", reason)
	}
	// The client has hung up: the impostor's read ends, with nothing read.
	if q := <-asked; q != "" {
		t.Fatalf("the impostor was asked %q", q)
	}
}

// Without LASERBRAIN_RUN_CONTROL nothing is asked and nothing refused.
func TestLimitToolCallWithoutLimits(t *testing.T) {
	s := &Supervisor{Getenv: func(string) string { return "" }}
	if r := s.LimitToolCall("Bash", "t1"); r != "" {
		t.Fatalf("refused without limits: %q", r)
	}
}

// isAncestor: the parent is one, this process and a made-up pid are not.
func TestIsAncestor(t *testing.T) {
	if !isAncestor(os.Getppid()) {
		t.Fatal("the parent is not an ancestor")
	}
	if isAncestor(os.Getpid()) || isAncestor(1<<30) {
		t.Fatal("this process or no process counted as an ancestor")
	}
}
