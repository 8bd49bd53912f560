package agentrun

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/childtest"
	"github.com/laserkit/laserkit/supercode/fleet"
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
	s := &Tracker{Getenv: func(k string) string {
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
	s := &Tracker{Getenv: func(string) string { return "" }}
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

// TestMain lets the test binary act as an agent's hook process for
// BenchmarkLimitedToolCall: a child of the benchmark, so the benchmark's
// limiter is its ancestor, as laserbrain run is a hook's — and as one part
// of an agent client's process tree for the binding tests (child).
func TestMain(m *testing.M) {
	childtest.Serve(childEnv, child)
	if path := os.Getenv("AGENTRUN_BENCH_ASK"); path != "" {
		n, _ := strconv.Atoi(os.Getenv("AGENTRUN_BENCH_N"))
		s := &Tracker{Getenv: func(k string) string {
			if k == EnvControl {
				return path
			}
			return ""
		}}
		for i := 0; i < n; i++ {
			if r := s.LimitToolCall("Bash", ""); r != "" {
				fmt.Fprintln(os.Stderr, r)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// BenchmarkLimitedToolCall is what a limit costs a tool call: one question
// to laserbrain run's socket (the owner's ancestry checked each time),
// against the baseline every hook pays anyway, starting a process
// (/bin/true), measured in the same run; the ratio is x-true.
func BenchmarkLimitedToolCall(b *testing.B) {
	var baseline float64
	b.Run("true", func(b *testing.B) {
		for b.Loop() {
			_ = exec.Command("/bin/true").Run()
		}
		baseline = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("ask", func(b *testing.B) {
		s := &Tracker{Stores: StoreFuncs{Fleet: func() (fleet.Store, error) { return nil, errors.New("no store in the benchmark") }}.Open}
		l, cleanup, err := s.newLimiter(b.TempDir(), "bench", fleet.Limits{MaxToolCalls: 1 << 30}, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		defer cleanup()
		defer l.done(0)
		self, _ := os.Executable()
		// One child asks b.N times: the process start is paid once.
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), "AGENTRUN_BENCH_ASK="+l.path, "AGENTRUN_BENCH_N="+strconv.Itoa(b.N))
		cmd.Stderr = os.Stderr
		b.ResetTimer()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		if baseline > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/baseline, "x-true")
		}
	})
}
