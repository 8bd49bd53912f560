package localstore

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// runLock holds one run against every other holder. On Linux it is a
// one-byte open-file-description lock (F_OFD_SETLK) on runs/locks, at an
// offset hashed from the run id over 2^62 bytes: no file is created per
// run. The lock belongs to the open file, so two handles in one process
// exclude each other as two processes do, and closing the file (or the
// process dying) releases it.
type runLock struct{ f *os.File }

func lockRun(dir, id string, timeout time.Duration) (*runLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, "locks"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	h := fnv.New64a()
	io.WriteString(h, id)
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: int64(h.Sum64() >> 2), Len: 1}
	deadline := time.Now().Add(timeout)
	for {
		err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
		if err == nil {
			return &runLock{f: f}, nil
		}
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EACCES) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("still held by another process after %s", timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Unlock releases the run.
func (l *runLock) Unlock() error { return l.f.Close() }
