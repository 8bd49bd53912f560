package localstore

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// logLock is the run log's lock (runs/log.lock): on Linux a flock on a
// descriptor the store keeps open, so that taking it, which every save and
// every read does, costs two system calls and no open and close.
type logLock struct {
	path string
	f    *os.File
}

func newLogLock(path string) *logLock { return &logLock{path: path} }

func (l *logLock) Path() string { return l.path }
func (l *logLock) Lock() error  { return l.take(unix.LOCK_EX) }
func (l *logLock) RLock() error { return l.take(unix.LOCK_SH) }

func (l *logLock) take(how int) error {
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_RDONLY|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		l.f = f
	}
	for {
		err := unix.Flock(int(l.f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func (l *logLock) Unlock() error { return unix.Flock(int(l.f.Fd()), unix.LOCK_UN) }

// close lets the descriptor go (and any lock with it).
func (l *logLock) close() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
