package localstore

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"syscall"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/jsonl"
)

// The run log (runs/log.jsonl) is where saves go: one record per save of
// one run, a process's records appended together with one write call, so
// creating a run costs an append like any other step instead of creating
// files and syncing each. Flush syncs the log once for every save before
// it. When the log passes CompactAt, a flush compacts it: every run in it
// is written to a new pack (the small ones, pack.go) or to its own files
// (the layout of earlier versions, which are read as they are), the file
// system is synced once, and the log starts again empty.
//
//	{"log":"laserbrain runs","gen":"<random>"}                     first line
//	{"run":"<id>","base":N,"n":K,"steps":B,"state":S,"crc":C}      one save: a header,
//	{"n":N+1,…}                                                    the new steps as the
//	…                                                              history file has them
//	{"id":"<id>",…}                                                (B bytes), the state (S)
//
// base is how many steps the run had before the save and n how many after;
// crc is the CRC-32C of the B+S bytes after the header. The steps are kept
// as the lines its history file holds, so a compaction copies bytes and
// parses nothing. A record applies only on top of exactly base steps, so a
// record that a crash cut off from its predecessor, or one a compaction
// already wrote out, is passed over: a run reads as the longest chain of
// its saves. Every record starts with a line break, and no step or state
// line starts with {"run":", so a write a crash tore is recognised (its
// CRC fails, or the next header turns up inside it) and the next record is
// read whole.
//
// Appenders and readers hold the log's lock shared, the compactor
// exclusively: nobody reads a run half compacted.
const logHeaderPrefix = `{"log":"laserbrain runs","gen":"`

// CompactAt is the run log's size past which a flush compacts it.
var CompactAt int64 = 4 << 20

// span is one record's place in the log, and its header.
type span struct {
	body         int64 // offset of the bytes after the header
	base, n      int
	steps, state int64
}

type runLog struct {
	dir  string // runs/
	path string
	lock *logLock

	mu      sync.Mutex // one log operation at a time in this process
	f       *os.File   // the log, O_APPEND; reopened after a compaction elsewhere
	ino     uint64
	gen     string
	indexed int64 // bytes of the log indexed into spans
	spans   map[string][]span
	dirty   bool // appended since the last sync
	copyBuf []byte
	pending []byte // saves not yet appended (addPending)
	// seen is the log's size as first found under the lock held now, so
	// that the lookups made under one hold stat it once; -1 when the lock
	// is not held or this process has appended since. Other processes
	// append meanwhile only saves of runs they hold, which no lookup here
	// is waiting for: what a run's last holder saved was appended before
	// it let the run go, so before this hold began.
	seen int64
	// generation counts the logs this process has indexed: it moves on
	// whenever the index is dropped (the log was replaced or cut short).
	generation int
}

func openRunLog(dir string) (*runLog, error) {
	l := &runLog{dir: dir, path: filepath.Join(dir, "log.jsonl"), lock: newLogLock(filepath.Join(dir, "log.lock")), seen: -1}
	if _, err := os.Stat(l.path); errors.Is(err, fs.ErrNotExist) {
		if err := l.withLock(true, func() error {
			if _, err := os.Stat(l.path); err == nil {
				return nil
			}
			return l.replaceWithEmpty()
		}); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// withLock runs f holding the log's lock (exclusive or shared) and this
// process's mutex.
func (l *runLog) withLock(exclusive bool, f func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return holdLock(l.lock, exclusive, func() error {
		defer func() { l.seen = -1 }()
		if err := l.reopen(); err != nil {
			return err
		}
		if err := l.writePending(); err != nil {
			return err
		}
		return f()
	})
}

// fileLock is a lock file, taken shared (to read) or exclusive (to write).
type fileLock interface {
	Lock() error
	RLock() error
	Unlock() error
	Path() string
}

// holdLock runs f holding l, exclusive or shared; a lock that cannot be
// taken is an error naming its file.
func holdLock(l fileLock, exclusive bool, f func() error) error {
	var err error
	if exclusive {
		err = l.Lock()
	} else {
		err = l.RLock()
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", l.Path(), err)
	}
	defer l.Unlock()
	return f()
}

// pendingMax is how many bytes of saves a process gathers before it
// appends them without waiting for a flush.
const pendingMax = 1 << 20

// addPending gathers one save, to be appended with the others at the next
// flush, read of the log, release of a run, or past pendingMax.
func (l *runLog) addPending(id string, base, n int, steps, state []byte) error {
	l.mu.Lock()
	l.pending = encodeRecord(l.pending, id, base, n, steps, state)
	full := len(l.pending) >= pendingMax
	l.mu.Unlock()
	if full {
		return l.withLock(false, func() error { return nil })
	}
	return nil
}

// hasPending reports whether saves are waiting to be appended.
func (l *runLog) hasPending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending) > 0
}

// writePending appends the gathered saves with one write. The caller holds
// the lock. Saves a failed write may have left behind are appended again
// by the next try: a record written twice chains once.
func (l *runLog) writePending() error {
	if len(l.pending) == 0 {
		return nil
	}
	if err := l.appendRecord(l.pending); err != nil {
		return err
	}
	if cap(l.pending) > 4*pendingMax {
		l.pending = nil
	} else {
		l.pending = l.pending[:0]
	}
	return nil
}

// reopen makes l.f the file now at l.path (a compaction replaces it) and
// drops the index when the log is another one than the one indexed.
func (l *runLog) reopen() error {
	// The file this process has open is the log while it is linked: a
	// compaction renames a new log over it, which unlinks it (and an inode
	// held open cannot come back under another file).
	l.seen = -1
	if l.f != nil {
		var st syscall.Stat_t
		if syscall.Fstat(int(l.f.Fd()), &st) == nil && st.Nlink > 0 {
			l.seen = st.Size
			return nil
		}
	}
	fi, err := os.Stat(l.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && l.f == nil {
			return nil // made by the next append
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if fi != nil && l.f != nil && inode(fi) == l.ino {
		return l.checkGen()
	}
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	l.resetIndex()
	if fi == nil {
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	l.f, l.ino = f, inode(fi)
	return l.checkGen()
}

// checkGen reads the log's header: another generation means the file was
// replaced under an inode number that happened to come back.
func (l *runLog) checkGen() error {
	var buf [128]byte
	n, err := l.f.ReadAt(buf[:], 0)
	if err != nil && err != io.EOF {
		return err
	}
	gen := ""
	if line, _, ok := bytes.Cut(buf[:n], []byte("\n")); ok && bytes.HasPrefix(line, []byte(logHeaderPrefix)) {
		gen = string(bytes.TrimSuffix(line[len(logHeaderPrefix):], []byte(`"}`)))
	}
	if gen != l.gen {
		l.resetIndex()
		l.gen = gen
	}
	return nil
}

func (l *runLog) resetIndex() {
	l.indexed, l.spans, l.gen = 0, map[string][]span{}, ""
	l.generation++
}

// replaceWithEmpty puts a new, empty log (a header with a fresh
// generation) in place atomically. The caller holds the lock exclusively.
func (l *runLog) replaceWithEmpty() error {
	var g [8]byte
	_, _ = rand.Read(g[:])
	header := logHeaderPrefix + hex.EncodeToString(g[:]) + "\"}\n"
	if err := fsx.WriteFile(l.path, []byte(header), 0o644); err != nil {
		return err
	}
	if err := syncDir(l.dir); err != nil {
		return err
	}
	return l.reopen()
}

// index reads the log from where it was last read, recording where each
// run's records are. A record still being written is read next time. It
// reads through a bounded window, never the log whole: a record's body is
// checked (its CRC) and skipped without being held.
func (l *runLog) index() error {
	if l.f == nil {
		return nil
	}
	size := l.seen
	if size < 0 {
		var st syscall.Stat_t
		if err := syscall.Fstat(int(l.f.Fd()), &st); err != nil {
			return &fs.PathError{Op: "fstat", Path: l.path, Err: err}
		}
		size, l.seen = st.Size, st.Size
	}
	if size < l.indexed { // cut short by hand: start again
		l.resetIndex()
		if err := l.checkGen(); err != nil {
			return err
		}
	}
	if size == l.indexed {
		return nil
	}
	c := &cursor{f: l.f, end: size}
	pos := l.indexed
	for pos < size {
		head, next, ok, err := c.line(pos)
		if err != nil {
			return err
		}
		if !ok {
			break // the last line, still being written
		}
		if bytes.HasPrefix(head, headerPrefix) && next-pos == int64(len(head))+1 {
			var h recordHeader
			if decodeHeader(head, &h) && h.Steps >= 0 && h.State > 0 {
				start, end := next, next+h.Steps+h.State
				if end > size || end < start {
					torn, err := c.contains(start, size, fence)
					if err != nil {
						return err
					}
					if torn {
						pos = next // torn: a later record begins inside it
						continue
					}
					break // still being written
				}
				sum, err := c.crc(start, end)
				if err != nil {
					return err
				}
				if sum == h.CRC {
					l.spans[h.Run] = append(l.spans[h.Run], span{body: start, base: h.Base, n: h.N, steps: h.Steps, state: h.State})
					pos = end
					continue
				}
			}
		}
		pos = next
	}
	l.indexed = pos
	return nil
}

// cursor reads a file through one bounded window, at any offset below end.
type cursor struct {
	f       *os.File
	end     int64
	buf     []byte
	bufOff  int64
	scratch []byte
}

const cursorWindow = 64 << 10

// window returns the buffered bytes from off on (at least one, unless off
// is at the end), reading when off is outside the window.
func (c *cursor) window(off int64) ([]byte, error) {
	if off >= c.bufOff && off < c.bufOff+int64(len(c.buf)) {
		return c.buf[off-c.bufOff:], nil
	}
	if off >= c.end {
		return nil, nil
	}
	if c.buf == nil {
		c.buf = make([]byte, cursorWindow)
	}
	n := min(int64(cursorWindow), c.end-off)
	c.buf = c.buf[:cursorWindow]
	m, err := c.f.ReadAt(c.buf[:n], off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	c.buf, c.bufOff = c.buf[:m], off
	return c.buf, nil
}

// line finds the line starting at off: head is its first bytes (up to a
// window's worth, enough for any header), next the offset after its line
// feed; ok is false when the line has none before end.
func (c *cursor) line(off int64) (head []byte, next int64, ok bool, err error) {
	at := off
	for at < c.end {
		w, err := c.window(at)
		if err != nil {
			return nil, 0, false, err
		}
		if i := bytes.IndexByte(w, '\n'); i >= 0 {
			next = at + int64(i) + 1
			break
		}
		at += int64(len(w))
	}
	if next == 0 {
		return nil, 0, false, nil
	}
	w, err := c.window(off)
	if err != nil {
		return nil, 0, false, err
	}
	n := min(int64(len(w)), next-off-1)
	c.scratch = append(c.scratch[:0], w[:n]...)
	return c.scratch, next, true, nil
}

// crc is the CRC-32C of the bytes from start to end.
func (c *cursor) crc(start, end int64) (uint32, error) {
	var sum uint32
	for at := start; at < end; {
		w, err := c.window(at)
		if err != nil {
			return 0, err
		}
		if len(w) == 0 {
			return 0, io.ErrUnexpectedEOF
		}
		w = w[:min(int64(len(w)), end-at)]
		sum = crc32.Update(sum, castagnoli(), w)
		at += int64(len(w))
	}
	return sum, nil
}

// contains reports whether needle occurs between start and end.
func (c *cursor) contains(start, end int64, needle []byte) (bool, error) {
	var carry []byte
	for at := start; at < end; {
		w, err := c.window(at)
		if err != nil {
			return false, err
		}
		if len(w) == 0 {
			return false, nil
		}
		w = w[:min(int64(len(w)), end-at)]
		if bytes.Contains(append(carry, w[:min(len(w), len(needle))]...), needle) || bytes.Contains(w, needle) {
			return true, nil
		}
		carry = append(carry[:0], w[max(0, len(w)-len(needle)+1):]...)
		at += int64(len(w))
	}
	return false, nil
}

var (
	headerPrefix = []byte(`{"run":"`)
	fence        = []byte("\n" + `{"run":"`)
	// castagnoli is made on first use: the pre-tool-use hook links this
	// package and must not pay for the table at start-up.
	castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })
)

// recordHeader is a save's first line.
type recordHeader struct {
	Run   string `json:"run"`
	Base  int    `json:"base"`
	N     int    `json:"n"`
	Steps int64  `json:"steps"`
	State int64  `json:"state"`
	CRC   uint32 `json:"crc"`
}

// decodeHeader reads a record's header line. The form encodeRecord writes
// (keys in its order, an id with nothing to escape, plain decimal numbers)
// is read without encoding/json, which a compaction and every index would
// otherwise pay once per record; anything else is left to encoding/json,
// so a header reads the same either way.
func decodeHeader(head []byte, h *recordHeader) bool {
	if readHeader(head, h) {
		return true
	}
	*h = recordHeader{}
	return json.Unmarshal(head, h) == nil
}

// readHeader reads the form encodeRecord writes, and only it.
func readHeader(head []byte, h *recordHeader) bool {
	rest, ok := bytes.CutPrefix(head, headerPrefix)
	if !ok {
		return false
	}
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return false
	}
	id := rest[:q]
	for _, c := range id {
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return false // escapes, control bytes or UTF-8: encoding/json's to judge
		}
	}
	rest = rest[q:]
	var v [5]uint64
	for i, key := range headerKeys {
		if rest, ok = bytes.CutPrefix(rest, key); !ok {
			return false
		}
		if v[i], rest, ok = readUint(rest); !ok {
			return false
		}
	}
	if string(rest) != "}" || v[0] > math.MaxInt32 || v[1] > math.MaxInt32 || v[4] > math.MaxUint32 {
		return false
	}
	*h = recordHeader{Run: string(id), Base: int(v[0]), N: int(v[1]), Steps: int64(v[2]), State: int64(v[3]), CRC: uint32(v[4])}
	return true
}

var headerKeys = [5][]byte{[]byte(`","base":`), []byte(`,"n":`), []byte(`,"steps":`), []byte(`,"state":`), []byte(`,"crc":`)}

// readUint reads a JSON number that is a whole number of at most 15
// digits, without a sign or leading zero.
func readUint(b []byte) (uint64, []byte, bool) {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == 0 || n > 15 || n > 1 && b[0] == '0' {
		return 0, b, false
	}
	if n < len(b) && (b[n] == '.' || b[n] == 'e' || b[n] == 'E') {
		return 0, b, false
	}
	var v uint64
	for _, c := range b[:n] {
		v = v*10 + uint64(c-'0')
	}
	return v, b[n:], true
}

// chain follows run id's saves in the log on top of base steps (those on
// file): a save applies when it starts where the run stands. It returns the
// saves that apply, in order, and the step count after them (none: the
// run's saves do not chain, and count is base). Nothing is read but the
// index: the bodies stay on disk until state or steps reads them.
func (l *runLog) chain(id string, base int) (applied []span, count int, err error) {
	if err := l.index(); err != nil {
		return nil, 0, err
	}
	count = base
	for _, sp := range l.spans[id] {
		if sp.base != count {
			continue // not the next save in the chain
		}
		applied = append(applied, sp)
		count = sp.n
	}
	return applied, count, nil
}

// state reads the state a save wrote.
func (l *runLog) state(sp span) ([]byte, error) {
	state := make([]byte, sp.state)
	if _, err := l.f.ReadAt(state, sp.body+sp.steps); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(state, []byte("\n")), nil
}

// body reads a save's steps and state together into buf.
func (l *runLog) body(sp span, buf []byte) ([]byte, error) {
	buf = slices.Grow(buf[:0], int(sp.steps+sp.state))[:sp.steps+sp.state]
	_, err := l.f.ReadAt(buf, sp.body)
	return buf, err
}

// eachStep calls fn with every step line the saves wrote, in order,
// reading through a bounded window.
func (l *runLog) eachStep(spans []span, fn func(line []byte, n int) error) error {
	n := 0
	for _, sp := range spans {
		if sp.steps == 0 {
			continue
		}
		_, err := jsonl.ScanFile(l.f, jsonl.Pos{Off: sp.body, Line: n + 1}, sp.body+sp.steps, func(line []byte, k int) error {
			n = k
			return fn(line, k)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// copySteps appends the step lines the saves wrote to w through one
// window-sized buffer, and returns how many bytes it copied.
func (l *runLog) copySteps(spans []span, w io.Writer) (int64, error) {
	if l.copyBuf == nil {
		l.copyBuf = make([]byte, cursorWindow)
	}
	buf := l.copyBuf
	var total int64
	for _, sp := range spans {
		for at, end := sp.body, sp.body+sp.steps; at < end; {
			n := min(int64(len(buf)), end-at)
			if _, err := l.f.ReadAt(buf[:n], at); err != nil {
				return total, err
			}
			if _, err := w.Write(buf[:n]); err != nil {
				return total, err
			}
			at += n
			total += n
		}
	}
	return total, nil
}

// appendRecord writes one save. The caller holds the lock shared.
func (l *runLog) appendRecord(rec []byte) error {
	if l.f == nil {
		if err := l.replaceWithEmptyShared(); err != nil {
			return err
		}
	}
	l.seen = -1
	n, err := l.f.Write(rec)
	if err == nil && n < len(rec) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", l.path, err)
	}
	l.dirty = true
	return nil
}

// replaceWithEmptyShared recreates a log someone deleted, while holding
// the lock shared: O_EXCL lets one process make it.
func (l *runLog) replaceWithEmptyShared() error {
	var g [8]byte
	_, _ = rand.Read(g[:])
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, err = f.WriteString(logHeaderPrefix + hex.EncodeToString(g[:]) + "\"}\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return err
	}
	return l.reopen()
}

// sync makes every save so far durable.
func (l *runLog) sync() error {
	if l.hasPending() {
		if err := l.withLock(false, func() error { return nil }); err != nil {
			return err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.dirty || l.f == nil {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", l.path, err)
	}
	l.dirty = false
	return nil
}

// size is the log's length now.
func (l *runLog) size() int64 {
	fi, err := os.Stat(l.path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (l *runLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lock.close()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// ids lists the runs with records in the log.
func (l *runLog) ids() ([]string, error) {
	if err := l.index(); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(l.spans))
	for id := range l.spans {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

// encodeRecord renders one save as it goes into the log, with the leading
// line break that fences it from a torn predecessor. steps holds the new
// step lines, each ending in a line break.
func encodeRecord(buf []byte, id string, base, n int, steps, state []byte) []byte {
	tab := castagnoli()
	c := crc32.Update(crc32.Checksum(steps, tab), tab, state)
	c = crc32.Update(c, tab, []byte("\n"))
	buf = append(buf, "\n{\"run\":\""...)
	buf = append(buf, id...)
	buf = append(buf, "\",\"base\":"...)
	buf = strconv.AppendInt(buf, int64(base), 10)
	buf = append(buf, ",\"n\":"...)
	buf = strconv.AppendInt(buf, int64(n), 10)
	buf = append(buf, ",\"steps\":"...)
	buf = strconv.AppendInt(buf, int64(len(steps)), 10)
	buf = append(buf, ",\"state\":"...)
	buf = strconv.AppendInt(buf, int64(len(state)+1), 10)
	buf = append(buf, ",\"crc\":"...)
	buf = strconv.AppendUint(buf, uint64(c), 10)
	buf = append(buf, "}\n"...)
	buf = append(buf, steps...)
	buf = append(buf, state...)
	return append(buf, '\n')
}

func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// syncDir makes renames and creations in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
