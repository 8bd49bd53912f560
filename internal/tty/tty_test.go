package tty

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// nonblocking reports whether f's open file is in non-blocking mode.
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
		t.Fatal(err, ferr)
	}
	return flags&unix.O_NONBLOCK != 0
}

// openPTY opens a pseudo-terminal pair: the controlling side and the
// terminal itself.
func openPTY(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	rc, _ := ptmx.SyscallConn()
	var n int
	var ierr error
	_ = rc.Control(func(fd uintptr) {
		if ierr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ierr == nil {
			n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	})
	if ierr != nil {
		t.Skipf("cannot unlock the pseudo-terminal: %v", ierr)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("cannot open the terminal side: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptmx, pts
}

// A pipe is not a terminal, and asking leaves it non-blocking, so a read
// from it can still be cancelled; (*os.File).Fd would have switched it to
// blocking mode.
func TestPipeStaysNonBlocking(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if !nonblocking(t, r) {
		t.Fatal("os.Pipe did not give a non-blocking pipe: the test cannot tell")
	}
	if Is(r) || Is(w) {
		t.Fatal("a pipe is a terminal")
	}
	if !nonblocking(t, r) || !nonblocking(t, w) {
		t.Fatal("asking switched the pipe to blocking mode")
	}
	_ = r.Fd() // what the shared helper replaces, for contrast
	if nonblocking(t, r) {
		t.Fatal("Fd left the pipe non-blocking: the test above proves nothing")
	}
}

// A pseudo-terminal is a terminal; /dev/null, a buffer and nil are not.
func TestTerminals(t *testing.T) {
	_, pts := openPTY(t)
	if !Is(pts) {
		t.Error("a pseudo-terminal is not a terminal")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var nilFile *os.File
	for name, v := range map[string]any{"/dev/null": null, "a buffer": &bytes.Buffer{}, "a nil file": nilFile, "nil": nil} {
		if Is(v) {
			t.Errorf("%s is a terminal", name)
		}
	}
}
