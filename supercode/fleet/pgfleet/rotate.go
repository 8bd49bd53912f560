package pgfleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// The journal's archive in PostgreSQL: a rotation is one transaction
// under the fleet's journal lock — the records before the checkpoint are
// written as one segment (the gzip of their lines) into
// laserbrain.journal_archive, the rotation's record is appended, and the
// records are deleted from laserbrain.journal — so no crash leaves it half
// done. A database made before the archive table existed gets it at the
// first rotation (pgdb.Ensure), nothing else changed.

var _ fleet.JournalArchive = (*Store)(nil)

const archiveTable = "journal_archive"

// archive makes the archive table where the database lacks it, once per
// store.
func (s *Store) archive(ctx context.Context) error {
	if s.archiveReady.Load() {
		return nil
	}
	if err := pgdb.Ensure(ctx, s.pool, SuperviseComponent, archiveTable); err != nil {
		return pgdb.Wrap(err, s.dsn)
	}
	s.archiveReady.Store(true)
	return nil
}

// RotateJournal implements fleet.JournalArchive.
func (s *Store) RotateJournal(ctx context.Context, fl string, from, minBytes int64) (bool, error) {
	if from <= 1 {
		return false, nil
	}
	if err := s.archive(ctx); err != nil {
		return false, err
	}
	var rotated bool
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rotated = false
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, journalKey(fl)); err != nil {
			return err
		}
		recs, err := journalIn(ctx, tx, fl)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(recs, func(r fleet.JournalRecord) bool { return r.Seq == from })
		if i == 0 {
			return nil // rotated there already (a retried transaction's first try)
		}
		if i < 0 || recs[i].Kind != fleet.JournalCheckpoint {
			return fmt.Errorf("rotating the journal at record %d: it is not a checkpoint the journal holds", from)
		}
		var lines []byte
		for _, r := range recs[:i] {
			lines = append(append(lines, r.Raw...), '\n')
		}
		if int64(len(lines)) < max(minBytes, 1) {
			return nil
		}
		rot, err := fleet.NewRotation(fl, recs, i)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(lines)
		rot.Segment, rot.Bytes, rot.SHA256 = fleet.SegmentName(rot.From, rot.To), int64(len(lines)), hex.EncodeToString(sum[:])
		if err := archiveSegment(ctx, tx, fl, rot, lines); err != nil {
			return err
		}
		body, err := json.Marshal(rot)
		if err != nil {
			return err
		}
		if _, err := appendJournal(ctx, tx, fleet.JournalRecord{Fleet: fl, At: fleet.JournalTime(time.Now()), Kind: fleet.JournalRotate,
			Text: fmt.Sprintf("records %d–%d archived in %s", rot.From, rot.To, rot.Segment), Data: body}, false); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM laserbrain.journal WHERE fleet = $1 AND seq < $2`, fl, from); err != nil {
			return err
		}
		rotated = true
		return nil
	})
	return rotated, err
}

// journalIn is the fleet's live journal read in tx, each record with Raw.
func journalIn(ctx context.Context, tx pgx.Tx, fl string) ([]fleet.JournalRecord, error) {
	rows, err := tx.Query(ctx, `SELECT raw FROM laserbrain.journal WHERE fleet = $1 ORDER BY seq`, fl)
	if err != nil {
		return nil, err
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := make([]fleet.JournalRecord, 0, len(raws))
	for _, raw := range raws {
		var r fleet.JournalRecord
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return nil, fmt.Errorf("a journal record is not JSON: %w", err)
		}
		r.Raw = []byte(raw)
		out = append(out, r)
	}
	return out, nil
}

// archiveSegment writes the segment of rot's records (lines) in tx.
func archiveSegment(ctx context.Context, tx pgx.Tx, fl string, rot fleet.Rotation, lines []byte) error {
	gz, err := fleet.ZipSegment(lines)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO laserbrain.journal_archive (fleet, from_seq, to_seq, segment, lines) VALUES ($1, $2, $3, $4, $5)`,
		fl, rot.From, rot.To, rot.Segment, gz)
	return err
}

// ArchivedRecords implements fleet.JournalArchive: the segments that
// cover from..to, in order.
func (s *Store) ArchivedRecords(ctx context.Context, fl string, from, to int64) ([]fleet.JournalRecord, error) {
	if err := s.archive(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT segment, from_seq, to_seq, lines FROM laserbrain.journal_archive
WHERE fleet = $1 AND to_seq >= $2 AND from_seq <= $3 ORDER BY from_seq`, fl, from, to)
	if err != nil {
		return nil, pgdb.Wrap(err, s.dsn)
	}
	type seg struct {
		name     string
		from, to int64
		lines    []byte
	}
	segs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (seg, error) {
		var sg seg
		err := r.Scan(&sg.name, &sg.from, &sg.to, &sg.lines)
		return sg, err
	})
	if err != nil {
		return nil, pgdb.Wrap(err, s.dsn)
	}
	var out []fleet.JournalRecord
	next := from
	for _, sg := range segs {
		if sg.from > next {
			break
		}
		recs, err := fleet.SegmentRecords(bytes.NewReader(sg.lines))
		if err != nil {
			return nil, &fleet.ArchiveMissingError{Segment: sg.name, From: sg.from, To: sg.to, Why: "cannot be read: " + err.Error()}
		}
		for _, r := range recs {
			if r.Seq >= next && r.Seq <= to {
				out = append(out, r)
			}
		}
		next = sg.to + 1
	}
	if next <= to {
		return nil, &fleet.ArchiveMissingError{Segment: fleet.SegmentName(next, to), From: next, To: to}
	}
	return out, nil
}
