package proctest

import (
	"os/exec"
	"runtime"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// A program's two outputs and its exit status come back as it left them,
// a failing status included.
func TestRunKeepsOutputsAndStatus(t *testing.T) {
	sh := testenv.LookPath(t, "sh")
	out, errOut, code := Run(t, exec.Command(sh, "-c", "echo out; echo err >&2; exit 3"))
	if out != "out\n" || errOut != "err\n" || code != 3 {
		t.Errorf("got %q %q %d, want %q %q 3", out, errOut, code, "out\n", "err\n")
	}
	if _, _, code := Run(t, exec.Command(sh, "-c", "true")); code != 0 {
		t.Errorf("true: exit %d", code)
	}
}

// A program that a signal ended has the status -1; one that cannot start
// has none, and the test fails rather than judge a made-up one.
func TestRunSignalAndNoStart(t *testing.T) {
	sh := testenv.LookPath(t, "sh")
	if _, _, code := Run(t, exec.Command(sh, "-c", "kill -KILL $$")); code != -1 {
		t.Errorf("killed: exit %d, want -1", code)
	}
	ft := &fatalT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ft, exec.Command("/nonexistent/program"))
	}()
	<-done
	if !ft.failed {
		t.Errorf("a program that cannot start: Run did not fail the test")
	}
}

// fatalT records a Fatalf and ends its goroutine, as testing.T does.
type fatalT struct {
	testing.TB
	failed bool
}

func (f *fatalT) Helper() {}

func (f *fatalT) Fatalf(string, ...any) {
	f.failed = true
	runtime.Goexit()
}
