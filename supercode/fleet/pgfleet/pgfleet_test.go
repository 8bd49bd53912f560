package pgfleet

import (
	"context"
	"os"
	"testing"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/fleet/fleettest"
)

const dsnEnv = "LASERKIT_PGFLEET_TEST_DSN"

func TestMain(m *testing.M) {
	fleettest.Child(func() (fleet.Store, error) { return Open(os.Getenv(dsnEnv)) })
	os.Exit(m.Run())
}

func newDatabase(t testing.TB) string {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	if _, err := pgdb.InitDSN(context.Background(), dsn, Component, SuperviseComponent); err != nil {
		t.Fatal(err)
	}
	return dsn
}

type database string

func (d database) Open(t testing.TB) fleet.Store {
	s, err := Open(string(d))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
func (d database) Env() []string { return []string{dsnEnv + "=" + string(d)} }

// TestConformance runs the fleet store suite on PostgreSQL, in one process
// and across processes.
func TestConformance(t *testing.T) {
	fleettest.Run(t, func(t *testing.T) fleet.Store { return database(newDatabase(t)).Open(t) })
	fleettest.Processes(t, func(t *testing.T) fleettest.Place { return database(newDatabase(t)) })
}
