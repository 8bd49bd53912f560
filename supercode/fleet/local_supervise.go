package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/jsonl"
)

// The local store's halts and journal:
//
//	halts/<id>.json            one halt, released ones too
//	halts/active/<key>         the id of the halt in force on one agent
//	journal/<key>.jsonl        one fleet's journal, one record a line
//	journal/<key>.head         its head: records, hash and the byte size
//
// <key> is a hash of the fleet (and agent): fleet ids are not file names.
// Every halt write takes halts/halts.lock; every append takes the journal's
// <key>.lock for the whole read-chain-append-move-head step, which is what
// keeps concurrent supervisors' records in one line.

func fileKey(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

func (l *Local) haltPath(id string) string { return filepath.Join(l.dir, "halts", id+".json") }
func (l *Local) activePath(fleet, agent string) string {
	return filepath.Join(l.dir, "halts", "active", fileKey(fleet, agent))
}

func (l *Local) haltLock() (*fsx.Lock, error) {
	return l.lockFile(filepath.Join(l.dir, "halts", "halts.lock"), LockTimeout)
}

func validHalt(h Halt) error {
	if err := ValidateRunID(h.ID); err != nil {
		return fmt.Errorf("halt id: %w", err)
	}
	if h.Fleet == "" || h.Agent == "" {
		return errors.New("a halt needs its fleet and agent")
	}
	if strings.TrimSpace(h.Reason) == "" {
		return errors.New("a halt needs a reason")
	}
	return nil
}

// PutHalt implements Halts.
func (l *Local) PutHalt(ctx context.Context, h Halt) error {
	if err := validHalt(h); err != nil {
		return err
	}
	h.Released = nil
	lk, err := l.haltLock()
	if err != nil {
		return err
	}
	defer lk.Unlock()
	if _, err := os.Stat(l.haltPath(h.ID)); err == nil {
		return fmt.Errorf("halt %s: %w", h.ID, ErrExists)
	}
	if cur, ok, err := l.activeLocked(h.Fleet, h.Agent); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%s is already halted (%s): %w", h.Agent, cur.ID, ErrExists)
	}
	if err := writeJSON(l.haltPath(h.ID), h); err != nil {
		return err
	}
	return fsx.WriteFile(l.activePath(h.Fleet, h.Agent), []byte(h.ID+"\n"), 0o644)
}

// activeLocked reads the halt in force on agent (the caller may or may not
// hold the lock: the index and the halt are each replaced atomically).
func (l *Local) activeLocked(fleet, agent string) (Halt, bool, error) {
	b, err := os.ReadFile(l.activePath(fleet, agent))
	if errors.Is(err, fs.ErrNotExist) {
		return Halt{}, false, nil
	}
	if err != nil {
		return Halt{}, false, err
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		// Written whole with the halt's id, never empty: emptied from
		// outside (through a hard link, say). The halt it named is not
		// known to be lifted.
		return Halt{}, false, fmt.Errorf("%s is damaged (empty; fix or move it): the halt in force on %s cannot be read", l.activePath(fleet, agent), agent)
	}
	var h Halt
	if err := readJSON(l.haltPath(id), &h); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Halt{}, false, nil // released between the two reads
		}
		return Halt{}, false, err
	}
	if !h.InForce() || h.Fleet != fleet || h.Agent != agent {
		return Halt{}, false, nil
	}
	return h, true, nil
}

// ReleaseHalt implements Halts.
func (l *Local) ReleaseHalt(ctx context.Context, fleet, agent string, r Release) (Halt, error) {
	lk, err := l.haltLock()
	if err != nil {
		return Halt{}, err
	}
	defer lk.Unlock()
	h, ok, err := l.activeLocked(fleet, agent)
	if err != nil {
		return Halt{}, err
	}
	if !ok {
		return Halt{}, fmt.Errorf("%s is not halted: %w", agent, ErrNotFound)
	}
	h.Released = &r
	if err := writeJSON(l.haltPath(h.ID), h); err != nil {
		return Halt{}, err
	}
	if err := os.Remove(l.activePath(fleet, agent)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Halt{}, err
	}
	return h, nil
}

// ActiveHalt implements Halts.
func (l *Local) ActiveHalt(ctx context.Context, fleet, agent string) (Halt, bool, error) {
	return l.activeLocked(fleet, agent)
}

// ListHalts implements Halts.
func (l *Local) ListHalts(ctx context.Context, fleet string) ([]Halt, error) {
	out, err := readAll(l, "halts", func(h *Halt) bool { return fleet == "" || h.Fleet == fleet })
	if err != nil {
		return nil, err
	}
	oldestFirst(out, func(h *Halt) (time.Time, string) { return h.At, h.ID })
	return out, nil
}

// AnyHaltInForce implements Halts: one directory read (a name beginning
// with a dot is a write in progress, not a halt).
func (l *Local) AnyHaltInForce(ctx context.Context) (bool, error) {
	return anyVisible(filepath.Join(l.dir, "halts", "active"))
}

func (l *Local) journalPath(fleet, ext string) string {
	return filepath.Join(l.dir, "journal", fileKey(fleet)+ext)
}

// JournalLocation implements JournalLocator: the journal's file; its head
// (.head) and the fleet's round counter (.round) are beside it.
func (l *Local) JournalLocation(fleet string) string {
	return l.journalPath(fleet, ".jsonl")
}

// localHead is a journal's head file: the chain's end and the journal's
// size when it was recorded.
type localHead struct {
	Fleet string `json:"fleet"`
	JournalHead
	Size int64 `json:"size"`
}

func (l *Local) readHead(fleet string) (localHead, error) {
	var h localHead
	err := readJSON(l.journalPath(fleet, ".head"), &h)
	if errors.Is(err, fs.ErrNotExist) {
		return localHead{Fleet: fleet}, nil
	}
	return h, err
}

// AppendJournal implements Journal. Under the journal's lock it reads the
// head, cuts off an append a crashed writer left unacknowledged (its bytes
// are kept in <key>.torn-<time>.jsonl), chains the record after the head,
// appends it with one write and an fsync, and moves the head; if the head
// cannot be moved the append is taken back.
func (l *Local) AppendJournal(ctx context.Context, rec JournalRecord) (JournalRecord, error) {
	if rec.Fleet == "" || rec.Kind == "" {
		return JournalRecord{}, errors.New("a journal record needs its fleet and kind")
	}
	lk, err := l.lockFile(l.journalPath(rec.Fleet, ".lock"), LockTimeout)
	if err != nil {
		return JournalRecord{}, err
	}
	defer lk.Unlock()
	return l.appendLocked(rec)
}

// appendLocked is AppendJournal under the journal's lock.
func (l *Local) appendLocked(rec JournalRecord) (JournalRecord, error) {
	path := l.journalPath(rec.Fleet, ".jsonl")
	head, err := l.readHead(rec.Fleet)
	if err != nil {
		return JournalRecord{}, err
	}
	size := int64(0)
	if info, err := os.Stat(path); err == nil {
		size = info.Size()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return JournalRecord{}, err
	}
	if size < head.Size {
		if head, err = l.finishRotation(rec.Fleet, head, size); err != nil {
			return JournalRecord{}, err
		}
	}
	switch {
	case size < head.Size:
		return JournalRecord{}, fmt.Errorf("the journal %s is shorter than its head records (%d < %d bytes): it was cut; nothing was appended (laserbrain supervise verify)", path, size, head.Size)
	case size > head.Size:
		if err := l.cutUnacknowledged(path, head.Size); err != nil {
			return JournalRecord{}, err
		}
	}
	rec.Seq = head.Records + 1
	if rec.At == "" {
		rec.At = JournalTime(time.Now())
	}
	rec, err = SealJournal(rec, head.Hash)
	if err != nil {
		return JournalRecord{}, err
	}
	line := append(bytes.Clone(rec.Raw), '\n')
	undo, err := fsx.AppendUndoable(path, line, 0o644)
	if err != nil {
		return JournalRecord{}, err
	}
	next := localHead{Fleet: rec.Fleet, JournalHead: JournalHead{Records: rec.Seq, Hash: rec.Hash}, Size: head.Size + int64(len(line))}
	if err := writeJSON(l.journalPath(rec.Fleet, ".head"), next); err != nil {
		if uerr := undo(); uerr != nil {
			return JournalRecord{}, fmt.Errorf("moving the journal's head failed (%v), and taking the record back failed too (%v)", err, uerr)
		}
		return JournalRecord{}, fmt.Errorf("moving the journal's head failed, so the record was taken back: %w", err)
	}
	return rec, nil
}

// cutUnacknowledged keeps the bytes past the head in a torn file, then cuts
// the journal back to the head.
func (l *Local) cutUnacknowledged(path string, size int64) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if int64(len(data)) > size {
		torn := strings.TrimSuffix(path, ".jsonl") + ".torn-" + time.Now().UTC().Format("20060102T150405.000000000") + ".jsonl"
		if err := fsx.WriteFile(torn, data[size:], 0o644); err != nil {
			return fmt.Errorf("keeping an unacknowledged journal tail: %w", err)
		}
	}
	return fsx.TruncateSync(path, size)
}

// JournalRecords implements Journal, through the one JSON-lines reader (a
// torn last line is not a record yet). With after > 0 it reads the file
// backwards only as far as record after, so reading what is new costs what
// is new, however long the journal.
func (l *Local) JournalRecords(ctx context.Context, fleet string, after int64) ([]JournalRecord, error) {
	path := l.journalPath(fleet, ".jsonl")
	from := jsonl.Start
	if after > 0 {
		off, err := journalOffsetAfter(path, after)
		if err != nil {
			return nil, err
		}
		from = jsonl.Pos{Off: off}
	}
	var out []JournalRecord
	_, err := jsonl.Scan(path, from, func(line []byte, _ int) error {
		var r JournalRecord
		if json.Unmarshal(line, &r) != nil {
			r = JournalRecord{}
		}
		r.Raw = bytes.Clone(line)
		if r.Seq > after || r.Seq == 0 {
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// journalOffsetAfter is where the line after record seq starts: found by
// reading the journal backwards from its end to the last line whose seq is
// seq or below (0 when there is none).
func journalOffsetAfter(path string, seq int64) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	end, err := jsonl.LastLineEnd(f)
	if err != nil {
		return 0, err
	}
	const chunk = 64 << 10
	var tail []byte // bytes from pos to the next line start already seen
	pos := end
	for pos > 0 {
		n := min(int64(chunk), pos)
		buf := make([]byte, n, n+int64(len(tail)))
		if _, err := f.ReadAt(buf, pos-n); err != nil {
			return 0, err
		}
		buf = append(buf, tail...)
		base := pos - n
		// Lines that start in this chunk, last first: each starts after a
		// line feed (or at the file's start).
		stop := len(buf)
		for i := len(buf) - 1; i >= -1; i-- {
			if i >= 0 && buf[i] != '\n' {
				continue
			}
			if i == -1 && base > 0 {
				break // the line goes on in the chunk before
			}
			line := buf[i+1 : stop]
			if s, ok := seqOf(line); ok && s <= seq {
				return base + int64(stop) + 1, nil
			}
			stop = i
		}
		if base == 0 {
			return 0, nil // every record is past seq (a rotated journal's)
		}
		tail = append([]byte(nil), buf[:stop]...)
		pos = base
	}
	return 0, nil
}

// seqOf reads the seq a journal line starts with.
func seqOf(line []byte) (int64, bool) {
	const prefix = `{"seq":`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0, false
	}
	var n int64
	digits := 0
	for _, c := range line[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
		digits++
	}
	return n, digits > 0 && digits < 19
}

// JournalHead implements Journal.
func (l *Local) JournalHead(ctx context.Context, fleet string) (JournalHead, error) {
	h, err := l.readHead(fleet)
	return h.JournalHead, err
}

// EventStamp changes whenever run's events do (its file's size and
// modification time): a reader polling many runs reads Events again only
// when it moved (supervise.EventStamper).
func (l *Local) EventStamp(ctx context.Context, run string) (string, error) {
	if err := ValidateRunID(run); err != nil {
		return "", err
	}
	info, err := os.Stat(l.eventPath(run))
	if errors.Is(err, fs.ErrNotExist) {
		return "-", nil
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d", info.Size(), info.ModTime().UnixNano()), nil
}

var _ JournalRestarter = (*Local)(nil)

// RestartJournal implements JournalRestarter: under the fleet's rounds and
// journal locks, the journal's files (.jsonl, .head, .round) are renamed
// into journal/set-aside/, stamped with the time, and the new journal,
// head and mark are written whole.
func (l *Local) RestartJournal(ctx context.Context, fleet string, first JournalRecord) (JournalRecord, string, error) {
	if fleet == "" || first.Kind == "" {
		return JournalRecord{}, "", errors.New("a journal record needs its fleet and kind")
	}
	rlk, err := l.lockFile(l.journalPath(fleet, ".rounds"), RoundWait)
	if err != nil {
		return JournalRecord{}, "", err
	}
	defer rlk.Unlock()
	jlk, err := l.lockFile(l.journalPath(fleet, ".lock"), LockTimeout)
	if err != nil {
		return JournalRecord{}, "", err
	}
	defer jlk.Unlock()
	mark, _ := readMark(l.journalPath(fleet, ".round")) // a damaged counter is set aside too
	aside := filepath.Join(l.dir, "journal", "set-aside", fileKey(fleet)+"."+time.Now().UTC().Format("20060102T150405.000000000"))
	if err := os.MkdirAll(filepath.Dir(aside), 0o755); err != nil {
		return JournalRecord{}, "", err
	}
	for _, ext := range []string{".jsonl", ".head", ".round", ".archive"} {
		if err := os.Rename(l.journalPath(fleet, ext), aside+ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return JournalRecord{}, "", fmt.Errorf("setting the journal aside: %w", err)
		}
	}
	first.Fleet, first.Seq = fleet, 1
	if first.At == "" {
		first.At = JournalTime(time.Now())
	}
	rec, err := SealJournal(first, "")
	if err != nil {
		return JournalRecord{}, "", err
	}
	line := append(bytes.Clone(rec.Raw), '\n')
	if err := fsx.WriteFile(l.journalPath(fleet, ".jsonl"), line, 0o644); err != nil {
		return JournalRecord{}, "", err
	}
	head := localHead{Fleet: fleet, JournalHead: JournalHead{Records: 1, Hash: rec.Hash}, Size: int64(len(line))}
	if err := writeJSON(l.journalPath(fleet, ".head"), head); err != nil {
		return JournalRecord{}, "", err
	}
	data, err := json.Marshal(RoundMark{Round: mark.Round, Records: 1, Hash: rec.Hash})
	if err != nil {
		return JournalRecord{}, "", err
	}
	if err := fsx.WriteFile(l.journalPath(fleet, ".round"), append(data, '\n'), 0o644); err != nil {
		return JournalRecord{}, "", err
	}
	return rec, aside + ".jsonl", nil
}
