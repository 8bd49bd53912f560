package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/pgdsn"
	"github.com/laserkit/laserkit/laserbrain"
)

// Component is laserbrain's part of the schema: runs, their steps, the
// context store, the ids of flushes and imports already applied, and the
// fleets' links.
var Component = pgdb.Component{Name: "laserbrain", Tables: []pgdb.Table{
	{Name: "runs", Columns: []string{"id", "state", "step_count", "version", "save_id", "created", "updated"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.runs (
	id         text PRIMARY KEY,
	state      jsonb NOT NULL,
	step_count integer NOT NULL,
	version    bigint NOT NULL,
	save_id    text NOT NULL,
	created    timestamptz NOT NULL DEFAULT now(),
	updated    timestamptz NOT NULL DEFAULT now()
)`}},
	{Name: "steps", Columns: []string{"run_id", "n", "record"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.steps (
	run_id text NOT NULL,
	n      integer NOT NULL,
	record jsonb NOT NULL,
	PRIMARY KEY (run_id, n)
)`}},
	{Name: "contexts", Columns: []string{"id", "entry", "updated"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.contexts (
	id      text PRIMARY KEY,
	entry   jsonb NOT NULL,
	updated timestamptz NOT NULL DEFAULT now()
)`}},
	{Name: "applied", Columns: []string{"id", "at"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.applied (
	id text PRIMARY KEY,
	at timestamptz NOT NULL DEFAULT now()
)`}},
	{Name: "link", Columns: []string{"id", "seq", "fleet", "line", "at"}, DDL: []string{`
CREATE TABLE IF NOT EXISTS laserbrain.link (
	id    text PRIMARY KEY,
	seq   bigserial,
	fleet text NOT NULL,
	line  text NOT NULL,
	at    timestamptz NOT NULL DEFAULT now()
)`, `CREATE INDEX IF NOT EXISTS link_fleet ON laserbrain.link (fleet, seq)`}},
}}

// Evidence is the machine's evidence counters, which stay on the machine
// (localstore.OpenEvidence): a shared database would let one machine's
// tool calls corroborate another's checks.
type Evidence interface {
	laserbrain.EvidenceSource
	Record(laserbrain.Event) error
}

// Options configures a Store.
type Options struct {
	// Evidence is the machine's evidence counters (nil: none, every check
	// reads as dark).
	Evidence Evidence
	// LockTimeout is how long OpenRun waits for a run another process
	// holds (0: 10 s).
	LockTimeout time.Duration
	// LongLived: Open's pool prepares each statement once per connection
	// (pgdb.NewLongLivedPool), for a process that sends the same ones many
	// times (a stream).
	LongLived bool
}

// Store is laserbrain.Store in PostgreSQL.
type Store struct {
	pool     *pgxpool.Pool
	ownPool  bool
	dsn      string
	opts     Options
	locks    *locker
	contexts *contexts
	closed   atomic.Bool
}

var (
	_ laserbrain.Store      = (*Store)(nil)
	_ laserbrain.Exporter   = (*Store)(nil)
	_ laserbrain.Importer   = (*Store)(nil)
	_ laserbrain.BatchSaver = (*Store)(nil)
)

// New is a store on pool (which stays the caller's to close); dsn is the
// pool's connection string, for messages (its password is never shown).
func New(pool *pgxpool.Pool, dsn string, opts Options) *Store {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 10 * time.Second
	}
	s := &Store{pool: pool, dsn: dsn, opts: opts}
	s.locks = &locker{pool: pool, held: map[string]bool{}}
	s.contexts = &contexts{s: s}
	return s
}

// Open makes a pool for dsn and a store on it; nothing connects until the
// store is used.
func Open(dsn string, opts Options) (*Store, error) {
	newPool := pgdb.NewPool
	if opts.LongLived {
		newPool = pgdb.NewLongLivedPool
	}
	pool, err := newPool(dsn, 4)
	if err != nil {
		return nil, err
	}
	s := New(pool, dsn, opts)
	s.ownPool = true
	return s, nil
}

// Where is the store's connection string with its password masked.
func (s *Store) Where() string { return pgdsn.Mask(s.dsn) }

// Init creates laserbrain's tables where they are missing.
func Init(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	return pgdb.Init(ctx, pool, Component)
}

func (s *Store) wrap(err error) error { return pgdb.Wrap(err, s.dsn) }

// ErrTakenOver is wrapped by Save when another process saved the run since
// this handle read it (possible only when the lock was lost with its
// connection): nothing is written, and the run must be opened again.
var ErrTakenOver = errors.New("another process saved the run meanwhile")

// OpenRun implements laserbrain.Store. The run is held with a session
// advisory lock on the store's lock connection.
func (s *Store) OpenRun(ctx context.Context, id string) (laserbrain.RunHandle, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, err
	}
	if err := s.locks.lock(ctx, id, s.opts.LockTimeout); err != nil {
		if errors.Is(err, errLockHeld) {
			return nil, fmt.Errorf("run %s is in use: %w", id, err)
		}
		return nil, s.wrap(err) // the database, not another process
	}
	h := &runHandle{s: s, id: id}
	var state []byte
	err := s.locks.with(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT state, version, step_count FROM laserbrain.runs WHERE id = $1`, id).Scan(&state, &h.version, &h.count)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		h.run = laserbrain.NewRun(laserbrain.RunOptions{ID: id, Contexts: s.contexts, Evidence: s.evidenceSource()})
		h.created = true
	case err != nil:
		s.locks.unlock(id)
		return nil, s.wrap(fmt.Errorf("run %s: %w", id, err))
	default:
		if h.run, err = s.decode(id, state); err != nil {
			s.locks.unlock(id)
			return nil, err
		}
	}
	return h, nil
}

func (s *Store) evidenceSource() laserbrain.EvidenceSource {
	if s.opts.Evidence == nil {
		return nil
	}
	return s.opts.Evidence
}

func (s *Store) decode(id string, state []byte) (*laserbrain.Run, error) {
	return laserbrain.DecodeRun(id, state, s.contexts, s.evidenceSource())
}

// ReadRun implements laserbrain.Store: the run and its history, read in
// one transaction.
func (s *Store) ReadRun(ctx context.Context, id string) (*laserbrain.Run, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, err
	}
	var (
		state []byte
		hist  []laserbrain.StepRecord
	)
	// One statement is one snapshot: the history matches the state.
	var steps []byte
	err := s.pool.QueryRow(ctx, `SELECT r.state, coalesce((SELECT json_agg(s.record ORDER BY s.n) FROM laserbrain.steps s
	WHERE s.run_id = r.id AND s.n <= r.step_count), '[]') FROM laserbrain.runs r WHERE r.id = $1`, id).Scan(&state, &steps)
	if err == nil {
		if uerr := json.Unmarshal(steps, &hist); uerr != nil {
			return nil, fmt.Errorf("run %s: its steps are damaged: %w", id, uerr)
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w (in %s)", id, laserbrain.ErrNoRun, s.Where())
	}
	if err != nil {
		return nil, s.wrap(fmt.Errorf("run %s: %w", id, err))
	}
	r, err := s.decode(id, state)
	if err != nil {
		return nil, err
	}
	r.LoadHistory(hist)
	return r, nil
}

// Contexts implements laserbrain.Store.
func (s *Store) Contexts() laserbrain.ContextStore { return s.contexts }

// Evidence implements laserbrain.Store.
func (s *Store) Evidence() laserbrain.EvidenceSource { return s.evidenceSource() }

// RecordToolEvent implements laserbrain.Store: into the machine's counters.
func (s *Store) RecordToolEvent(ctx context.Context, ev laserbrain.Event) error {
	if s.opts.Evidence == nil {
		return nil
	}
	return s.opts.Evidence.Record(ev)
}

// Flush implements laserbrain.Store: context records no save carried (of
// runs stepped outside this store's handles) are applied, once, under a
// flush id.
func (s *Store) Flush(ctx context.Context) error { return s.contexts.flush(ctx) }

// Close implements laserbrain.Store.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.Flush(ctx)
	s.locks.close()
	if s.ownPool {
		s.pool.Close()
	}
	return err
}

// RunIDs implements laserbrain.Exporter.
func (s *Store) RunIDs(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM laserbrain.runs ORDER BY id`)
	if err != nil {
		return nil, s.wrap(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, s.wrap(err)
}

// RecentRunIDs lists the runs, the most recently saved first.
func (s *Store) RecentRunIDs(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM laserbrain.runs ORDER BY updated DESC, id`)
	if err != nil {
		return nil, s.wrap(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, s.wrap(err)
}

// ContextEntries implements laserbrain.Exporter.
func (s *Store) ContextEntries(ctx context.Context) (map[string]laserbrain.ContextEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, entry FROM laserbrain.contexts`)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	out := map[string]laserbrain.ContextEntry{}
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, s.wrap(err)
		}
		var e laserbrain.ContextEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("context %s: %w", id, err)
		}
		out[id] = e
	}
	return out, s.wrap(rows.Err())
}

// ImportRun implements laserbrain.Importer.
func (s *Store) ImportRun(ctx context.Context, r *laserbrain.Run) error {
	state, err := json.Marshal(r)
	if err != nil {
		return err
	}
	steps := r.Steps()
	if len(steps) != r.StepCount() {
		return fmt.Errorf("run %s: %d steps in its history, %d in its state: import it with its whole history", r.ID(), len(steps), r.StepCount())
	}
	ns, recs := encodeSteps(steps)
	saveID := newID()
	return s.wrap(pgdb.Tx(ctx, s.pool, func(tx pgx.Tx) error {
		var sid string
		err := tx.QueryRow(ctx, `SELECT save_id FROM laserbrain.runs WHERE id = $1`, r.ID()).Scan(&sid)
		if err == nil {
			if sid == saveID {
				return nil // this import, committed before a lost connection
			}
			return fmt.Errorf("run %s: %w", r.ID(), laserbrain.ErrRunExists)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO laserbrain.runs (id, state, step_count, version, save_id) VALUES ($1, $2::jsonb, $3, 1, $4)`,
			r.ID(), string(state), len(steps), saveID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, insertSteps, r.ID(), ns, recs)
		return err
	}))
}

// ImportContexts implements laserbrain.Importer.
func (s *Store) ImportContexts(ctx context.Context, source string, entries map[string]laserbrain.ContextEntry) (bool, error) {
	imported := false
	err := pgdb.Tx(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO laserbrain.applied (id) VALUES ($1) ON CONFLICT DO NOTHING`, "import:"+source)
		if err != nil {
			return err
		}
		imported = tag.RowsAffected() == 1
		if !imported {
			return nil
		}
		ids := make([]string, 0, len(entries))
		for id := range entries {
			ids = append(ids, id)
		}
		return updateContexts(ctx, tx, ids, func(id string, e *laserbrain.ContextEntry) { e.Combine(entries[id]) })
	})
	return imported, s.wrap(err)
}

const insertSteps = `INSERT INTO laserbrain.steps (run_id, n, record)
SELECT $1, u.n, u.r::jsonb FROM unnest($2::int[], $3::text[]) AS u(n, r)
ON CONFLICT (run_id, n) DO NOTHING RETURNING n`

func encodeSteps(steps []laserbrain.StepRecord) ([]int32, []string) {
	ns := make([]int32, len(steps))
	recs := make([]string, len(steps))
	var buf []byte
	for i := range steps {
		ns[i] = int32(steps[i].N)
		buf = steps[i].AppendJSON(buf[:0])
		recs[i] = string(buf)
	}
	return ns, recs
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type runHandle struct {
	s       *Store
	id      string
	run     *laserbrain.Run
	created bool
	closed  bool
	version int64 // the run's version as this handle last read or wrote it (0: not stored)
	count   int   // steps stored
}

func (h *runHandle) Run() *laserbrain.Run { return h.run }
func (h *runHandle) Created() bool        { return h.created }

// Save implements laserbrain.RunHandle: one transaction writes the run's
// state, its new steps and their context records. The run's row is locked
// and its version checked (a handle whose lock went with its connection
// cannot overwrite another's save); steps are keyed by (run, n) and the
// save by a save id chosen before the first try, so a retry after a lost
// connection neither counts a step twice nor applies its context record
// twice. Saved steps leave memory, as in the local store.
func (h *runHandle) Save(ctx context.Context) error {
	if h.closed {
		return fmt.Errorf("run %s: saved after close", h.id)
	}
	sv, err := h.prepare()
	if err != nil {
		return err
	}
	err = h.s.locks.with(ctx, func(conn *pgx.Conn) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { return sv.apply(ctx, tx) })
	})
	if err != nil {
		return h.s.wrap(fmt.Errorf("run %s: %w", h.id, err))
	}
	sv.done()
	return nil
}

// SaveRuns implements laserbrain.BatchSaver: the handles' saves in one
// transaction (in run id order, as every save takes its row locks), their
// context records added up per context and written once each. It is Save
// for every handle, all or none, for one commit (and one fsync) instead of
// one per run.
func (s *Store) SaveRuns(ctx context.Context, hs []laserbrain.RunHandle) error {
	svs := make([]*save, 0, len(hs))
	for _, rh := range hs {
		h, ok := rh.(*runHandle)
		if !ok || h.s != s {
			return fmt.Errorf("run %s: not held by this store", rh.Run().ID())
		}
		if h.closed {
			return fmt.Errorf("run %s: saved after close", h.id)
		}
		sv, err := h.prepare()
		if err != nil {
			return err
		}
		svs = append(svs, sv)
	}
	slices.SortFunc(svs, func(a, b *save) int { return strings.Compare(a.h.id, b.h.id) })
	err := s.locks.with(ctx, func(conn *pgx.Conn) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			var apply []laserbrain.ContextStep
			for _, sv := range svs {
				steps, err := sv.applyRun(ctx, tx)
				if err != nil {
					return fmt.Errorf("run %s: %w", sv.h.id, err)
				}
				apply = append(apply, steps...)
			}
			return applySteps(ctx, tx, apply)
		})
	})
	if err != nil {
		return s.wrap(err)
	}
	for _, sv := range svs {
		sv.done()
	}
	return nil
}

// save is one save of a handle, ready to be applied in a transaction as
// often as a lost connection makes it necessary.
type save struct {
	h        *runHandle
	state    []byte
	ns       []int32
	recs     []string
	id       string // the save id
	count    int    // steps after the save
	ctxSteps []laserbrain.ContextStep
}

func (h *runHandle) prepare() (*save, error) {
	state, err := json.Marshal(h.run)
	if err != nil {
		return nil, err
	}
	steps := h.run.UnsavedHistory()
	sv := &save{h: h, state: state, id: newID(), count: h.count + len(steps)}
	sv.ns, sv.recs = encodeSteps(steps)
	sv.ctxSteps = h.s.contexts.take(h.id, h.count+1, sv.count)
	return sv, nil
}

// apply is the save's transaction.
func (sv *save) apply(ctx context.Context, tx pgx.Tx) error {
	steps, err := sv.applyRun(ctx, tx)
	if err != nil {
		return err
	}
	return applySteps(ctx, tx, steps)
}

// applyRun writes the run's row and its new steps in tx, and returns the
// context records of the steps it inserted (to be applied in the same
// transaction).
func (sv *save) applyRun(ctx context.Context, tx pgx.Tx) ([]laserbrain.ContextStep, error) {
	h := sv.h
	var version int64
	var sid string
	err := tx.QueryRow(ctx, `SELECT version, save_id FROM laserbrain.runs WHERE id = $1 FOR UPDATE`, h.id).Scan(&version, &sid)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if h.version != 0 {
			return nil, fmt.Errorf("it is gone from the store")
		}
		tag, err := tx.Exec(ctx, `INSERT INTO laserbrain.runs (id, state, step_count, version, save_id) VALUES ($1, $2::jsonb, $3, 1, $4) ON CONFLICT DO NOTHING`,
			h.id, string(sv.state), sv.count, sv.id)
		if err != nil {
			return nil, err
		}
		if tag.RowsAffected() == 0 {
			return nil, ErrTakenOver
		}
	case err != nil:
		return nil, err
	case sid == sv.id:
		return nil, nil // committed by the try that lost its connection
	case version != h.version:
		return nil, ErrTakenOver
	default:
		if _, err := tx.Exec(ctx, `UPDATE laserbrain.runs SET state = $2::jsonb, step_count = $3, version = version + 1, save_id = $4, updated = now() WHERE id = $1`,
			h.id, string(sv.state), sv.count, sv.id); err != nil {
			return nil, err
		}
	}
	if len(sv.ns) == 0 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, insertSteps, h.id, sv.ns, sv.recs)
	if err != nil {
		return nil, err
	}
	inserted, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	var apply []laserbrain.ContextStep
	for _, st := range sv.ctxSteps {
		if slices.Contains(inserted, int32(st.N)) {
			apply = append(apply, st)
		}
	}
	return apply, nil
}

// done records a committed save on the handle.
func (sv *save) done() {
	h := sv.h
	h.s.contexts.drop(sv.ctxSteps)
	h.version, h.count = h.version+1, sv.count
	h.run.HistorySaved()
	h.run.ReleaseSavedHistory()
}

func (h *runHandle) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	h.s.locks.unlock(h.id)
	return nil
}

// locker holds runs for this process with session advisory locks on one
// connection taken from the pool while any run is held (and given back
// when none is), so a stream holding hundreds of runs uses one connection
// for all of them, and the server drops them all if this process dies or
// the connection breaks. The held runs' reads and saves go over the same
// connection: a hook that opens a run, steps and saves it uses one
// connection in all. Session locks are re-entrant within a session, so the
// runs held in this process are tracked here too: two handles of one
// process exclude each other as well.
type locker struct {
	pool *pgxpool.Pool
	mu   sync.Mutex
	conn *pgxpool.Conn
	held map[string]bool
}

// lockKey is the run's advisory lock key: 64 bits of a hash of the id, in
// a space of its own ("laserbrain run ").
func lockKey(id string) int64 {
	h := fnv.New64a()
	io.WriteString(h, "laserbrain run ")
	io.WriteString(h, id)
	return int64(h.Sum64())
}

// errLockHeld: another process holds the run's lock.
var errLockHeld = errors.New("still held by another process")

func (l *locker) lock(ctx context.Context, id string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := l.try(ctx, id)
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %s", errLockHeld, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// connLocked makes sure the locker has a live connection. A new one (the
// old one broke) takes the locks of the runs still held again; one that
// another process took meanwhile stays lost, and its handle's save is
// refused by the version check.
func (l *locker) connLocked(ctx context.Context) error {
	if l.conn != nil && !l.conn.Conn().IsClosed() {
		return nil
	}
	if l.conn != nil {
		l.conn.Release()
		l.conn = nil
	}
	c, err := l.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	l.conn = c
	for id := range l.held {
		if _, err := c.Exec(ctx, `SELECT pg_try_advisory_lock($1)`, lockKey(id)); err != nil {
			l.dropLocked()
			return err
		}
	}
	return nil
}

// dropLocked closes a connection in doubt: its locks go with it.
func (l *locker) dropLocked() {
	if l.conn == nil {
		return
	}
	l.conn.Conn().Close(context.Background())
	l.conn.Release()
	l.conn = nil
}

func (l *locker) try(ctx context.Context, id string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[id] {
		return false, nil
	}
	if err := l.connLocked(ctx); err != nil {
		return false, err
	}
	var ok bool
	if err := l.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockKey(id)).Scan(&ok); err != nil {
		l.dropLocked()
		return false, err
	}
	if ok {
		l.held[id] = true
	} else if len(l.held) == 0 {
		l.conn.Release()
		l.conn = nil
	}
	return ok, nil
}

// with runs f on the locker's connection (a held run's read or save). When
// the connection is lost on the way, f runs again on a new one (with the
// locks taken again), as pgdb.Tx does on the pool.
func (l *locker) with(ctx context.Context, f func(conn *pgx.Conn) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	for attempt := 0; ; attempt++ {
		if err = l.connLocked(ctx); err != nil {
			return err
		}
		err = f(l.conn.Conn())
		if err == nil || !pgdb.Unreachable(err) || attempt >= pgdb.Retries || ctx.Err() != nil {
			return err
		}
		l.dropLocked()
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
		}
	}
}

func (l *locker) unlock(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held[id] {
		return
	}
	delete(l.held, id)
	if l.conn == nil || l.conn.Conn().IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, lockKey(id)); err != nil {
		// The connection is in doubt: closing it releases every lock it
		// held, which saves then check through the run's version.
		l.dropLocked()
		return
	}
	if len(l.held) == 0 {
		l.conn.Release()
		l.conn = nil
	}
}

func (l *locker) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropLocked()
	clear(l.held)
}

// contexts is the context store in the contexts table. Records wait in
// memory until the save of their step carries them (same transaction), or
// a flush.
type contexts struct {
	s       *Store
	mu      sync.Mutex
	pending []laserbrain.ContextStep
}

// RecordStep implements laserbrain.ContextStore.
func (c *contexts) RecordStep(st laserbrain.ContextStep) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, st)
	return nil
}

// Context implements laserbrain.ContextStore: the row, with this process's
// pending records merged in.
func (c *contexts) Context(id string) (laserbrain.ContextEntry, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var e laserbrain.ContextEntry
	ok := false
	var raw []byte
	err := c.s.pool.QueryRow(ctx, `SELECT entry FROM laserbrain.contexts WHERE id = $1`, id).Scan(&raw)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return e, false, c.s.wrap(err)
	default:
		if err := json.Unmarshal(raw, &e); err != nil {
			return e, false, fmt.Errorf("context %s: %w", id, err)
		}
		ok = e.ID != ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var d laserbrain.ContextDelta
	for _, st := range c.pending {
		if st.ID == id {
			d.Add(st)
		}
	}
	if d.Checks > 0 {
		e.Merge(&d)
		ok = true
	}
	return e, ok, nil
}

// take returns the pending records of run's steps lo..hi (they stay
// pending until drop).
func (c *contexts) take(run string, lo, hi int) []laserbrain.ContextStep {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []laserbrain.ContextStep
	for _, st := range c.pending {
		if st.Run == run && st.N >= lo && st.N <= hi {
			out = append(out, st)
		}
	}
	return out
}

// drop removes records a save applied.
func (c *contexts) drop(done []laserbrain.ContextStep) {
	if len(done) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = slices.DeleteFunc(c.pending, func(st laserbrain.ContextStep) bool {
		for _, d := range done {
			if d.Run == st.Run && d.N == st.N && d.ID == st.ID {
				return true
			}
		}
		return false
	})
}

func (c *contexts) flush(ctx context.Context) error {
	c.mu.Lock()
	steps := slices.Clone(c.pending)
	c.mu.Unlock()
	if len(steps) == 0 {
		return nil
	}
	id := "flush:" + newID()
	err := pgdb.Tx(ctx, c.s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO laserbrain.applied (id) VALUES ($1) ON CONFLICT DO NOTHING`, id)
		if err != nil || tag.RowsAffected() == 0 {
			return err // applied by the try that lost its connection
		}
		return applySteps(ctx, tx, steps)
	})
	if err != nil {
		return c.s.wrap(fmt.Errorf("context records: %w", err))
	}
	c.drop(steps)
	return nil
}

// applySteps adds context records to their rows.
func applySteps(ctx context.Context, tx pgx.Tx, steps []laserbrain.ContextStep) error {
	if len(steps) == 0 {
		return nil
	}
	deltas := map[string]*laserbrain.ContextDelta{}
	var ids []string
	for _, st := range steps {
		d := deltas[st.ID]
		if d == nil {
			d = &laserbrain.ContextDelta{}
			deltas[st.ID] = d
			ids = append(ids, st.ID)
		}
		d.Add(st)
	}
	return updateContexts(ctx, tx, ids, func(id string, e *laserbrain.ContextEntry) { e.Merge(deltas[id]) })
}

// updateContexts read-modify-writes context rows under row locks, taken in
// id order so two transactions never wait on each other in a circle. A
// missing row is inserted empty first, so that two first records of one
// context queue on its row instead of both inserting.
func updateContexts(ctx context.Context, tx pgx.Tx, ids []string, change func(id string, e *laserbrain.ContextEntry)) error {
	sort.Strings(ids)
	for _, id := range ids {
		if _, err := tx.Exec(ctx, `INSERT INTO laserbrain.contexts (id, entry) VALUES ($1, '{}') ON CONFLICT DO NOTHING`, id); err != nil {
			return err
		}
		var raw []byte
		if err := tx.QueryRow(ctx, `SELECT entry FROM laserbrain.contexts WHERE id = $1 FOR UPDATE`, id).Scan(&raw); err != nil {
			return err
		}
		var e laserbrain.ContextEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("context %s: %w", id, err)
		}
		change(id, &e)
		out, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE laserbrain.contexts SET entry = $2::jsonb, updated = now() WHERE id = $1`, id, string(out)); err != nil {
			return err
		}
	}
	return nil
}
