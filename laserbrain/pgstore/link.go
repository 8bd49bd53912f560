package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/pgdsn"
	"github.com/laserkit/laserkit/laserbrain/link"
)

// LinkLog is one fleet's link in PostgreSQL (link.Log): a row per line in
// laserbrain.link, the line kept as text, byte for byte what the file
// would hold, read back in the order the server numbered them. Each line
// carries an id chosen before the insert, so a retry after a lost
// connection stores it once.
type LinkLog struct {
	pool  *pgxpool.Pool
	dsn   string
	fleet string
}

var _ link.Log = (*LinkLog)(nil)

// NewLinkLog is fleet's link on pool.
func NewLinkLog(pool *pgxpool.Pool, dsn, fleet string) *LinkLog {
	return &LinkLog{pool: pool, dsn: dsn, fleet: fleet}
}

// Append implements link.Log.
func (l *LinkLog) Append(line []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := newID()
	return pgdb.Wrap(pgdb.Tx(ctx, l.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO laserbrain.link (id, fleet, line) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, id, l.fleet, string(line))
		return err
	}), l.dsn)
}

// Lines implements link.Log.
func (l *LinkLog) Lines(fn func([]byte)) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rows, err := l.pool.Query(ctx, `SELECT line FROM laserbrain.link WHERE fleet = $1 ORDER BY seq`, l.fleet)
	if err != nil {
		return pgdb.Wrap(err, l.dsn)
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return pgdb.Wrap(err, l.dsn)
		}
		fn([]byte(line))
	}
	return pgdb.Wrap(rows.Err(), l.dsn)
}

// Where implements link.Log.
func (l *LinkLog) Where() string { return pgdsn.Mask(l.dsn) + " (fleet " + l.fleet + ")" }

// Exists implements link.Log: the table is there once the schema is.
func (l *LinkLog) Exists() bool { return true }
