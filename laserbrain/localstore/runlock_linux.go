package localstore

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// runLock holds one run against every other holder. On Linux it is a
// one-byte open-file-description lock (F_OFD_SETLK) in one of lockShards
// files under runs/locks.d, at an offset hashed from the run id: no file
// is created per run, and the kernel, which keeps one lock list per file
// and walks it at every lock, walks the runs held on one shard — a 256th
// of them — not all of them (one shared file made each lock cost as much
// as every run held before it: 10,000 held runs spent most of a stream's
// time in that walk).
//
// The locks belong to this process's lock table (one open file per shard,
// shared by every run it holds there), which also keeps the runs held, so
// that two handles in one process exclude each other as two processes do.
// A shard's file stays open while this process holds a run on it (at most
// lockShards open files, however many runs are held). Closing the process
// releases them all.
type runLock struct {
	t   *lockTable
	key lockKey
}

// lockShards is how many files the run locks are spread over.
const lockShards = 256

type lockKey struct {
	shard int
	off   int64
}

// lockTable is one runs directory's locks in this process.
type lockTable struct {
	dir   string
	mu    sync.Mutex
	files [lockShards]*os.File
	count [lockShards]int // runs held on each shard
	held  map[lockKey]bool
}

var lockTables sync.Map // runs directory → *lockTable

func tableFor(dir string) *lockTable {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if t, ok := lockTables.Load(dir); ok { // a table is 4 KB: made once
		return t.(*lockTable)
	}
	t, _ := lockTables.LoadOrStore(dir, &lockTable{dir: dir, held: map[lockKey]bool{}})
	return t.(*lockTable)
}

func keyOf(id string) lockKey {
	h := fnv.New64a()
	io.WriteString(h, id)
	sum := h.Sum64()
	return lockKey{shard: int(sum % lockShards), off: int64(sum >> 2)}
}

// shardFile opens shard's file once; the caller holds t.mu.
func (t *lockTable) shardFile(shard int) (*os.File, error) {
	if f := t.files[shard]; f != nil {
		return f, nil
	}
	dir := filepath.Join(t.dir, "locks.d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%02x", shard)), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	t.files[shard] = f
	return f, nil
}

// try takes k for this process if no handle here holds it and no other
// process does; busy reports that someone does.
func (t *lockTable) try(k lockKey) (busy bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held[k] {
		return true, nil
	}
	f, err := t.shardFile(k.shard)
	if err != nil {
		return false, err
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: k.off, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			t.release(k.shard)
			return true, nil
		}
		err = fmt.Errorf("lock %s: %w", f.Name(), err)
		t.release(k.shard)
		return false, err
	}
	t.held[k] = true
	t.count[k.shard]++
	return false, nil
}

func lockRun(dir, id string, timeout time.Duration) (*runLock, error) {
	t, k := tableFor(dir), keyOf(id)
	deadline := time.Now().Add(timeout)
	for {
		busy, err := t.try(k)
		if err != nil {
			return nil, err
		}
		if !busy {
			return &runLock{t: t, key: k}, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("still held by another process after %s", timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Unlock releases the run.
func (l *runLock) Unlock() error {
	t := l.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.held[l.key] {
		return nil
	}
	delete(t.held, l.key)
	t.count[l.key.shard]--
	f := t.files[l.key.shard]
	lk := unix.Flock_t{Type: unix.F_UNLCK, Whence: io.SeekStart, Start: l.key.off, Len: 1}
	err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
	t.release(l.key.shard)
	if err != nil {
		return fmt.Errorf("unlock %s: %w", f.Name(), err)
	}
	return nil
}

// release closes shard's file once this process holds no run on it (its
// locks go with it); the caller holds t.mu.
func (t *lockTable) release(shard int) {
	if t.count[shard] == 0 && t.files[shard] != nil {
		t.files[shard].Close()
		t.files[shard] = nil
	}
}
