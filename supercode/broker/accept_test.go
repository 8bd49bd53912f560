package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/childtest"
)

// outOfDescriptorsEnv names the directory a child of this test binary runs
// the out-of-descriptors case in.
const outOfDescriptorsEnv = "LASERKIT_BROKER_OUT_OF_FDS"

func TestMain(m *testing.M) {
	childtest.Serve(outOfDescriptorsEnv, outOfDescriptors)
	os.Exit(m.Run())
}

// A broker that runs out of file descriptors keeps accepting once it has
// them again. The test makes the kernel refuse the broker's accept for
// real (EMFILE: the soft descriptor limit lowered and every descriptor
// under it taken), waits for the broker to say so, gives the descriptors
// back, and relays through it. A broker whose accept loop ended at the
// first error would leave the relay waiting for its deadline.
//
// It runs in a child process of its own: the case leaves exactly one
// descriptor free for its connection, and in the test binary a goroutine
// an earlier test left behind could take it first.
func TestBrokerAcceptsAgainAfterRunningOutOfDescriptors(t *testing.T) {
	out, err := childtest.Command(outOfDescriptorsEnv, t.TempDir(), nil).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func outOfDescriptors(dir string) (err error) {
	sock := filepath.Join(dir, "b.sock")
	logs := make(chan string, 64)
	s := &Server{Self: "/bin/sh", Env: []string{"PATH=/usr/bin:/bin"}, Dir: "/", Allow: func([]string) error { return nil },
		Log: func(m string) {
			select {
			case logs <- m:
			default:
			}
		}}
	if err := s.Listen(sock); err != nil {
		return err
	}
	defer s.Close(5 * time.Second)

	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		return err
	}
	// Every descriptor under a lowered limit taken but one, which the
	// connection takes: none is left for the broker to accept it with.
	var fill []*os.File
	lim := old
	lim.Cur = 64
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		fill = append(fill, f)
		if len(fill) > 1<<16 {
			return errors.New("could not run out of descriptors")
		}
		if len(fill) == 1 {
			// Lower the limit only once this process is under it.
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
				return err
			}
		}
	}
	fill[len(fill)-1].Close()
	fill = fill[:len(fill)-1]
	restore := func() {
		for _, f := range fill {
			f.Close()
		}
		fill = nil
		if rerr := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); rerr != nil && err == nil {
			err = fmt.Errorf("restoring the descriptor limit: %w", rerr)
		}
	}
	defer restore()
	pending, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	defer pending.Close()
	select {
	case m := <-logs:
		if !strings.Contains(m, "too many open files") {
			return fmt.Errorf("the broker logged %q, not running out of descriptors", m)
		}
	case <-time.After(10 * time.Second):
		return errors.New("the broker did not report its failed accept within 10 s")
	}
	restore()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code, err := Relay(ctx, sock, []string{"-c", "echo served"}, func(string) string { return "" }, "", nil, &out, &errb)
	if err != nil || code != 0 || out.String() != "served\n" {
		return fmt.Errorf("relay after the broker ran out of descriptors: exit %d, %v, stdout %q, stderr %q", code, err, out.String(), errb.String())
	}
	return nil
}
