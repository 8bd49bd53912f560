package fsx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	return replace(path, data, perm)
}

// replace writes data to path as one atomic replace, the temporary file
// beside it: renameio would otherwise probe the system's temporary
// directory on every write (two files made and a rename tried) to see
// whether it could stage the file there.
func replace(path string, data []byte, perm os.FileMode) error {
	if err := renameio.WriteFile(path, data, perm, renameio.WithTempDir(filepath.Dir(path))); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReplaceUnsynced replaces path with data as WriteFile does — readers see
// the old content or the new, never a mix — without waiting for the disk:
// for a record whose last write a crash may lose. After a crash the file is
// the old one or the new one; on a file system that does not order a rename
// after the data it replaces (ext4 does, for a rename over a file) it may
// also be empty, which a caller must read as "nothing kept".
func ReplaceUnsynced(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Block is the size OverwriteUnsynced gives a record it writes in place:
// one block of the file systems a home is kept on (ext4, xfs and btrfs by
// default, tmpfs's pages), which the disk writes whole or not at all.
const Block = 4096

// OverwriteUnsynced is ReplaceUnsynced for a small record rewritten often
// (a new inode through a rename costs the file system some fifty times the
// write): a record of at most Block bytes is padded with spaces to Block
// (JSON readers skip trailing white space) and, once the file is one
// block, written over it in place. The file's size never changes then, so
// after a crash it is the old block or the new; moving to one block and
// back (a larger record, a file another program wrote) goes through
// ReplaceUnsynced.
//
// Readers that take no lock may read a write half done: a caller's reader
// must tell such a read (it does not parse) and read again under the
// writers' lock.
func OverwriteUnsynced(path string, data []byte, perm os.FileMode) error {
	if len(data) > Block {
		return ReplaceUnsynced(path, data, perm)
	}
	padded := bytes.Repeat([]byte{' '}, Block)
	copy(padded, data)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return ReplaceUnsynced(path, padded, perm)
	}
	info, err := f.Stat()
	if err != nil || info.Size() != Block || !info.Mode().IsRegular() {
		f.Close()
		return ReplaceUnsynced(path, padded, perm)
	}
	_, err = f.WriteAt(padded, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
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
// file if needed. A write or fsync that fails (disk full, EIO) is undone:
// the file is cut back to its previous length, so a failed append leaves no
// partial tail. Callers hold the lock that serialises appenders.
func AppendSync(path string, data []byte, perm os.FileMode) error {
	_, err := AppendUndoable(path, data, perm)
	return err
}

// Undo cuts a file back to the length it had before an append.
type Undo func() error

// AppendUndoable is AppendSync that also returns how to take the append
// back, for a caller whose next step (a commit record elsewhere) can still
// fail. The undo truncates in place and fsyncs; it needs no free space.
func AppendUndoable(path string, data []byte, perm os.FileMode) (Undo, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := info.Size()
	undo := func() error { return TruncateSync(path, size) }
	fail := func(op string, err error) (Undo, error) {
		err = fmt.Errorf("%s %s: %w", op, path, err)
		if terr := f.Truncate(size); terr != nil {
			err = fmt.Errorf("%w; and cutting it back to %d bytes failed: %v", err, size, terr)
		} else if serr := f.Sync(); serr != nil {
			err = fmt.Errorf("%w; and syncing the cut failed: %v", err, serr)
		}
		f.Close()
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		return fail("append", err)
	}
	if err := f.Sync(); err != nil {
		return fail("fsync", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", path, err)
	}
	return undo, nil
}

// TruncateSync cuts path to size in place — no copy, so it works on a full
// disk — and makes the cut durable.
func TruncateSync(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return fmt.Errorf("truncate %s to %d bytes: %w", path, size, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return f.Close()
}

// ErrNoParent reports that a file's directory does not exist (or is not a
// directory). WriteFileInDir returns it instead of creating the directory,
// for user-named paths where a typo should be refused, not materialised.
type ErrNoParent struct {
	Path string // the file that was to be written
	Dir  string // its parent, which is missing
	Err  error  // why: not exist, or not a directory
}

func (e *ErrNoParent) Error() string {
	if errors.Is(e.Err, fs.ErrNotExist) {
		return fmt.Sprintf("directory %s does not exist (not creating it for %s)", e.Dir, e.Path)
	}
	return fmt.Sprintf("cannot write %s: %v", e.Path, e.Err)
}

func (e *ErrNoParent) Unwrap() error { return e.Err }

// CheckParentDir returns an *ErrNoParent when path's parent directory does
// not exist or is not a directory, and nil when path can be created there.
func CheckParentDir(path string) error {
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	if err == nil && !info.IsDir() {
		err = fmt.Errorf("%s is not a directory", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("directory %s: %w", dir, err)
	}
	if err != nil {
		return &ErrNoParent{Path: path, Dir: dir, Err: err}
	}
	return nil
}

// ErrNotRegular is a path a user named to be replaced that holds something
// other than a regular file: a symbolic link, a device node, a FIFO, a
// socket or a directory. WriteFileInDir replaces none of them: a link
// would be swapped for a file (or, followed, write where it points), and a
// device or FIFO is not a report's place.
type ErrNotRegular struct {
	Path string
	What string
}

func (e *ErrNotRegular) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: not replaced", e.Path, e.What)
}

// notRegular names what a non-regular file mode is.
func notRegular(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	default:
		return "not a regular file (" + m.Type().String() + ")"
	}
}

// WriteFileInDir is WriteFile for a path a user named: the parent directory
// must already exist; it is never created; what the path holds now, if
// anything, must be a regular file (ErrNotRegular).
func WriteFileInDir(path string, data []byte, perm os.FileMode) error {
	if err := CheckParentDir(path); err != nil {
		return err
	}
	if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() {
		return &ErrNotRegular{Path: path, What: notRegular(info.Mode())}
	}
	return replace(path, data, perm)
}

// ErrTooLarge is an input that holds more than a command reads: Name is the
// file (or "standard input"), Max the cap in bytes.
type ErrTooLarge struct {
	Name string
	Max  int64
}

func (e *ErrTooLarge) Error() string {
	return fmt.Sprintf("%s holds more than %s, the most this command reads: nothing was done", e.Name, sizeText(e.Max))
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadCapped reads r whole, as long as it holds at most max bytes; one more
// is an ErrTooLarge naming name. A device or FIFO that never ends (a
// /dev/zero, a writer that keeps going) ends at the cap.
func ReadCapped(r io.Reader, name string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, &ErrTooLarge{Name: name, Max: max}
	}
	return data, nil
}

// ReadFileCapped is ReadCapped of the file at path. The open's error is
// returned as it is (fs.ErrNotExist and the like stay testable).
func ReadFileCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadCapped(f, path, max)
}

// WithoutPath is err without the path an *fs.PathError names, for a
// message that says which file it was on its own.
func WithoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
