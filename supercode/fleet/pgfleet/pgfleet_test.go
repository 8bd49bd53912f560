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

// TestWitness runs the round counter's witness on PostgreSQL, the forger
// editing the tables as a person with psql would.
func TestWitness(t *testing.T) {
	fleettest.Witness(t, func(t *testing.T) fleet.Store { return database(newDatabase(t)).Open(t) },
		func(t *testing.T, st fleet.Store, fl string, keep int64) {
			t.Helper()
			s := st.(*Store)
			ctx := context.Background()
			stmts := []string{`DELETE FROM laserbrain.journal WHERE fleet = $1 AND seq > $2`,
				`UPDATE laserbrain.journal_heads SET records = $2, hash = (SELECT coalesce((SELECT raw::jsonb->>'hash' FROM laserbrain.journal WHERE fleet = $1 AND seq = $2), '')) WHERE fleet = $1`,
				`DELETE FROM laserbrain.journal_heads WHERE fleet = $1 AND $2 = 0`}
			for _, q := range stmts {
				if _, err := s.pool.Exec(ctx, q, fl, keep); err != nil {
					t.Fatal(err)
				}
			}
		})
}
