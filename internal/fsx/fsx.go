// Package fsx holds the two file-system disciplines every store here follows:
// a file is replaced whole or not at all (temp file, fsync, rename, fsync of
// the directory), and two processes that can meet on the same files take an
// advisory lock first.
package fsx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"
)

// WriteFile atomically replaces path with data. Readers see the old content or
// the new, never a torn mix, and a crash leaves no half-written file behind.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := renameio.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Lock is a held advisory lock; Unlock releases it.
type Lock struct{ fl *flock.Flock }

// Unlock releases the lock. It is safe to call on a nil Lock.
func (l *Lock) Unlock() error {
	if l == nil || l.fl == nil {
		return nil
	}
	return l.fl.Unlock()
}

// LockFile takes an exclusive advisory lock on path (created if missing),
// waiting up to timeout. The lock is released when the process exits, so a
// crashed holder never wedges the next one.
func LockFile(path string, timeout time.Duration) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	fl := flock.New(path)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, fmt.Errorf("lock %s: still held by another process after %s", path, timeout)
	}
	return &Lock{fl: fl}, nil
}

// AppendSync appends data to path with one write and an fsync, creating the
// file if needed. Callers hold the lock that serialises appenders.
func AppendSync(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("append %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return f.Close()
}
