// Package slotfile keeps a small record that is rewritten often — a run's
// counts, after every tool call — in a file it can overwrite in place and
// still never lose to a crash.
//
// Replacing a file whole (a new file, synced, renamed over the old) costs
// the file system a new inode and a journal commit on every write. A file
// of two slots of one size does not: each write goes to the slot that does
// not hold the newest record, in place, and is synced with fdatasync. The
// file's size and blocks do not change, so the sync writes the slot and no
// metadata. Each slot is sealed (a sequence number, the record's length
// and a SHA-256 of both and the record), so a write a crash cut off — or
// a read that met a write half done — shows as a slot that is not whole,
// and the other slot still holds the record before it. Whoever reads takes
// the whole slot with the higher sequence number.
//
// A record that outgrows its slot moves to a new file with larger slots,
// written whole and renamed into place (Write does it), so a slot never
// changes size while the file lives.
//
// Writers must hold one lock (the caller's): two writers at once could
// each write the same slot. Readers take none; a reader that finds no
// slot whole met two writes during its read, and reads again under the
// writers' lock (ErrTorn says so).
package slotfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"

	"github.com/laserkit/laserkit/internal/fsx"
)

// MinSlot is the smallest slot: one page, the unit a disk writes.
const MinSlot = 4096

// headerLen is a slot's header: magic (8), sequence number (8), the slot's
// size (4), the record's length (4), SHA-256 of those 24 bytes and the
// record (32), then zeros to 64.
const headerLen = 64

var magic = [8]byte{'l', 'k', 's', 'l', 'o', 't', '1', '\n'}

// ErrTorn is a file in which neither slot is whole: read while two writes
// went over it, or damaged. A reader reads it again under the writers'
// lock; if it is still torn there, the file is damaged.
var ErrTorn = errors.New("neither of its two slots holds a whole record")

// Record is the newest whole record of a file, and where it is.
type Record struct {
	Data []byte
	Seq  uint64
	// slot is 0 or 1; size the slot's size.
	slot, size int
}

// Read reads the newest whole record of the file at path (an
// fs.ErrNotExist error when there is no file).
func Read(path string) ([]byte, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, ok := Parse(buf)
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, ErrTorn)
	}
	return r.Data, nil
}

// Parse finds the newest whole record in a file's bytes. The second slot
// is where the first says it is, else at half the file; when the first is
// torn and the file is not two slots long (cut short), each page-aligned
// power of two is tried.
func Parse(buf []byte) (Record, bool) {
	first, firstOK := slotAt(buf, 0)
	var second Record
	secondOK := false
	switch {
	case firstOK:
		second, secondOK = slotAt(buf, first.size)
	case len(buf)%2 == 0 && len(buf) >= 2*MinSlot:
		second, secondOK = slotAt(buf, len(buf)/2)
	}
	if !firstOK && !secondOK {
		for off := MinSlot; off+headerLen <= len(buf) && off > 0; off *= 2 {
			if second, secondOK = slotAt(buf, off); secondOK {
				break
			}
		}
	}
	switch {
	case firstOK && secondOK:
		if second.Seq > first.Seq {
			return second, true
		}
		return first, true
	case firstOK:
		return first, true
	case secondOK:
		return second, true
	}
	return Record{}, false
}

// slotAt reads the slot at off in buf: whole when its header is ours, it
// says it is a slot of its place, and the seal holds.
func slotAt(buf []byte, off int) (Record, bool) {
	if off < 0 || off+headerLen > len(buf) || !bytes.Equal(buf[off:off+8], magic[:]) {
		return Record{}, false
	}
	h := buf[off : off+headerLen]
	seq := binary.LittleEndian.Uint64(h[8:])
	size := int(binary.LittleEndian.Uint32(h[16:]))
	n := int(binary.LittleEndian.Uint32(h[20:]))
	if size < MinSlot || (off != 0 && off != size) || headerLen+n > size || off+headerLen+n > len(buf) || seq == 0 {
		return Record{}, false
	}
	data := buf[off+headerLen : off+headerLen+n]
	if seal(h[:24], data) != [32]byte(h[24:56]) {
		return Record{}, false
	}
	slot := 0
	if off != 0 {
		slot = 1
	}
	return Record{Data: data, Seq: seq, slot: slot, size: size}, true
}

func seal(head, data []byte) [32]byte {
	d := sha256.New()
	d.Write(head)
	d.Write(data)
	return [32]byte(d.Sum(nil))
}

// encode is data sealed as record seq in a slot of size bytes.
func encode(data []byte, seq uint64, size int) []byte {
	out := make([]byte, headerLen+len(data))
	copy(out, magic[:])
	binary.LittleEndian.PutUint64(out[8:], seq)
	binary.LittleEndian.PutUint32(out[16:], uint32(size))
	binary.LittleEndian.PutUint32(out[20:], uint32(len(data)))
	s := seal(out[:24], data)
	copy(out[24:], s[:])
	copy(out[headerLen:], data)
	return out
}

// slotFor is the slot size a record of n bytes gets in a new file: room
// for it to double before it must move again.
func slotFor(n int) int {
	need := 2 * (headerLen + n)
	if need <= MinSlot {
		return MinSlot
	}
	return 1 << bits.Len(uint(need-1))
}

// Create writes a new file at path holding data as its first record,
// whole or not at all, synced (it replaces any file there).
func Create(path string, data []byte) error {
	return create(path, data, 1)
}

func create(path string, data []byte, seq uint64) error {
	size := slotFor(len(data))
	buf := make([]byte, 2*size)
	copy(buf, encode(data, seq, size))
	return fsx.WriteFile(path, buf, 0o644)
}

// File is a slot file open for writing, by a caller that holds the
// writers' lock.
type File struct {
	f    *os.File
	path string
	cur  Record
	// fits: the file is two slots long, so a record that fits in a slot
	// is written in place.
	fits bool
}

// Open opens the file at path for writing and reads its newest record
// (an fs.ErrNotExist error when there is no file; ErrTorn when it has no
// whole slot: under the writers' lock, a damaged file).
func Open(path string) (*File, []byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, err
	}
	buf, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	r, ok := Parse(buf)
	if !ok {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, ErrTorn)
	}
	return &File{f: f, path: path, cur: r, fits: len(buf) == 2*r.size}, r.Data, nil
}

// Write makes data the file's newest record, durable when it returns: in
// place, in the slot that does not hold the newest record, when it fits;
// else in a new file with larger slots.
func (w *File) Write(data []byte) error {
	seq := w.cur.Seq + 1
	if !w.fits || headerLen+len(data) > w.cur.size {
		if err := create(w.path, data, seq); err != nil {
			return err
		}
		w.fits = false // the open file is the old one: a next write goes through create
		w.cur.Seq = seq
		return nil
	}
	slot := 1 - w.cur.slot
	if _, err := w.f.WriteAt(encode(data, seq, w.cur.size), int64(slot*w.cur.size)); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if err := datasync(w.f); err != nil {
		return fmt.Errorf("sync %s: %w", w.path, err)
	}
	w.cur.Seq, w.cur.slot = seq, slot
	return nil
}

// Close closes the file.
func (w *File) Close() error { return w.f.Close() }
