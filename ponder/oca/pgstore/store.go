package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/laserkit/laserkit/ponder/oca"
)

// Store is an oca.Backend on a single pgx connection. It is not safe for
// concurrent use: a ponder process runs one bridge call at a time.
type Store struct {
	conn *pgx.Conn
}

var _ oca.Backend = (*Store)(nil)

// Open connects to dsn (any libpq connection string or URL) within ctx's
// deadline. It matches oca.Connector.
func Open(ctx context.Context, dsn string) (oca.Backend, error) {
	s, err := OpenStore(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// OpenStore is Open returning the concrete type, for the read-back queries.
func OpenStore(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors quote the whole DSN, password included.
		return nil, fmt.Errorf("invalid OCA DSN: %s", redactParseError(err))
	}
	// One round trip per statement and no server-side prepared statements:
	// a ponder command runs each statement once. Values still travel as
	// bind parameters of the extended protocol.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "ponder"
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Store{conn: conn}, nil
}

// Conn exposes the connection, for tests and the read-back queries.
func (s *Store) Conn() *pgx.Conn { return s.conn }

// Close ends the connection; it never blocks for more than a second.
func (s *Store) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = s.conn.Close(ctx)
}

// closeTimeout bounds the polite Terminate on Close.
const closeTimeout = time.Second

// redactParseError keeps pgx's reason for rejecting a DSN but drops the DSN
// itself and any wrapped error that may quote it (both can carry a password).
func redactParseError(err error) string {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return "cannot parse the connection string"
	}
	msg := pe.Error()
	if i := strings.LastIndex(msg, "`: "); i >= 0 {
		msg = msg[i+3:]
	}
	if inner := pe.Unwrap(); inner != nil {
		msg = strings.TrimSuffix(msg, " ("+inner.Error()+")")
	}
	return msg
}
