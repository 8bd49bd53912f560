package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/laserkit/laserkit/internal/fsx"
)

// Damage describes a ledger that is not a clean, chained sequence of whole
// batches. Torn damage (a crash mid-append, past the last acknowledged
// append) is repairable: the tail from Offset on belongs to one unfinished
// batch — or, Unacknowledged, to whole batches the session's anchor does not
// count (a crash between the ledger's write and the anchor's, or records
// added behind ponder's back: either way nothing vouches for them). Corrupt
// damage (a line that is not JSON, a batch broken inside) and forged damage
// (the hash chain, a seq or the session's anchor does not hold: a line
// edited, inserted, deleted or moved) are not.
type Damage struct {
	Torn bool // repairable by cutting the tail
	// Unacknowledged: the tail is whole, chained records past the anchor
	// (Torn is set too: repair cuts them, a reader waits for a writer).
	Unacknowledged bool
	Forged         bool   // the chain or the anchor does not hold
	Tamper         string // forged only: edited | inserted | deleted | reordered
	Line           int    // first damaged line, 1-based (for forged: the forged record's line)
	Seq            int    // forged only: the forged (or first missing) record's seq
	Offset         int64  // byte offset where the damaged tail (or line) starts
	Bytes          int64  // bytes from Offset to the end of the file (torn only)
	Detail         string // what is wrong, one line
}

func (d *Damage) Error() string {
	switch {
	case d.Unacknowledged:
		return fmt.Sprintf("ledger.jsonl holds %s past session.json's anchor (seq %d, from line %d): an append that was never acknowledged — a crash between the ledger's write and session.json's, or records added behind ponder's back — so they are not read; run `ponder repair` to cut them off (they are kept beside the ledger)", d.Detail, d.Seq, d.Line)
	case d.Torn:
		return fmt.Sprintf("ledger.jsonl has a torn tail from line %d (byte %d, %d bytes): %s; an append was interrupted — run `ponder repair` to cut the unfinished batch", d.Line, d.Offset, d.Bytes, d.Detail)
	case d.Forged:
		return fmt.Sprintf("ledger.jsonl was tampered with (%s) at line %d, seq %d: %s; the hash chain does not hold, so the ledger cannot be trusted — restore it from a copy", d.Tamper, d.Line, d.Seq, d.Detail)
	}
	return fmt.Sprintf("ledger.jsonl is corrupt at line %d (byte %d): %s; this is not an interrupted append and needs a human", d.Line, d.Offset, d.Detail)
}

// Log is what reading a ledger found: how many records its whole batches
// hold, the chain's head and, if it is damaged, where.
type Log struct {
	Count  int    // records in whole batches, before any damage
	Size   int64  // bytes in the file
	Good   int64  // bytes of whole batches (== Size when undamaged)
	Head   string // hash of the last whole record; the genesis when there is none
	Damage *Damage
	// Heads are the chain's heads after the record counts Chain.Heads asked
	// for, where the ledger holds that many (0: the genesis).
	Heads map[int]string
}

// NextSeq is the seq the next appended record gets.
func (l *Log) NextSeq() int { return l.Count + 1 }

// Anchor is the anchor for the ledger as read.
func (l *Log) Anchor() Anchor { return Anchor{Records: l.Count, Head: l.Head} }

// Read reads and checks a ledger: every line whole JSON, seq 1, 2, 3, …,
// every batch complete, the hash chain from chain.Genesis to the anchor and
// nothing past it, handing each record of a whole batch the anchor counts
// to visit (nil to only check). A missing file is an empty ledger. The error
// is for I/O only; damage is reported in Log.Damage.
func Read(path string, chain Chain, visit func(*Record)) (*Log, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Parse(nil, chain, visit), nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(data, chain, visit), nil
}

// ReadMapped is Read on a read-only memory map of the file, for one-shot
// processes (the ponder binary): the map is never released, because the
// records' strings point into it. The caller must hold the session lock for
// as long as it uses the records: a writer that fails cuts its append back
// in place and repair cuts a torn tail in place, and either would pull pages
// out from under a map. Where mapping is not available it falls back to Read.
func ReadMapped(path string, chain Chain, visit func(*Record)) (l *Log, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Parse(nil, chain, visit), nil
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
		return Parse(nil, chain, visit), nil
	}
	data, err := mapFile(f, int(info.Size()))
	if err != nil {
		return Read(path, chain, visit)
	}
	// A file cut short by hand under the map would fault: report it as an
	// error instead of crashing.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, fmt.Errorf("%s changed under the reader (%v); try again", path, r)
		}
	}()
	return Parse(data, chain, visit), nil
}

// Parse checks ledger bytes (see Read). It keeps data (string values point
// into it), which the caller must not change afterwards. visit sees the
// records of each batch once the batch is known to be whole, in order; it
// must not keep the *Record.
func Parse(data []byte, chain Chain, visit func(*Record)) *Log {
	l := &Log{Size: int64(len(data)), Head: chain.Genesis}
	if len(chain.Heads) > 0 {
		l.Heads = map[int]string{}
		if slices.Contains(chain.Heads, 0) {
			l.Heads[0] = chain.Genesis
		}
	}
	var (
		off       int64
		line      int
		batch     []Record // the open batch, held back until it is whole
		batchOff  int64
		batchLine int
		head      [2][sha256.Size * 2]byte // hex hashes: of the previous line, of this one
		cur       int                      // head[cur] is the previous line's hash
		anchored  string                   // hash of the anchor's record, when reached
		hasher    = sha256.New()           // reused: a third faster than Sum256 per line
		sum       [sha256.Size]byte
	)
	copy(head[0][:], chain.Genesis)
	anchor, bound := chain.bounds()
	var (
		boundOff  int64 = -1 // where the first record past bound starts
		boundLine int
		boundHead string
	)
	torn := func(at int64, ln int, detail string) *Log { return l.torn(at, ln, anchor, detail) }
	// broken records damage that is not an interrupted append; the sound
	// part ends before the line, or before the batch it interrupts.
	broken := func(at int64, ln int, parsed bool, detail string) *Log {
		l.broken(data, chain.Genesis, at, ln, parsed, detail)
		if len(batch) > 0 {
			l.Good = batchOff
		}
		return l
	}
	var dec *decoder
	if len(data) > 0 {
		// One view of the whole file as a string: values are substrings of it.
		dec = &decoder{src: unsafe.String(&data[0], len(data))}
	}
	for off < l.Size {
		line++
		raw, last := nextLine(data, off)
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
			return broken(off, line, false, "not valid JSON: "+err.Error())
		}
		prev := &head[cur]
		if problem := linkProblem(batch, unsafe.String(&prev[0], len(prev)), l.Count+len(batch)); problem != "" {
			batch = batch[:len(batch)-1]
			return broken(off, line, true, problem)
		}
		if len(batch) == 1 {
			batchOff, batchLine = off, line
		}
		cur ^= 1
		hasher.Reset()
		hasher.Write(raw)
		hex.Encode(head[cur][:], hasher.Sum(sum[:0]))
		if anchor != nil && r.Seq == anchor.Records {
			anchored = string(head[cur][:])
		}
		if l.Heads != nil && slices.Contains(chain.Heads, r.Seq) {
			l.Heads[r.Seq] = string(head[cur][:])
		}
		if r.Seq == bound+1 {
			boundOff, boundLine, boundHead = off, line, string(head[cur^1][:])
		}
		off += int64(len(raw)) + 1
		if len(batch) == r.BatchSize {
			l.closeBatch(batch, string(head[cur][:]), bound, visit)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		return torn(batchOff, batchLine, fmt.Sprintf("batch %d has %d of its %d records", batch[0].Batch, len(batch), batch[0].BatchSize))
	}
	l.Good = l.Size
	l.checkEnd(data, chain.Genesis, anchor, anchored, bound, pastBound{boundOff, boundLine, boundHead})
	return l
}

// torn records an interrupted append from at (line ln) to the end: the
// sound part ends before it. A tail that is part of an acknowledged append
// is not torn: bytes the session counted have gone.
func (l *Log) torn(at int64, ln int, anchor *Anchor, detail string) *Log {
	l.Damage = &Damage{Torn: true, Line: ln, Offset: at, Bytes: l.Size - at, Detail: detail}
	l.Good = at
	if anchor != nil && anchor.Records > l.Count {
		l.Damage = &Damage{Forged: true, Tamper: Deleted, Line: ln, Seq: l.Count + 1, Offset: at,
			Detail: fmt.Sprintf("the ledger ends inside record(s) seq %d–%d, which session.json's anchor counts as written (an append was acknowledged, then cut)", l.Count+1, anchor.Records)}
	}
	return l
}

// broken records damage at line ln that is not an interrupted append. A
// line that does not parse is corruption; anything else is placed in the
// chain by diagnose.
func (l *Log) broken(data []byte, genesis string, at int64, ln int, parsed bool, detail string) {
	if parsed {
		l.Damage = diagnose(data, ln-1, genesis, detail)
	} else {
		l.Damage = &Damage{Line: ln, Offset: at, Detail: detail}
	}
	l.Good = at
}

// closeBatch counts a whole batch, whose last line hashes to head, and
// shows visit the records the session acknowledged (up to bound; all when
// bound is negative).
func (l *Log) closeBatch(batch []Record, head string, bound int, visit func(*Record)) {
	if visit != nil {
		for i := range batch {
			if bound < 0 || batch[i].Seq <= bound {
				visit(&batch[i])
			}
		}
	}
	l.Count += len(batch)
	l.Head = head
}

// nextLine is the line at off, without its newline; last reports that
// it has none (the file's end).
func nextLine(data []byte, off int64) (line []byte, last bool) {
	end := bytes.IndexByte(data[off:], '\n')
	if end < 0 {
		return data[off:], true
	}
	return data[off : off+int64(end)], false
}

// bounds are the anchor a read holds the ledger to (nil when it anchors
// nothing) and how many records the session acknowledged: none are read
// past it (-1: a bare ledger, checked without a session).
func (c Chain) bounds() (anchor *Anchor, bound int) {
	anchor, bound = c.Anchor, -1
	if anchor != nil && anchor.Records <= 0 {
		anchor = nil // anchors nothing
	}
	if c.Anchor != nil {
		bound = max(c.Anchor.Records, 0)
	}
	return anchor, bound
}

// linkProblem says how the open batch's last record fails to follow the
// line before it (whose hash is prev) as the want-th record; "" when it
// follows.
func linkProblem(batch []Record, prev string, want int) string {
	r := &batch[len(batch)-1]
	switch {
	case r.Prev != prev && r.Prev == "":
		return "it carries no prev hash"
	case r.Prev != prev:
		return "its prev hash is not the hash of the line before it"
	case r.Seq != want:
		return fmt.Sprintf("seq %d where %d was expected", r.Seq, want)
	case len(batch) == 1 && (r.Batch != r.Seq || r.BatchSize < 1):
		return fmt.Sprintf("record %d should open a batch but says batch %d of size %d", r.Seq, r.Batch, r.BatchSize)
	}
	if first := batch[0]; len(batch) > 1 && (r.Batch != first.Batch || r.BatchSize != first.BatchSize) {
		return fmt.Sprintf("record %d breaks batch %d (size %d) before it is complete", r.Seq, first.Batch, first.BatchSize)
	}
	return ""
}

// pastBound is where the first record past what the session acknowledged
// starts: its offset (-1: none is), line, and the chain's head before it.
type pastBound struct {
	off  int64
	line int
	head string
}

// checkEnd holds a whole ledger to the session's anchor (anchored is the
// hash of the record it names, as read): records missing from the end, an
// anchored record edited, or records past bound the session never
// acknowledged, which are cut off.
func (l *Log) checkEnd(data []byte, genesis string, anchor *Anchor, anchored string, bound int, past pastBound) {
	switch {
	case anchor != nil && anchor.Records > l.Count:
		l.Damage = &Damage{Forged: true, Tamper: Deleted, Line: l.Count + 1, Seq: l.Count + 1, Offset: l.Size,
			Detail: fmt.Sprintf("record(s) seq %d–%d are missing from the end: session.json's anchor says the ledger held %d records", l.Count+1, anchor.Records, anchor.Records)}
	case anchor != nil && anchored != anchor.Head:
		d := diagnose(data, anchor.Records-1, genesis, "session.json's anchor holds a different hash of it")
		if d.Line != anchor.Records || d.Tamper != Edited {
			d = &Damage{Forged: true, Tamper: Edited, Line: anchor.Records, Seq: anchor.Records,
				Detail: fmt.Sprintf("line %d (seq %d) was edited after it was written: session.json's anchor holds a different hash of it", anchor.Records, anchor.Records)}
		}
		l.Damage = d
	case bound >= 0 && l.Count > bound:
		// Whole, chained records the session never acknowledged.
		l.Damage = &Damage{Torn: true, Unacknowledged: true, Line: past.line, Seq: bound + 1, Offset: past.off, Bytes: l.Size - past.off,
			Detail: fmt.Sprintf("%d record(s)", l.Count-bound)}
		l.Good, l.Count, l.Head = past.off, bound, past.head
	}
}

// Encode renders records as JSON Lines, one record per line, as they are.
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

// Seal chains records after head — each record's Prev is the hash of the
// line before it — and renders them. It returns the lines and the new head.
func Seal(recs []Record, head string) ([]byte, string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range recs {
		recs[i].Prev = head
		start := buf.Len()
		if err := enc.Encode(&recs[i]); err != nil {
			return nil, "", err
		}
		head = HashLine(buf.Bytes()[start : buf.Len()-1])
	}
	return buf.Bytes(), head, nil
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

// Appended is a batch on disk that its caller has not yet committed (by
// recording the new anchor); Undo takes it back.
type Appended struct {
	Anchor Anchor // the ledger's anchor with the batch
	undo   fsx.Undo
}

// Undo cuts the ledger back to its length before the append, in place.
func (a *Appended) Undo() error { return a.undo() }

// Append chains a stamped batch after l and writes it with one write and
// one fsync. A write that fails (disk full, EIO) is cut back before Append
// returns, so the ledger is never left with a partial batch. The caller
// holds the session lock and has checked the ledger undamaged.
func Append(path string, l *Log, recs []Record) (*Appended, error) {
	if len(recs) == 0 {
		return &Appended{Anchor: l.Anchor(), undo: func() error { return nil }}, nil
	}
	data, head, err := Seal(recs, l.Head)
	if err != nil {
		return nil, err
	}
	undo, err := fsx.AppendUndoable(path, data, 0o644)
	if err != nil {
		return nil, err
	}
	return &Appended{Anchor: Anchor{Records: l.Count + len(recs), Head: head}, undo: undo}, nil
}

// Repaired is what Repair did.
type Repaired struct {
	MovedTo        string `json:"movedTo"` // "" when the tail could not be saved
	RemovedBytes   int64  `json:"removedBytes"`
	RemovedRecords int    `json:"removedRecords"` // whole lines of the unfinished batch
	Tail           []byte `json:"-"`              // the bytes cut
	SaveError      error  `json:"-"`              // why the tail is not in MovedTo
	Log            *Log   `json:"-"`              // the ledger after the cut
}

// Repair cuts a torn tail off the ledger in place — no copy of the ledger,
// so it works on a full disk — and then keeps the cut bytes in tornPath.
// The cut comes first: it needs no space, and the bytes are an append that
// was never acknowledged. If keeping them fails (the disk is still full),
// Repaired says so and carries them, for the caller to show. Corrupt or
// forged ledgers are refused and left alone. The caller holds the session
// lock.
func Repair(path, tornPath string, chain Chain) (*Repaired, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l := Parse(data, chain, nil)
	if l.Damage == nil {
		return nil, nil
	}
	if !l.Damage.Torn {
		return nil, l.Damage
	}
	tail := data[l.Good:]
	if err := fsx.TruncateSync(path, l.Good); err != nil {
		return nil, err
	}
	r := &Repaired{RemovedBytes: int64(len(tail)), RemovedRecords: bytes.Count(tail, []byte{'\n'}), Tail: tail}
	r.Log = Parse(data[:l.Good], chain, nil)
	if err := fsx.WriteFile(tornPath, tail, 0o644); err != nil {
		r.SaveError = err
	} else {
		r.MovedTo = tornPath
	}
	return r, nil
}
