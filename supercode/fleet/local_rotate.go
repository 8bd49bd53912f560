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
	"slices"

	"github.com/laserkit/laserkit/internal/fsx"
)

// The local store's archive of a rotated journal:
//
//	journal/<key>.archive/<from>-<to>.jsonl.gz   the records from..to, a
//	                                             gzip of their lines as
//	                                             they stood in the journal
//
// A rotation, under the journal's lock: the segment is written whole, the
// rotation's record appended (file and head, as any record), the journal
// replaced by its lines from the checkpoint on, and the head's size moved.
// A crash between the last two leaves a journal shorter than its head by
// exactly the bytes the rotation record says it archived: the next append
// finishes the rotation (finishRotation).

var _ JournalArchive = (*Local)(nil)

func (l *Local) archiveDir(fleet string) string { return l.journalPath(fleet, ".archive") }

func segmentName(from, to int64) string { return fmt.Sprintf("%012d-%012d.jsonl.gz", from, to) }

// RotateJournal implements JournalArchive.
func (l *Local) RotateJournal(ctx context.Context, fleet string, from, minBytes int64) (bool, error) {
	lk, err := l.lockFile(l.journalPath(fleet, ".lock"), LockTimeout)
	if err != nil {
		return false, err
	}
	defer lk.Unlock()
	path := l.journalPath(fleet, ".jsonl")
	head, err := l.readHead(fleet)
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) != head.Size || from <= 1 {
		return false, err // unacknowledged or cut: the next append sorts it out first
	}
	off, err := journalOffsetAfter(path, from-1)
	if err != nil || off < max(minBytes, 1) {
		return false, err
	}
	recs, err := journalLines(data)
	if err != nil {
		return false, err
	}
	i := slices.IndexFunc(recs, func(r JournalRecord) bool { return r.Seq == from })
	if i <= 0 || recs[i].Kind != JournalCheckpoint {
		return false, fmt.Errorf("rotating the journal at record %d: it is not a checkpoint the journal holds", from)
	}
	rot, err := rotation(fleet, recs, i)
	if err != nil {
		return false, err
	}
	archived := data[:off]
	sum := sha256.Sum256(archived)
	rot.Segment, rot.Bytes, rot.SHA256 = segmentName(rot.From, rot.To), off, hex.EncodeToString(sum[:])
	if err := l.writeSegment(fleet, rot.Segment, archived); err != nil {
		return false, err
	}
	body, err := json.Marshal(rot)
	if err != nil {
		return false, err
	}
	if _, err := l.appendLocked(JournalRecord{Fleet: fleet, Kind: JournalRotate,
		Text: fmt.Sprintf("records %d–%d archived in %s", rot.From, rot.To, rot.Segment), Data: body}); err != nil {
		return false, err
	}
	now, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(now, archived) {
		return false, fmt.Errorf("rotating the journal: it changed under its lock (%v)", err)
	}
	if err := fsx.WriteFile(path, now[off:], 0o644); err != nil {
		return false, err
	}
	after, err := l.readHead(fleet)
	if err != nil {
		return false, err
	}
	after.Size = int64(len(now)) - off
	return true, writeJSON(l.journalPath(fleet, ".head"), after)
}

// rotation is what archiving recs[:i] records: their range, the last hash
// and what they witness, on from what the rotation before them recorded.
func rotation(fleet string, recs []JournalRecord, i int) (Rotation, error) {
	w := Witness{Fleet: fleet}
	if recs[0].Seq > 1 {
		before, rotated, p := liveRotation(recs)
		if !rotated {
			return Rotation{}, fmt.Errorf("rotating the journal: %v", p)
		}
		w = before.Witness.clone()
	}
	for _, r := range recs[:i] {
		w.apply(r)
	}
	last := recs[i-1]
	w.Records, w.Hash, w.Problem = last.Seq, last.Hash, nil
	return Rotation{From: recs[0].Seq, To: last.Seq, LastHash: last.Hash, Witness: w}, nil
}

// journalLines reads a journal's lines as records, each with Raw.
func journalLines(data []byte) ([]JournalRecord, error) {
	var out []JournalRecord
	for line := range bytes.Lines(data) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		var r JournalRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("a journal line is not a record: %w", err)
		}
		r.Raw = line
		out = append(out, r)
	}
	return out, nil
}

// writeSegment writes an archive segment whole.
func (l *Local) writeSegment(fleet, name string, lines []byte) error {
	gz, err := ZipSegment(lines)
	if err != nil {
		return err
	}
	dir := l.archiveDir(fleet)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return fsx.WriteFile(filepath.Join(dir, name), gz, 0o644)
}

// finishRotation finishes a rotation a crash cut short after the journal
// was replaced and before its head's size moved: the journal then starts
// with the checkpoint a rotation record in it names, shorter than the head
// by exactly the bytes that record archived. Anything else is returned as
// it was (a journal cut from outside).
func (l *Local) finishRotation(fleet string, head localHead, size int64) (localHead, error) {
	data, err := os.ReadFile(l.journalPath(fleet, ".jsonl"))
	if err != nil || int64(len(data)) != size {
		return head, nil
	}
	recs, err := journalLines(data)
	if err != nil {
		return head, nil
	}
	rot, rotated, _ := liveRotation(recs)
	if !rotated || rot.Bytes != head.Size-size {
		return head, nil
	}
	if _, err := os.Stat(filepath.Join(l.archiveDir(fleet), rot.Segment)); err != nil {
		return head, nil
	}
	head.Size = size
	return head, writeJSON(l.journalPath(fleet, ".head"), head)
}

// ArchivedRecords implements JournalArchive: the segments that cover
// from..to, in order, each read whole.
func (l *Local) ArchivedRecords(ctx context.Context, fleet string, from, to int64) ([]JournalRecord, error) {
	segs, err := l.segments(fleet)
	if err != nil {
		return nil, err
	}
	var out []JournalRecord
	next := from
	for _, sg := range segs {
		if sg.to < next || sg.from > to {
			continue
		}
		if sg.from > next {
			break
		}
		recs, err := readSegment(filepath.Join(l.archiveDir(fleet), sg.name))
		if err != nil {
			return nil, &ArchiveMissingError{Segment: sg.name, From: sg.from, To: sg.to, Why: "cannot be read: " + err.Error()}
		}
		for _, r := range recs {
			if r.Seq >= next && r.Seq <= to {
				out = append(out, r)
			}
		}
		next = sg.to + 1
	}
	if next <= to {
		return nil, &ArchiveMissingError{Segment: segmentName(next, to), From: next, To: to}
	}
	return out, nil
}

type segment struct {
	name     string
	from, to int64
}

// segments are the fleet's archive segments, oldest first.
func (l *Local) segments(fleet string) ([]segment, error) {
	ents, err := os.ReadDir(l.archiveDir(fleet))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []segment
	for _, e := range ents {
		var sg segment
		if _, err := fmt.Sscanf(e.Name(), "%012d-%012d.jsonl.gz", &sg.from, &sg.to); err == nil && e.Name() == segmentName(sg.from, sg.to) {
			sg.name = e.Name()
			out = append(out, sg)
		}
	}
	slices.SortFunc(out, func(a, b segment) int { return int(a.from - b.from) })
	return out, nil
}

// readSegment reads one archive segment's records.
func readSegment(path string) ([]JournalRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return SegmentRecords(f)
}
