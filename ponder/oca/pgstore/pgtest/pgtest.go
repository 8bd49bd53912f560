package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/ponder/oca/pgstore"
)

// AdminDSN returns the superuser DSN of the test server, or skips t.
func AdminDSN(t testing.TB) string {
	t.Helper()
	return pgtest.AdminDSN(t)
}

// NewDatabase creates an empty database for t, dropped when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return pgtest.NewDatabase(t)
}

// NewOCADatabase is NewDatabase with ponder's OCA schema initialised.
func NewOCADatabase(t testing.TB) string {
	t.Helper()
	return initOCA(t, pgtest.NewDatabase(t))
}

// Cluster is a private server for one test (internal/pgtest.Cluster) that
// also makes OCA databases.
type Cluster struct{ *pgtest.Cluster }

// StartCluster starts a private server for t, stopped and deleted when t
// ends.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	return &Cluster{pgtest.StartCluster(t)}
}

// NewOCADatabase creates a database with ponder's OCA schema on the private
// cluster for t.
func (c *Cluster) NewOCADatabase(t testing.TB) string {
	t.Helper()
	return initOCA(t, c.NewDatabase(t))
}

func initOCA(t testing.TB, dsn string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := pgstore.InitSchema(ctx, dsn); err != nil {
		t.Fatalf("pgtest: initialising the OCA schema: %v", err)
	}
	return dsn
}
