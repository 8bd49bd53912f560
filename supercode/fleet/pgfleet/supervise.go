package pgfleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/pgdsn"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// SuperviseComponent is the supervisor's part of the schema: halts, the
// journal with its heads, the fleets' last rounds, the journal's head as
// each fleet's last round left it (journal_marks: the round counter's
// witness of the journal, a table of its own because laserbrain never
// alters a table it created), and what the supervisor says to each agent
// (voice); and the journal's archive (journal_archive: the records a
// rotation moved out of the journal, each segment the gzip of their lines,
// a table a later version brought, made where first needed).
var SuperviseComponent = pgdb.Component{Name: "supervise", Tables: []pgdb.Table{
	{Name: "halts", Columns: []string{"id", "fleet", "agent", "at", "in_force", "halt"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.halts (
	id       text PRIMARY KEY,
	fleet    text NOT NULL,
	agent    text NOT NULL,
	at       timestamptz NOT NULL,
	in_force boolean NOT NULL,
	halt     jsonb NOT NULL
)`, `CREATE UNIQUE INDEX IF NOT EXISTS halts_one_in_force ON laserbrain.halts (fleet, agent) WHERE in_force`,
		`CREATE INDEX IF NOT EXISTS halts_fleet ON laserbrain.halts (fleet, at, id)`}},
	{Name: "journal", Columns: []string{"fleet", "seq", "raw"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.journal (
	fleet text NOT NULL,
	seq   bigint NOT NULL,
	raw   text NOT NULL,
	PRIMARY KEY (fleet, seq)
)`}},
	{Name: "journal_heads", Columns: []string{"fleet", "records", "hash"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.journal_heads (
	fleet   text PRIMARY KEY,
	records bigint NOT NULL,
	hash    text NOT NULL
)`}},
	{Name: "rounds", Columns: []string{"fleet", "last"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.rounds (
	fleet text PRIMARY KEY,
	last  bigint NOT NULL
)`}},
	{Name: "journal_marks", Columns: []string{"fleet", "round", "records", "hash"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.journal_marks (
	fleet   text PRIMARY KEY,
	round   bigint NOT NULL,
	records bigint NOT NULL,
	hash    text NOT NULL
)`}},
	{Name: "journal_archive", Since: 1, Columns: []string{"fleet", "from_seq", "to_seq", "segment", "lines"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.journal_archive (
	fleet    text NOT NULL,
	from_seq bigint NOT NULL,
	to_seq   bigint NOT NULL,
	segment  text NOT NULL,
	lines    bytea NOT NULL,
	PRIMARY KEY (fleet, from_seq)
)`}},
	{Name: "voice", Columns: []string{"fleet", "agent", "id", "seq", "message", "delivered"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.voice (
	fleet     text NOT NULL,
	agent     text NOT NULL,
	id        text NOT NULL,
	seq       bigserial,
	message   jsonb NOT NULL,
	delivered timestamptz,
	PRIMARY KEY (fleet, agent, id)
)`, `CREATE INDEX IF NOT EXISTS voice_waiting ON laserbrain.voice (fleet, agent, seq) WHERE delivered IS NULL`}},
}}

// PutHalt implements fleet.Halts: the partial unique index keeps one halt
// in force per agent; a second (or the same id again) is ErrExists.
func (s *Store) PutHalt(ctx context.Context, h fleet.Halt) error {
	if h.ID == "" || h.Fleet == "" || h.Agent == "" || h.Reason == "" {
		return fmt.Errorf("a halt needs an id, a fleet, an agent and a reason")
	}
	h.Released = nil
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return s.txTries(ctx, func(tx pgx.Tx, retry bool) error {
		return insertOnce(ctx, tx, retry, fmt.Errorf("halt %s on %s: %w", h.ID, h.Agent, fleet.ErrExists),
			`INSERT INTO laserbrain.halts (id, fleet, agent, at, in_force, halt) VALUES ($1, $2, $3, $4, true, $5::jsonb) ON CONFLICT DO NOTHING`, []any{h.ID, h.Fleet, h.Agent, h.At, string(data)},
			`SELECT coalesce((SELECT halt = $2::jsonb FROM laserbrain.halts WHERE id = $1), false)`, h.ID, string(data))
	})
}

// ReleaseHalt implements fleet.Halts.
func (s *Store) ReleaseHalt(ctx context.Context, fl, agent string, r fleet.Release) (fleet.Halt, error) {
	var out fleet.Halt
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT halt FROM laserbrain.halts WHERE fleet = $1 AND agent = $2 AND in_force FOR UPDATE`, fl, agent).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%s in fleet %s is not halted: %w", agent, fl, fleet.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var h fleet.Halt
		if err := json.Unmarshal(raw, &h); err != nil {
			return fmt.Errorf("halt on %s is damaged: %w", agent, err)
		}
		h.Released = &r
		data, err := json.Marshal(h)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE laserbrain.halts SET in_force = false, halt = $2::jsonb WHERE id = $1`, h.ID, string(data)); err != nil {
			return err
		}
		out = h
		return nil
	})
	return out, err
}

// ActiveHalt implements fleet.Halts.
func (s *Store) ActiveHalt(ctx context.Context, fl, agent string) (fleet.Halt, bool, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT halt FROM laserbrain.halts WHERE fleet = $1 AND agent = $2 AND in_force`, fl, agent).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return fleet.Halt{}, false, nil
	}
	if err != nil {
		return fleet.Halt{}, false, pgdb.Wrap(err, s.dsn)
	}
	var h fleet.Halt
	if err := json.Unmarshal(raw, &h); err != nil {
		return fleet.Halt{}, false, fmt.Errorf("halt on %s is damaged: %w", agent, err)
	}
	return h, true, nil
}

// ListHalts implements fleet.Halts.
func (s *Store) ListHalts(ctx context.Context, fl string) ([]fleet.Halt, error) {
	return listJSON[fleet.Halt](ctx, s, "a halt", `SELECT halt FROM laserbrain.halts WHERE $1 = '' OR fleet = $1 ORDER BY at, id`, fl)
}

// AnyHaltInForce implements fleet.Halts: one indexed read.
func (s *Store) AnyHaltInForce(ctx context.Context) (bool, error) {
	var any bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM laserbrain.halts WHERE in_force)`).Scan(&any)
	return any, pgdb.Wrap(err, s.dsn)
}

// journalKey is the per-fleet advisory lock key of the journal.
func journalKey(fl string) int64 {
	h := fnv.New64a()
	io.WriteString(h, "laserbrain journal ")
	io.WriteString(h, fl)
	return int64(h.Sum64())
}

// journalLock is off only in the test that shows what it prevents.
var journalLock = true

// AppendJournal implements fleet.Journal: one transaction takes the
// fleet's journal lock (pg_advisory_xact_lock: one writer per fleet at a
// time, released at commit), reads the head, seals the record after it,
// inserts it and moves the head. Without the lock two supervisors reading
// the same head would both write the next seq. A retry after a lost
// connection that finds its own record at the head returns it instead of
// appending it again.
func (s *Store) AppendJournal(ctx context.Context, rec fleet.JournalRecord) (fleet.JournalRecord, error) {
	if rec.Fleet == "" {
		return fleet.JournalRecord{}, errors.New("a journal record needs a fleet")
	}
	if rec.At == "" {
		rec.At = fleet.JournalTime(time.Now())
	}
	var out fleet.JournalRecord
	err := s.txTries(ctx, func(tx pgx.Tx, retry bool) error {
		var err error
		out, err = appendJournal(ctx, tx, rec, retry)
		return err
	})
	return out, err
}

// appendJournal appends rec inside tx, holding the fleet's journal lock
// until tx ends. retry: an earlier try may have appended rec already (its
// commit's answer was lost), in which case that record is returned.
func appendJournal(ctx context.Context, tx pgx.Tx, rec fleet.JournalRecord, retry bool) (fleet.JournalRecord, error) {
	if journalLock {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, journalKey(rec.Fleet)); err != nil {
			return fleet.JournalRecord{}, err
		}
	}
	var head fleet.JournalHead
	err := tx.QueryRow(ctx, `SELECT records, hash FROM laserbrain.journal_heads WHERE fleet = $1`, rec.Fleet).Scan(&head.Records, &head.Hash)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fleet.JournalRecord{}, err
	}
	if retry && head.Records > 0 {
		var raw string
		if err := tx.QueryRow(ctx, `SELECT raw FROM laserbrain.journal WHERE fleet = $1 AND seq = $2`, rec.Fleet, head.Records).Scan(&raw); err != nil {
			return fleet.JournalRecord{}, err
		}
		if mine, ok := sameAppend(raw, rec); ok {
			return mine, nil
		}
	}
	r := rec
	r.Seq = head.Records + 1
	sealed, err := fleet.SealJournal(r, head.Hash)
	if err != nil {
		return fleet.JournalRecord{}, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO laserbrain.journal (fleet, seq, raw) VALUES ($1, $2, $3)`, rec.Fleet, sealed.Seq, string(sealed.Raw)); err != nil {
		return fleet.JournalRecord{}, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO laserbrain.journal_heads (fleet, records, hash) VALUES ($1, $2, $3)
ON CONFLICT (fleet) DO UPDATE SET records = EXCLUDED.records, hash = EXCLUDED.hash`, rec.Fleet, sealed.Seq, sealed.Hash); err != nil {
		return fleet.JournalRecord{}, err
	}
	return sealed, nil
}

// sameAppend reports whether raw is rec as an earlier try appended it.
func sameAppend(raw string, rec fleet.JournalRecord) (fleet.JournalRecord, bool) {
	var got fleet.JournalRecord
	if json.Unmarshal([]byte(raw), &got) != nil {
		return fleet.JournalRecord{}, false
	}
	if got.At != rec.At || got.Kind != rec.Kind || got.Round != rec.Round || got.Agent != rec.Agent || got.Text != rec.Text ||
		!bytes.Equal(compact(got.Data), compact(rec.Data)) {
		return fleet.JournalRecord{}, false
	}
	got.Raw = []byte(raw)
	return got, true
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

// JournalRecords implements fleet.Journal: the bytes as stored.
func (s *Store) JournalRecords(ctx context.Context, fl string, after int64) ([]fleet.JournalRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT raw FROM laserbrain.journal WHERE fleet = $1 AND seq > $2 ORDER BY seq`, fl, after)
	if err != nil {
		return nil, pgdb.Wrap(err, s.dsn)
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, pgdb.Wrap(err, s.dsn)
	}
	out := make([]fleet.JournalRecord, 0, len(raws))
	for _, raw := range raws {
		var r fleet.JournalRecord
		if json.Unmarshal([]byte(raw), &r) != nil {
			r = fleet.JournalRecord{}
		}
		r.Raw = []byte(raw)
		out = append(out, r)
	}
	return out, nil
}

// JournalHead implements fleet.Journal.
func (s *Store) JournalHead(ctx context.Context, fl string) (fleet.JournalHead, error) {
	var h fleet.JournalHead
	err := s.pool.QueryRow(ctx, `SELECT records, hash FROM laserbrain.journal_heads WHERE fleet = $1`, fl).Scan(&h.Records, &h.Hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return fleet.JournalHead{}, nil
	}
	return h, pgdb.Wrap(err, s.dsn)
}

var _ fleet.Rounds = (*Store)(nil)

// roundsKey is the per-fleet advisory lock key of supervisor rounds.
func roundsKey(fl string) int64 {
	h := fnv.New64a()
	io.WriteString(h, "laserbrain rounds ")
	io.WriteString(h, fl)
	return int64(h.Sum64())
}

// StartRound implements fleet.Rounds: a session advisory lock on the
// fleet's rounds (pg_advisory_lock, waiting, given up with ctx), held on a
// pooled connection until the round ends; the last round is a row of
// laserbrain.rounds, moved by end in the same session before the lock is
// let go. A supervisor that dies mid-round drops its session, and with it
// the lock.
func (s *Store) StartRound(ctx context.Context, fl string) (int64, func(int64) error, error) {
	if fl == "" {
		return 0, nil, errors.New("a round needs a fleet")
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, nil, pgdb.Wrap(err, s.dsn)
	}
	key := roundsKey(fl)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		conn.Conn().Close(context.Background())
		conn.Release()
		return 0, nil, pgdb.Wrap(err, s.dsn)
	}
	var last int64
	err = conn.QueryRow(ctx, `SELECT last FROM laserbrain.rounds WHERE fleet = $1`, fl).Scan(&last)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		conn.Conn().Close(context.Background()) // the lock goes with the session
		conn.Release()
		return 0, nil, pgdb.Wrap(err, s.dsn)
	}
	end := func(round int64) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var err error
		if round > last { // a negative round writes nothing: the lock only goes
			_, err = conn.Exec(ctx, `INSERT INTO laserbrain.rounds (fleet, last) VALUES ($1, $2)
ON CONFLICT (fleet) DO UPDATE SET last = greatest(laserbrain.rounds.last, EXCLUDED.last)`, fl, round)
		}
		if err == nil && round >= 0 {
			// The journal's head as this round leaves it: one statement, so
			// the mark and the head it copies are one snapshot; it only
			// ever moves forward.
			_, err = conn.Exec(ctx, `INSERT INTO laserbrain.journal_marks (fleet, round, records, hash)
SELECT $1, $2, h.records, h.hash FROM laserbrain.journal_heads h WHERE h.fleet = $1
ON CONFLICT (fleet) DO UPDATE SET round = EXCLUDED.round, records = EXCLUDED.records, hash = EXCLUDED.hash
WHERE laserbrain.journal_marks.records <= EXCLUDED.records
  AND (laserbrain.journal_marks.round < EXCLUDED.round OR laserbrain.journal_marks.records < EXCLUDED.records)`, fl, max(round, last))
		}
		if err == nil {
			_, err = conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key)
		}
		if err != nil {
			conn.Conn().Close(context.Background())
		}
		conn.Release()
		return pgdb.Wrap(err, s.dsn)
	}
	return last, end, nil
}

// LastRound implements fleet.Rounds: the fleet's last round and the
// furthest journal head a round's end saw (journal_marks; a fleet whose
// rounds were counted before marks were kept has its round and no head).
func (s *Store) LastRound(ctx context.Context, fl string) (fleet.RoundMark, error) {
	var m fleet.RoundMark
	err := s.pool.QueryRow(ctx, `SELECT greatest(m.round, r.last), coalesce(m.records, 0), coalesce(m.hash, '')
FROM laserbrain.rounds r FULL JOIN laserbrain.journal_marks m ON m.fleet = r.fleet
WHERE coalesce(r.fleet, m.fleet) = $1`, fl).Scan(&m.Round, &m.Records, &m.Hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return fleet.RoundMark{}, nil
	}
	return m, pgdb.Wrap(err, s.dsn)
}

// JournalLocation implements fleet.JournalLocator: the table, the database
// (its password masked) and the fleet.
func (s *Store) JournalLocation(fl string) string {
	return fmt.Sprintf("table laserbrain.journal at %s, fleet %s", pgdsn.Mask(s.dsn), fl)
}

var _ fleet.JournalRestarter = (*Store)(nil)

// RestartJournal implements fleet.JournalRestarter in one transaction
// holding the fleet's rounds and journal locks: the fleet's journal rows,
// head and mark move to a fleet name of their own ("<fleet>#set-aside-
// <time>"), kept as evidence, and the new record, head and mark are
// inserted; laserbrain.rounds keeps the last round.
func (s *Store) RestartJournal(ctx context.Context, fl string, first fleet.JournalRecord) (fleet.JournalRecord, string, error) {
	if fl == "" || first.Kind == "" {
		return fleet.JournalRecord{}, "", errors.New("a journal record needs its fleet and kind")
	}
	first.Fleet, first.Seq = fl, 1
	if first.At == "" {
		first.At = fleet.JournalTime(time.Now())
	}
	rec, err := fleet.SealJournal(first, "")
	if err != nil {
		return fleet.JournalRecord{}, "", err
	}
	aside := fl + "#set-aside-" + time.Now().UTC().Format("20060102T150405.000000000")
	err = s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1), pg_advisory_xact_lock($2)`, roundsKey(fl), journalKey(fl)); err != nil {
			return err
		}
		var round int64
		if err := tx.QueryRow(ctx, `SELECT greatest(coalesce((SELECT last FROM laserbrain.rounds WHERE fleet = $1), 0),
	coalesce((SELECT round FROM laserbrain.journal_marks WHERE fleet = $1), 0))`, fl).Scan(&round); err != nil {
			return err
		}
		for _, table := range []string{"journal", "journal_heads", "journal_marks"} {
			if _, err := tx.Exec(ctx, `UPDATE laserbrain.`+table+` SET fleet = $2 WHERE fleet = $1`, fl, aside); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO laserbrain.journal (fleet, seq, raw) VALUES ($1, 1, $2)`, fl, string(rec.Raw)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO laserbrain.journal_heads (fleet, records, hash) VALUES ($1, 1, $2)`, fl, rec.Hash); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO laserbrain.journal_marks (fleet, round, records, hash) VALUES ($1, $2, 1, $3)`, fl, round, rec.Hash)
		return err
	})
	if err != nil {
		return fleet.JournalRecord{}, "", err
	}
	return rec, "table laserbrain.journal, fleet " + aside, nil
}
