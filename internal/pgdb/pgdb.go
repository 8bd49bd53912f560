package pgdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/laserkit/laserkit/internal/pgdsn"
	"github.com/laserkit/laserkit/laserbrain"
)

// Schema is the PostgreSQL schema every table lives in.
const Schema = "laserbrain"

// Table is one table of a component: its DDL (CREATE TABLE IF NOT EXISTS
// and its indexes, schema-qualified) and the columns the code uses.
type Table struct {
	Name    string
	DDL     []string
	Columns []string
	// Since is the component's schema version that brought the table (0:
	// the first). A database made before it lacks the table until `store
	// init`, or until the store first needs it (Ensure): Check does not
	// hold it against the database.
	Since int
}

// Component is a set of tables one package owns.
type Component struct {
	Name   string
	Tables []Table
}

// Version is the component's schema version: its newest table's Since.
func (c Component) Version() int {
	v := 0
	for _, t := range c.Tables {
		v = max(v, t.Since)
	}
	return v
}

// versionsDDL is the table that records each component's schema version
// a database has reached.
const versionsDDL = `CREATE TABLE IF NOT EXISTS laserbrain.schema_versions (
	component text PRIMARY KEY,
	version   integer NOT NULL
)`

// Ensure creates the table name of comp where the database lacks it (a
// database made by an earlier version), in one transaction under the
// lock store init takes, with CREATE … IF NOT EXISTS, and records comp's
// schema version: safe while other processes use the database or create
// it too. It alters no table, and does nothing when the table exists
// (one catalogue read).
func Ensure(ctx context.Context, pool *pgxpool.Pool, comp Component, name string) error {
	i := slices.IndexFunc(comp.Tables, func(t Table) bool { return t.Name == name })
	if i < 0 {
		return fmt.Errorf("component %s has no table %s", comp.Name, name)
	}
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, Schema+"."+name).Scan(&exists); err != nil || exists {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, initLock); err != nil {
			return err
		}
		for _, ddl := range comp.Tables[i].DDL {
			if _, err := tx.Exec(ctx, ddl); err != nil {
				return fmt.Errorf("creating %s.%s: %w", Schema, name, err)
			}
		}
		return recordVersion(ctx, tx, comp)
	})
}

// recordVersion records that the database has comp's schema version.
func recordVersion(ctx context.Context, tx pgx.Tx, comp Component) error {
	if _, err := tx.Exec(ctx, versionsDDL); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO laserbrain.schema_versions (component, version) VALUES ($1, $2)
ON CONFLICT (component) DO UPDATE SET version = greatest(laserbrain.schema_versions.version, EXCLUDED.version)`, comp.Name, comp.Version())
	return err
}

// ErrNoSchema is wrapped when the database lacks tables a store needs.
var ErrNoSchema = errors.New("the database has no laserbrain schema (run `laserbrain store init`)")

// initLock serialises concurrent Init runs on one database.
const initLock = "laserbrain store init"

// Init creates whatever tables of the components are missing, in one
// transaction, and returns the names it created. A table that exists
// without a required column is an error and nothing is changed.
func Init(ctx context.Context, pool *pgxpool.Pool, comps ...Component) (created []string, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		created = nil
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, initLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+Schema); err != nil {
			return err
		}
		missing, err := missingColumns(ctx, tx, comps)
		if err != nil {
			return err
		}
		var bad []string
		for _, c := range comps {
			for _, t := range c.Tables {
				cols, ok := missing[t.Name]
				switch {
				case !ok:
				case len(cols) == len(t.Columns) && !tableExists(ctx, tx, t.Name):
					for _, ddl := range t.DDL {
						if _, err := tx.Exec(ctx, ddl); err != nil {
							return fmt.Errorf("creating %s.%s: %w", Schema, t.Name, err)
						}
					}
					created = append(created, Schema+"."+t.Name)
				default:
					for _, col := range cols {
						bad = append(bad, Schema+"."+t.Name+"."+col)
					}
				}
			}
		}
		for _, c := range comps {
			if err := recordVersion(ctx, tx, c); err != nil {
				return err
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("the database holds another version's tables, without %s: laserbrain never alters a schema (use another database)", strings.Join(bad, ", "))
		}
		return nil
	})
	return created, err
}

// InitDSN is Init on the database at dsn, through a pool of its own.
func InitDSN(ctx context.Context, dsn string, comps ...Component) ([]string, error) {
	pool, err := NewPool(dsn, 1)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	created, err := Init(ctx, pool, comps...)
	return created, Wrap(err, dsn)
}

func tableExists(ctx context.Context, tx pgx.Tx, name string) bool {
	var ok bool
	_ = tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, Schema+"."+name).Scan(&ok)
	return ok
}

// Querier is a pool, a connection or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// missingColumns maps each table with a missing column (every column when
// the table is absent) to those columns, in one round trip.
func missingColumns(ctx context.Context, q Querier, comps []Component) (map[string][]string, error) {
	var tables []string
	for _, c := range comps {
		for _, t := range c.Tables {
			tables = append(tables, t.Name)
		}
	}
	rows, err := q.Query(ctx, `
SELECT c.table_name, c.column_name FROM information_schema.columns c
WHERE c.table_schema = $1 AND c.table_name = ANY($2)`, Schema, tables)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for rows.Next() {
		var t, col string
		if err := rows.Scan(&t, &col); err != nil {
			rows.Close()
			return nil, err
		}
		have[t+"."+col] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, c := range comps {
		for _, t := range c.Tables {
			for _, col := range t.Columns {
				if !have[t.Name+"."+col] {
					out[t.Name] = append(out[t.Name], col)
				}
			}
		}
	}
	return out, nil
}

// Check fails with ErrNoSchema when a component's table or column is
// missing.
func Check(ctx context.Context, q Querier, comps ...Component) error {
	missing, err := missingColumns(ctx, q, comps)
	if err != nil {
		return err
	}
	for _, c := range comps {
		for _, t := range c.Tables {
			if t.Since > 0 && len(missing[t.Name]) == len(t.Columns) {
				delete(missing, t.Name) // made where first needed (Ensure)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var names []string
	for t, cols := range missing {
		for _, c := range cols {
			names = append(names, Schema+"."+t+"."+c)
		}
	}
	slices.Sort(names)
	if len(names) > 4 {
		names = append(names[:4], "…")
	}
	return fmt.Errorf("%w: missing %s", ErrNoSchema, strings.Join(names, ", "))
}

// ConnectTimeout bounds connecting when the DSN does not say
// (connect_timeout): a hook must not hang on a database that is gone.
const ConnectTimeout = 3 * time.Second

// NewPool makes a pool for dsn without connecting: the first query
// connects. Connection strings are URLs or key/value.
func NewPool(dsn string, maxConns int32) (*pgxpool.Pool, error) {
	return newPool(dsn, maxConns, pgx.QueryExecModeExec)
}

// NewLongLivedPool is NewPool for a process that sends the same
// statements again and again on connections it keeps (the hook server, a
// stream, laserbrain run's broker): each statement is prepared once per
// connection and then only bound and run, which spares the server a parse
// and a plan on every call.
func NewLongLivedPool(dsn string, maxConns int32) (*pgxpool.Pool, error) {
	return newPool(dsn, maxConns, pgx.QueryExecModeCacheStatement)
}

func newPool(dsn string, maxConns int32, mode pgx.QueryExecMode) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("the connection string %s: %s", pgdsn.Mask(dsn), pgdsn.Scrub(err.Error(), dsn))
	}
	if !strings.Contains(dsn, "connect_timeout") {
		cfg.ConnConfig.ConnectTimeout = ConnectTimeout
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "laserbrain"
	}
	// NewPool: one round trip per statement, none spent preparing it, for
	// the hooks' short processes that send each statement once.
	cfg.ConnConfig.DefaultQueryExecMode = mode
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	cfg.MinConns = 0
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("the laserbrain store at %s: %s", pgdsn.Mask(dsn), pgdsn.Scrub(err.Error(), dsn))
	}
	return pool, nil
}

// ErrUnavailable is laserbrain.ErrUnavailable: what the stores' errors
// wrap when the database could not be reached, or the connection to it
// was lost.
var ErrUnavailable = laserbrain.ErrUnavailable

// UnavailableError is laserbrain's: the store, named without its password.
type UnavailableError = laserbrain.UnavailableError

// Unreachable reports whether err means the database is out of reach (not
// connected, or the connection lost), as opposed to a query it refused.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// 08: connection exception; 57P01-03: the server shut down or is
		// starting.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ENOENT) {
		return true
	}
	if pgconn.Timeout(err) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "closed pool")
}

// Wrap turns an error that means the database is out of reach into an
// UnavailableError naming the store; other errors pass through with the
// password scrubbed.
func Wrap(err error, dsn string) error {
	if err == nil {
		return nil
	}
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return err
	}
	if Unreachable(err) {
		return &UnavailableError{Where: pgdsn.Mask(dsn), Err: scrubbed{cause{err}, dsn}}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "42703" || pe.Code == "3F000") {
		// undefined table, column or schema: the stores do not check the
		// schema ahead of every process (a hook would pay a round trip);
		// the first statement that finds it missing says so.
		return fmt.Errorf("%w at %s: %s", ErrNoSchema, pgdsn.Mask(dsn), pgdsn.Scrub(pe.Message, dsn))
	}
	if errors.Is(err, pgx.ErrNoRows) || errors.Is(err, ErrNoSchema) {
		return err
	}
	return scrubbed{err, dsn}
}

// cause is an unreachable database's error said once: pgx reports every
// connection attempt (TLS, then plain; each address) in one message behind
// "failed to connect to `user=… database=…`", so the same dial error
// appears twice. Its message is the distinct network errors, which name
// the address and the cause; the error itself is kept for errors.Is/As.
type cause struct{ err error }

func (c cause) Unwrap() error { return c.err }

func (c cause) Error() string {
	var msgs []string
	seen := map[string]bool{}
	var walk func(error)
	walk = func(e error) {
		var op *net.OpError
		if oe, ok := e.(*net.OpError); ok {
			op = oe
		}
		if op != nil {
			if m := op.Error(); !seen[m] {
				seen[m] = true
				msgs = append(msgs, m)
			}
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			if x := u.Unwrap(); x != nil {
				walk(x)
			}
		}
	}
	walk(c.err)
	if len(msgs) == 0 {
		return c.err.Error()
	}
	return strings.Join(msgs, "; ")
}

// scrubbed is an error whose message has the DSN's password taken out.
type scrubbed struct {
	err error
	dsn string
}

func (s scrubbed) Error() string { return pgdsn.Scrub(s.err.Error(), s.dsn) }
func (s scrubbed) Unwrap() error { return s.err }

// Retries is how many times a transaction is tried again after losing its
// connection.
var Retries = 3

// Tx runs f in a READ COMMITTED transaction on the pool. When the
// connection is lost on the way (the server restarted, a network hiccup)
// and the database answers again, f runs again in a new transaction, up to
// Retries times: f must make the same change however often it runs, which
// the stores get from ids chosen before the first try (a step's run and
// number, a save id, an event id). A database that cannot be reached at
// all fails at once.
func Tx(ctx context.Context, pool *pgxpool.Pool, f func(pgx.Tx) error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = pgx.BeginFunc(ctx, pool, f)
		if err == nil || !Unreachable(err) || attempt >= Retries || ctx.Err() != nil {
			return err
		}
		var ce *pgconn.ConnectError
		if errors.As(err, &ce) {
			return err // not reachable (any more): no point waiting here
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
		}
	}
}

// Table names one of the schema's tables, qualified.
func T(name string) string { return Schema + "." + name }
