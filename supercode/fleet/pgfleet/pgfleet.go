package pgfleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/pgdsn"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Component is the fleet's part of the schema.
var Component = pgdb.Component{Name: "fleet", Tables: []pgdb.Table{
	{Name: "fleet_runs", Columns: []string{"id", "fleet", "created", "run"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.fleet_runs (
	id      text PRIMARY KEY,
	fleet   text NOT NULL,
	created timestamptz NOT NULL,
	run     jsonb NOT NULL
)`, `CREATE INDEX IF NOT EXISTS fleet_runs_fleet ON laserbrain.fleet_runs (fleet, created, id)`}},
	{Name: "fleet_sessions", Columns: []string{"session", "run_id"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.fleet_sessions (
	session text PRIMARY KEY,
	run_id  text NOT NULL
)`}},
	{Name: "fleet_events", Columns: []string{"run_id", "id", "seq", "event"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.fleet_events (
	run_id text NOT NULL,
	id     text NOT NULL,
	seq    bigserial,
	event  jsonb NOT NULL,
	PRIMARY KEY (run_id, id)
)`, `CREATE INDEX IF NOT EXISTS fleet_events_order ON laserbrain.fleet_events (run_id, seq)`}},
	{Name: "authorizations", Columns: []string{"id", "fleet", "created", "authorization"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.authorizations (
	id              text PRIMARY KEY,
	fleet           text NOT NULL,
	created         timestamptz NOT NULL,
	"authorization" jsonb NOT NULL
)`, `CREATE INDEX IF NOT EXISTS authorizations_fleet ON laserbrain.authorizations (fleet, created)`}},
}}

// Store is fleet.Store in PostgreSQL.
type Store struct {
	pool    *pgxpool.Pool
	ownPool bool
	dsn     string
	// archiveReady: the journal's archive table is known to exist.
	archiveReady atomic.Bool
}

var _ fleet.Store = (*Store)(nil)

// New is a store on pool (the caller's to close); dsn names it in messages,
// without its password.
func New(pool *pgxpool.Pool, dsn string) *Store { return &Store{pool: pool, dsn: dsn} }

// Open makes a pool for dsn and a store on it; nothing connects until the
// store is used.
func Open(dsn string) (*Store, error) {
	pool, err := pgdb.NewPool(dsn, 4)
	if err != nil {
		return nil, err
	}
	return &Store{pool: pool, dsn: dsn, ownPool: true}, nil
}

// Init creates the fleet's tables where they are missing (the supervisor's
// too).
func Init(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	return pgdb.Init(ctx, pool, Component, SuperviseComponent)
}

// Where is the store's connection string with its password masked.
func (s *Store) Where() string { return pgdsn.Mask(s.dsn) }

// Close implements fleet.Store.
func (s *Store) Close() error {
	if s.ownPool {
		s.pool.Close()
	}
	return nil
}

func (s *Store) tx(ctx context.Context, f func(pgx.Tx) error) error {
	return pgdb.Wrap(pgdb.Tx(ctx, s.pool, f), s.dsn)
}

// txTries is tx telling f whether it runs again, after a try that lost its
// connection (and may have made its change before it did).
func (s *Store) txTries(ctx context.Context, f func(tx pgx.Tx, retry bool) error) error {
	tries := 0
	return s.tx(ctx, func(tx pgx.Tx) error {
		tries++
		return f(tx, tries > 1)
	})
}

// insertOnce runs insert, an INSERT … ON CONFLICT DO NOTHING, in tx: a row
// already in its place is exists, except on a retry, where same (a query of
// one boolean) says whether it is the row the lost try put.
func insertOnce(ctx context.Context, tx pgx.Tx, retry bool, exists error, insert string, args []any, same string, sameArgs ...any) error {
	tag, err := tx.Exec(ctx, insert, args...)
	if err != nil || tag.RowsAffected() == 1 {
		return err
	}
	if retry {
		var ours bool
		if err := tx.QueryRow(ctx, same, sameArgs...).Scan(&ours); err != nil {
			return err
		}
		if ours {
			return nil
		}
	}
	return exists
}

// listJSON runs query, whose one column is a JSON document, and reads each
// row's into a T; what names one in the error for a document that does not
// read ("a halt").
func listJSON[T any](ctx context.Context, s *Store, what, query string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, pgdb.Wrap(err, s.dsn)
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, pgdb.Wrap(err, s.dsn)
	}
	out := make([]T, 0, len(raws))
	for _, raw := range raws {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("%s is damaged: %w", what, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// CreateRun implements fleet.Runs.
func (s *Store) CreateRun(ctx context.Context, r fleet.Run) error {
	if err := fleet.ValidateRunID(r.ID); err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.txTries(ctx, func(tx pgx.Tx, retry bool) error {
		err := insertOnce(ctx, tx, retry, fmt.Errorf("run %s: %w", r.ID, fleet.ErrExists),
			`INSERT INTO laserbrain.fleet_runs (id, fleet, created, run) VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT DO NOTHING`, []any{r.ID, r.Fleet, r.Created, string(data)},
			`SELECT coalesce((SELECT run = $2::jsonb FROM laserbrain.fleet_runs WHERE id = $1), false)`, r.ID, string(data))
		if err != nil {
			return err
		}
		return indexSessions(ctx, tx, r.ID, r.Sessions)
	})
}

func indexSessions(ctx context.Context, tx pgx.Tx, run string, sessions []string) error {
	for _, sess := range sessions {
		if err := laserbrain.ValidateRunID(sess); err != nil {
			return fmt.Errorf("session id: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO laserbrain.fleet_sessions (session, run_id) VALUES ($1, $2)
ON CONFLICT (session) DO UPDATE SET run_id = EXCLUDED.run_id`, sess, run); err != nil {
			return err
		}
	}
	return nil
}

func scanRun(raw []byte) (fleet.Run, error) {
	var r fleet.Run
	err := json.Unmarshal(raw, &r)
	return r, err
}

// Run implements fleet.Runs.
func (s *Store) Run(ctx context.Context, id string) (fleet.Run, error) {
	if err := fleet.ValidateRunID(id); err != nil {
		return fleet.Run{}, err
	}
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT run FROM laserbrain.fleet_runs WHERE id = $1`, id).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return fleet.Run{}, fmt.Errorf("run %s: %w", id, fleet.ErrNotFound)
	}
	if err != nil {
		return fleet.Run{}, pgdb.Wrap(err, s.dsn)
	}
	return scanRun(raw)
}

// UpdateRun implements fleet.Runs: the row is locked for the read, f and
// the write. f may run again when the connection is lost on the way.
func (s *Store) UpdateRun(ctx context.Context, id string, f func(*fleet.Run) error) (fleet.Run, error) {
	if err := fleet.ValidateRunID(id); err != nil {
		return fleet.Run{}, err
	}
	var out fleet.Run
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT run FROM laserbrain.fleet_runs WHERE id = $1 FOR UPDATE`, id).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("run %s: %w", id, fleet.ErrNotFound)
		}
		if err != nil {
			return err
		}
		r, err := scanRun(raw)
		if err != nil {
			return fmt.Errorf("run %s is damaged: %w", id, err)
		}
		before := len(r.Sessions)
		if err := f(&r); err != nil {
			return err
		}
		r.ID = id
		data, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE laserbrain.fleet_runs SET fleet = $2, created = $3, run = $4::jsonb WHERE id = $1`, id, r.Fleet, r.Created, string(data)); err != nil {
			return err
		}
		out = r
		return indexSessions(ctx, tx, id, r.Sessions[min(before, len(r.Sessions)):])
	})
	return out, err
}

// AttachSession implements fleet.Runs.
func (s *Store) AttachSession(ctx context.Context, id, session string) error {
	if err := laserbrain.ValidateRunID(session); err != nil {
		return fmt.Errorf("session id: %w", err)
	}
	_, err := s.UpdateRun(ctx, id, func(r *fleet.Run) error {
		r.AddSession(session)
		return nil
	})
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error { return indexSessions(ctx, tx, id, []string{session}) })
}

// RunForSession implements fleet.Runs.
func (s *Store) RunForSession(ctx context.Context, session string) (fleet.Run, error) {
	if err := laserbrain.ValidateRunID(session); err != nil {
		return fleet.Run{}, fmt.Errorf("session id: %w", err)
	}
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT r.run FROM laserbrain.fleet_sessions s JOIN laserbrain.fleet_runs r ON r.id = s.run_id WHERE s.session = $1`, session).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return fleet.Run{}, fmt.Errorf("session %s: %w", session, fleet.ErrNotFound)
	}
	if err != nil {
		return fleet.Run{}, pgdb.Wrap(err, s.dsn)
	}
	return scanRun(raw)
}

// ListRuns implements fleet.Runs.
func (s *Store) ListRuns(ctx context.Context, f fleet.RunFilter) ([]fleet.Run, error) {
	return listJSON[fleet.Run](ctx, s, "a run", `SELECT run FROM laserbrain.fleet_runs WHERE $1 = '' OR fleet = $1 ORDER BY created, id`, f.Fleet)
}

// maxEvent bounds one stored event, as the local store does.
const maxEvent = 64 << 10

// AppendEvent implements fleet.Events.
func (s *Store) AppendEvent(ctx context.Context, run string, e fleet.RunEvent) (bool, error) {
	n, err := s.AppendEvents(ctx, run, []fleet.RunEvent{e})
	return n == 1, err
}

// AppendEvents implements fleet.Events: one transaction for the batch.
func (s *Store) AppendEvents(ctx context.Context, run string, es []fleet.RunEvent) (int, error) {
	if err := fleet.ValidateRunID(run); err != nil {
		return 0, err
	}
	if len(es) == 0 {
		return 0, nil
	}
	ids := make([]string, len(es))
	datas := make([]string, len(es))
	now := time.Now().UTC()
	for i, e := range es {
		if e.ID == "" {
			e.ID = fleet.NewID()
		}
		if e.At.IsZero() {
			e.At = now
		}
		data, err := json.Marshal(e)
		if err != nil {
			return 0, err
		}
		if len(data) > maxEvent {
			e.Result = nil
			if len(e.Text) > maxEvent/2 {
				e.Text = e.Text[:maxEvent/2] + "…"
			}
			if data, err = json.Marshal(e); err != nil {
				return 0, err
			}
		}
		ids[i], datas[i] = e.ID, string(data)
	}
	added := 0
	err := s.tx(ctx, func(tx pgx.Tx) error {
		added = 0
		b := &pgx.Batch{}
		for i := range ids {
			b.Queue(`INSERT INTO laserbrain.fleet_events (run_id, id, event) VALUES ($1, $2, $3::jsonb) ON CONFLICT DO NOTHING`, run, ids[i], datas[i])
		}
		br := tx.SendBatch(ctx, b)
		for range ids {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return err
			}
			added += int(tag.RowsAffected())
		}
		return br.Close()
	})
	return added, err
}

// Events implements fleet.Events.
func (s *Store) Events(ctx context.Context, run string) ([]fleet.RunEvent, error) {
	if err := fleet.ValidateRunID(run); err != nil {
		return nil, err
	}
	evs, err := listJSON[fleet.RunEvent](ctx, s, "run "+run+": an event", `SELECT event FROM laserbrain.fleet_events WHERE run_id = $1 ORDER BY seq`, run)
	if len(evs) == 0 {
		return nil, err // no events: nil, as the local store says it
	}
	return evs, nil
}

// AddAuthorization implements fleet.Authorizations.
func (s *Store) AddAuthorization(ctx context.Context, a fleet.Authorization) error {
	if err := laserbrain.ValidateRunID(a.ID); err != nil {
		return fmt.Errorf("authorization id: %w", err)
	}
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.txTries(ctx, func(tx pgx.Tx, retry bool) error {
		return insertOnce(ctx, tx, retry, fmt.Errorf("authorization %s: %w", a.ID, fleet.ErrExists),
			`INSERT INTO laserbrain.authorizations (id, fleet, created, "authorization") VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT DO NOTHING`, []any{a.ID, a.Fleet, a.Created, string(data)},
			`SELECT coalesce((SELECT "authorization" = $2::jsonb FROM laserbrain.authorizations WHERE id = $1), false)`, a.ID, string(data))
	})
}

// ListAuthorizations implements fleet.Authorizations.
func (s *Store) ListAuthorizations(ctx context.Context, fl string) ([]fleet.Authorization, error) {
	return listJSON[fleet.Authorization](ctx, s, "an authorization", `SELECT "authorization" FROM laserbrain.authorizations WHERE $1 = '' OR fleet = $1 ORDER BY created, id`, fl)
}

func (s *Store) updateAuthorization(ctx context.Context, id string, f func(*fleet.Authorization) (changed bool, err error)) error {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return fmt.Errorf("authorization id: %w", err)
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT "authorization" FROM laserbrain.authorizations WHERE id = $1 FOR UPDATE`, id).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("authorization %s: %w", id, fleet.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var a fleet.Authorization
		if err := json.Unmarshal(raw, &a); err != nil {
			return fmt.Errorf("authorization %s is damaged: %w", id, err)
		}
		changed, err := f(&a)
		if err != nil || !changed {
			return err
		}
		data, err := json.Marshal(a)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE laserbrain.authorizations SET "authorization" = $2::jsonb WHERE id = $1`, id, string(data))
		return err
	})
}

// UseAuthorization implements fleet.Authorizations. A use retried after a
// lost connection whose first try committed finds itself recorded (same
// time, same run) and is not spent again.
func (s *Store) UseAuthorization(ctx context.Context, id string, u fleet.Use) error {
	return s.updateAuthorization(ctx, id, func(a *fleet.Authorization) (bool, error) {
		for _, x := range a.Used {
			if x.At.Equal(u.At) && x.Run == u.Run {
				return false, nil
			}
		}
		if !a.Live(u.At) {
			return false, fmt.Errorf("authorization %s: %w", id, fleet.ErrSpent)
		}
		a.Used = append(a.Used, u)
		return true, nil
	})
}

// RevokeAuthorization implements fleet.Authorizations.
func (s *Store) RevokeAuthorization(ctx context.Context, id string, t time.Time) error {
	return s.updateAuthorization(ctx, id, func(a *fleet.Authorization) (bool, error) {
		if !a.Revoked.IsZero() {
			return false, nil
		}
		a.Revoked = t
		return true, nil
	})
}

// Version implements fleet.Versioner in one cheap query: the events' and
// the messages' sequences (every event and message appended moves one),
// the fleet's journal head, its halts in force, and its runs' row
// versions (every update of a run writes a new one).
func (s *Store) Version(ctx context.Context, fl string) (string, error) {
	var v string
	err := s.pool.QueryRow(ctx, `
SELECT coalesce(pg_sequence_last_value('laserbrain.fleet_events_seq_seq'::regclass), 0)::text
	|| '/' || coalesce(pg_sequence_last_value('laserbrain.voice_seq_seq'::regclass), 0)::text
	|| '/' || coalesce((SELECT records FROM laserbrain.journal_heads WHERE fleet = $1), 0)::text
	|| '/' || (SELECT count(*) FROM laserbrain.halts WHERE fleet = $1 AND in_force)::text
	|| '/' || (SELECT count(*) || ':' || coalesce(sum(hashtext(xmin::text)::bigint), 0) FROM laserbrain.fleet_runs WHERE fleet = $1)`, fl).Scan(&v)
	if err != nil {
		return "", pgdb.Wrap(err, s.dsn)
	}
	return v, nil
}
