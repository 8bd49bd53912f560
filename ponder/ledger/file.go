package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

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

// Log is a ledger read whole. Records holds every record of whole batches,
// in order; when Damage is set, the damaged tail is not in Records.
type Log struct {
	Records []Record
	Size    int64 // bytes in the file
	Good    int64 // bytes of whole batches (== Size when undamaged)
	Damage  *Damage
}

// NextSeq is the seq the next appended record gets.
func (l *Log) NextSeq() int { return len(l.Records) + 1 }

// Read reads and checks a ledger: every line whole JSON, seq 1, 2, 3, … and
// every batch complete. A missing file is an empty ledger. The error is for
// I/O only; damage is reported in Log.Damage.
func Read(path string) (*Log, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Log{}, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(data), nil
}

// Parse checks ledger bytes (see Read).
func Parse(data []byte) *Log {
	l := &Log{Size: int64(len(data))}
	// Most records are small; one allocation for the slice.
	l.Records = make([]Record, 0, bytes.Count(data, []byte{'\n'}))
	var (
		off        int64
		line       int
		batchStart = -1 // index in Records of the open batch's first record
		batchOff   int64
		batchLine  int
	)
	torn := func(at int64, ln int, detail string) {
		l.Damage = &Damage{Torn: true, Line: ln, Offset: at, Bytes: l.Size - at, Detail: detail}
	}
	// corrupt records damage that is not an interrupted append; the sound
	// part ends before the line, or before the batch it interrupts.
	corrupt := func(at int64, ln int, detail string) *Log {
		l.Damage = &Damage{Line: ln, Offset: at, Detail: detail}
		l.Good = at
		if batchStart >= 0 {
			l.Records, l.Good = l.Records[:batchStart], batchOff
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
		var r Record
		err := json.Unmarshal(raw, &r)
		switch {
		case last && err == nil:
			// A whole record without its newline: the write stopped one
			// byte short. Still torn: the batch was never acknowledged.
			err = errors.New("the last line has no newline")
			fallthrough
		case last:
			start, ln := off, line
			if batchStart >= 0 {
				start, ln = batchOff, batchLine
				l.Records = l.Records[:batchStart]
			}
			torn(start, ln, "line "+strconv.Itoa(line)+" is incomplete: "+err.Error())
			l.Good = start
			return l
		case err != nil:
			return corrupt(off, line, "not valid JSON: "+err.Error())
		}
		want := len(l.Records) + 1
		if r.Seq != want {
			return corrupt(off, line, fmt.Sprintf("seq %d where %d was expected (a record lost or duplicated)", r.Seq, want))
		}
		if batchStart < 0 {
			if r.Batch != r.Seq || r.BatchSize < 1 {
				return corrupt(off, line, fmt.Sprintf("record %d should open a batch but says batch %d of size %d", r.Seq, r.Batch, r.BatchSize))
			}
			batchStart, batchOff, batchLine = len(l.Records), off, line
		} else if first := l.Records[batchStart]; r.Batch != first.Batch || r.BatchSize != first.BatchSize {
			return corrupt(off, line, fmt.Sprintf("record %d breaks batch %d (size %d) before it is complete", r.Seq, first.Batch, first.BatchSize))
		}
		l.Records = append(l.Records, r)
		off += int64(end) + 1
		if len(l.Records)-batchStart == r.BatchSize {
			batchStart = -1
		}
	}
	if batchStart >= 0 {
		first := l.Records[batchStart]
		have := len(l.Records) - batchStart
		l.Records = l.Records[:batchStart]
		torn(batchOff, batchLine, fmt.Sprintf("batch %d has %d of its %d records", first.Batch, have, first.BatchSize))
		l.Good = batchOff
		return l
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
// truncates the ledger to its last whole batch. It never drops a byte
// silently, and refuses corrupt (non-torn) damage. The caller holds the
// session lock.
func Repair(path, tornPath string) (*Repaired, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l := Parse(data)
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
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(l.Good); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return &Repaired{MovedTo: tornPath, RemovedBytes: int64(len(tail)), RemovedRecords: bytes.Count(tail, []byte{'\n'})}, nil
}
