package fleet

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A fleet's journal is bounded on disk by rotation: the records before a
// supervisor's checkpoint are moved into an archive segment, and the
// journal goes on from the checkpoint. The rotation is itself a record of
// the chain (JournalRotate): it names the records it archived, their bytes'
// digest, the hash of the last of them — which the checkpoint's prev names
// — and what those records witness (their halts, releases,
// authorizations and revocations), so that the gate reads the witness
// from the live journal alone. A journal whose first record is not seq 1
// holds only when a rotation record in it archived exactly the records
// before it; laserbrain supervise verify reads the archive too and names a
// segment that is missing or no longer chains.

// JournalRotate is the kind of a rotation's record.
const JournalRotate = "rotate"

// Rotation is a rotation record's data.
type Rotation struct {
	// From and To are the seqs of the records archived.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// Segment names the archive segment that holds them; Bytes and SHA256
	// are the records' lines as they stood in the journal.
	Segment string `json:"segment"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	// LastHash is record To's hash: the next record's prev.
	LastHash string `json:"last_hash"`
	// Witness is what the journal's records up to To witness.
	Witness Witness `json:"witness"`
}

// JournalArchive is an optional part of a store whose journal rotates.
type JournalArchive interface {
	// RotateJournal archives the records before seq from — a checkpoint,
	// which the journal then starts with — when they take at least
	// minBytes, and appends the rotation's record. rotated says whether it
	// did.
	RotateJournal(ctx context.Context, fleet string, from, minBytes int64) (rotated bool, err error)
	// ArchivedRecords reads the archived records with seq from..to,
	// oldest first, as stored and unchecked. A segment that is missing or
	// cannot be read is an *ArchiveMissingError.
	ArchivedRecords(ctx context.Context, fleet string, from, to int64) ([]JournalRecord, error)
}

// ArchiveMissingError is an archive segment a rotation wrote that the
// store does not hold, or cannot read (Why).
type ArchiveMissingError struct {
	Segment  string
	From, To int64
	Why      string
}

func (e *ArchiveMissingError) Error() string {
	why := e.Why
	if why == "" {
		why = "is missing"
	}
	return fmt.Sprintf("the archive segment %s (records %d–%d) %s", e.Segment, e.From, e.To, why)
}

// rotationOf is r's rotation, when r is a rotation record.
func rotationOf(r JournalRecord) (Rotation, bool) {
	var rot Rotation
	if r.Kind != JournalRotate || json.Unmarshal(r.Data, &rot) != nil || rot.To < rot.From || rot.From < 1 {
		return Rotation{}, false
	}
	return rot, true
}

// liveRotation is the rotation that archived the records before the
// journal's first (live) record, when the journal was rotated: ok false
// for a journal read from seq 1. A journal that starts later without a
// rotation that explains it has lost its first records: problem says so.
func liveRotation(recs []JournalRecord) (rot Rotation, rotated bool, problem *JournalProblem) {
	if len(recs) == 0 || recs[0].Seq <= 1 {
		return Rotation{}, false, nil
	}
	first := recs[0]
	for _, r := range recs {
		if got, ok := rotationOf(r); ok && got.To == first.Seq-1 && got.LastHash == first.Prev && first.Kind == JournalCheckpoint {
			return got, true, nil
		}
	}
	return Rotation{}, false, &JournalProblem{Index: 1, Seq: 1, Kind: TamperDeleted, Detail: fmt.Sprintf(
		"%s missing: the journal starts at seq %d, and no rotation record in it archived the records before", missing(1, first.Seq-1), first.Seq)}
}

// JournalFrom is the seq of the first record of recs, a journal read from
// its start (1 when it was never rotated).
func JournalFrom(recs []JournalRecord) int64 {
	if len(recs) == 0 || recs[0].Seq < 1 {
		return 1
	}
	return recs[0].Seq
}

// ReadJournal reads fleet's journal whole for a person: the archived
// records (those the store still holds, from seq 1) followed by the live
// ones. missing is an archive segment that is gone (the records after it
// are still returned, from the live journal).
func ReadJournal(ctx context.Context, st Journal, fleet string) (recs []JournalRecord, missing error, err error) {
	live, err := st.JournalRecords(ctx, fleet, 0)
	if err != nil {
		return nil, nil, err
	}
	from := JournalFrom(live)
	a, ok := st.(JournalArchive)
	if from <= 1 || !ok {
		return live, nil, nil
	}
	old, err := a.ArchivedRecords(ctx, fleet, 1, from-1)
	var gone *ArchiveMissingError
	if errors.As(err, &gone) {
		return live, gone, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return append(old, live...), nil, nil
}

// CheckArchive holds the journal's archive to its live records (live, read
// from the start: CheckJournal's): the archived records, read from seq 1,
// chain without a break into the live journal's first record. It returns
// how many records the archive holds and the first problem: a segment
// missing, or a record in it changed.
func CheckArchive(ctx context.Context, st Journal, fleet string, live []JournalRecord) (int64, *JournalProblem, error) {
	from := JournalFrom(live)
	a, ok := st.(JournalArchive)
	if from <= 1 || !ok {
		return 0, nil, nil
	}
	old, err := a.ArchivedRecords(ctx, fleet, 1, from-1)
	var gone *ArchiveMissingError
	if errors.As(err, &gone) {
		return 0, &JournalProblem{Index: int(gone.From), Seq: gone.From, Kind: TamperDeleted, Detail: gone.Error() + ": the rotation that archived them is in the journal"}, nil
	}
	if err != nil {
		return 0, nil, err
	}
	if _, p := verifyChain(old, 1, "", JournalHead{Records: from - 1, Hash: live[0].Prev}); p != nil {
		p.Detail = "in the archive: " + p.Detail
		return int64(len(old)), p, nil
	}
	return int64(len(old)), nil, nil
}

// SegmentName is the name of the archive segment of records from..to.
func SegmentName(from, to int64) string { return segmentName(from, to) }

// NewRotation is what archiving recs[:i] records — recs being the live
// journal from its first record, recs[i] the checkpoint it will start
// with — for a store that writes the archive itself; the store fills in
// Segment, Bytes and SHA256.
func NewRotation(fleet string, recs []JournalRecord, i int) (Rotation, error) {
	return rotation(fleet, recs, i)
}

// ZipSegment is an archive segment's bytes: its records' lines, gzipped.
func ZipSegment(lines []byte) ([]byte, error) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(lines); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return gz.Bytes(), nil
}

// SegmentRecords reads an archive segment (what ZipSegment made) as
// records, each with its Raw bytes.
func SegmentRecords(segment io.Reader) ([]JournalRecord, error) {
	zr, err := gzip.NewReader(segment)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	return journalLines(data)
}
