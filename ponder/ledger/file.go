package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"time"
	"unsafe"

	"github.com/laserkit/laserkit/internal/fsx"
)

// Damage describes a ledger that is not a clean sequence of whole batches.
// Torn damage (a crash mid-append) is repairable: the tail from Offset on
// belongs to one unfinished batch. Corrupt damage is not: something other
// than an interrupted append changed the file.
type Damage struct {
	Torn   bool   // repairable by moving the tail aside
	Line   int    // first damaged line, 1-based
	Offset int64  // byte offset where the damaged tail (or line) starts
	Bytes  int64  // bytes from Offset to the end of the file (torn only)
	Detail string // what is wrong, one line
}

func (d *Damage) Error() string {
	if d.Torn {
		return fmt.Sprintf("ledger.jsonl has a torn tail from line %d (byte %d, %d bytes): %s; an append was interrupted — run `ponder repair` to move the unfinished batch aside", d.Line, d.Offset, d.Bytes, d.Detail)
	}
	return fmt.Sprintf("ledger.jsonl is corrupt at line %d (byte %d): %s; this is not an interrupted append and needs a human", d.Line, d.Offset, d.Detail)
}

// Log is what reading a ledger found: how many records its whole batches
// hold and, if it is damaged, where.
type Log struct {
	Count  int   // records in whole batches, before any damage
	Size   int64 // bytes in the file
	Good   int64 // bytes of whole batches (== Size when undamaged)
	Damage *Damage
}

// NextSeq is the seq the next appended record gets.
func (l *Log) NextSeq() int { return l.Count + 1 }

// Read reads and checks a ledger: every line whole JSON, seq 1, 2, 3, … and
// every batch complete, handing each record of a whole batch to visit (nil
// to only check). A missing file is an empty ledger. The error is for I/O
// only; damage is reported in Log.Damage.
func Read(path string, visit func(*Record)) (*Log, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Log{}, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(data, visit), nil
}

// ReadMapped is Read on a read-only memory map of the file, for one-shot
// processes (the ponder binary): the map is never released, because the
// records' strings point into it. The ledger is only ever appended to or
// replaced whole by rename (repair), never truncated in place, so a map
// stays valid while other processes work on the session. Where mapping is
// not available it falls back to Read.
func ReadMapped(path string, visit func(*Record)) (l *Log, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Log{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() == 0 {
		return &Log{}, nil
	}
	data, err := mapFile(f, int(info.Size()))
	if err != nil {
		return Read(path, visit)
	}
	// A file cut short by hand under the map would fault: report it as an
	// error instead of crashing.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, fmt.Errorf("%s changed under the reader (%v); try again", path, r)
		}
	}()
	return Parse(data, visit), nil
}

// Parse checks ledger bytes (see Read). It keeps data (string values point
// into it), which the caller must not change afterwards. visit sees the
// records of each batch once the batch is known to be whole, in order; it
// must not keep the *Record.
func Parse(data []byte, visit func(*Record)) *Log {
	l := &Log{Size: int64(len(data))}
	if len(data) == 0 {
		return l
	}
	// One view of the whole file as a string: values are substrings of it.
	dec := &decoder{src: unsafe.String(&data[0], len(data))}
	var (
		off       int64
		line      int
		batch     []Record // the open batch, held back until it is whole
		batchOff  int64
		batchLine int
	)
	torn := func(at int64, ln int, detail string) *Log {
		l.Damage = &Damage{Torn: true, Line: ln, Offset: at, Bytes: l.Size - at, Detail: detail}
		l.Good = at
		return l
	}
	// corrupt records damage that is not an interrupted append; the sound
	// part ends before the line, or before the batch it interrupts.
	corrupt := func(at int64, ln int, detail string) *Log {
		l.Damage = &Damage{Line: ln, Offset: at, Detail: detail}
		l.Good = at
		if len(batch) > 0 {
			l.Good = batchOff
		}
		return l
	}
	for off < l.Size {
		line++
		end := bytes.IndexByte(data[off:], '\n')
		last := end < 0
		var raw []byte
		if last {
			raw = data[off:]
		} else {
			raw = data[off : off+int64(end)]
		}
		batch = append(batch, Record{})
		r := &batch[len(batch)-1]
		err := dec.decode(raw, int(off), int(off)+len(raw), r)
		switch {
		case last && err == nil:
			// A whole record without its newline: the write stopped one
			// byte short. Still torn: the batch was never acknowledged.
			err = errors.New("the last line has no newline")
			fallthrough
		case last:
			start, ln := off, line
			if len(batch) > 1 {
				start, ln = batchOff, batchLine
			}
			return torn(start, ln, "line "+strconv.Itoa(line)+" is incomplete: "+err.Error())
		case err != nil:
			batch = batch[:len(batch)-1]
			return corrupt(off, line, "not valid JSON: "+err.Error())
		}
		want := l.Count + len(batch)
		if r.Seq != want {
			batch = batch[:len(batch)-1]
			return corrupt(off, line, fmt.Sprintf("seq %d where %d was expected (a record lost or duplicated)", r.Seq, want))
		}
		if len(batch) == 1 {
			if r.Batch != r.Seq || r.BatchSize < 1 {
				batch = batch[:0]
				return corrupt(off, line, fmt.Sprintf("record %d should open a batch but says batch %d of size %d", r.Seq, r.Batch, r.BatchSize))
			}
			batchOff, batchLine = off, line
		} else if first := batch[0]; r.Batch != first.Batch || r.BatchSize != first.BatchSize {
			batch = batch[:len(batch)-1]
			return corrupt(off, line, fmt.Sprintf("record %d breaks batch %d (size %d) before it is complete", r.Seq, first.Batch, first.BatchSize))
		}
		off += int64(end) + 1
		if len(batch) == r.BatchSize {
			if visit != nil {
				for i := range batch {
					visit(&batch[i])
				}
			}
			l.Count += len(batch)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		return torn(batchOff, batchLine, fmt.Sprintf("batch %d has %d of its %d records", batch[0].Batch, len(batch), batch[0].BatchSize))
	}
	l.Good = l.Size
	return l
}

// Encode renders records as JSON Lines, one record per line.
func Encode(recs []Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// Stamp numbers a batch for appending after log: seq, batch, batchSize, ts
// and pass.
func Stamp(recs []Record, next int, pass int, now time.Time) {
	ts := now.UTC().Format(time.RFC3339Nano)
	for i := range recs {
		recs[i].Seq = next + i
		recs[i].Batch = next
		recs[i].BatchSize = len(recs)
		recs[i].TS = ts
		recs[i].Pass = pass
	}
}

// Append writes a stamped batch to the ledger with one write and one fsync.
// The caller holds the session lock and has checked the ledger undamaged.
func Append(path string, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	data, err := Encode(recs)
	if err != nil {
		return err
	}
	return fsx.AppendSync(path, data, 0o644)
}

// Repaired is what Repair did.
type Repaired struct {
	MovedTo        string `json:"movedTo"`
	RemovedBytes   int64  `json:"removedBytes"`
	RemovedRecords int    `json:"removedRecords"` // whole lines of the unfinished batch
}

// Repair moves a torn tail aside — into tornPath, byte for byte — and
// replaces the ledger (atomically) with its whole batches. It never drops a byte
// silently, and refuses corrupt (non-torn) damage. The caller holds the
// session lock.
func Repair(path, tornPath string) (*Repaired, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l := Parse(data, nil)
	if l.Damage == nil {
		return nil, nil
	}
	if !l.Damage.Torn {
		return nil, l.Damage
	}
	tail := data[l.Good:]
	if err := fsx.WriteFile(tornPath, tail, 0o644); err != nil {
		return nil, err
	}
	// Replace, never truncate: a reader may have the old file mapped.
	if err := fsx.WriteFile(path, data[:l.Good], 0o644); err != nil {
		return nil, err
	}
	return &Repaired{MovedTo: tornPath, RemovedBytes: int64(len(tail)), RemovedRecords: bytes.Count(tail, []byte{'\n'})}, nil
}
