package pgstore

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/storetest"
)

const dsnEnv = "LASERKIT_PGSTORE_TEST_DSN"

func TestMain(m *testing.M) {
	linkWriter()
	storetest.Child(func() (laserbrain.Store, error) { return Open(os.Getenv(dsnEnv), Options{}) })
	os.Exit(m.Run())
}

// newDatabase is an empty test database with laserbrain's schema.
func newDatabase(t testing.TB) string {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	if _, err := pgdb.InitDSN(context.Background(), dsn, Component); err != nil {
		t.Fatal(err)
	}
	return dsn
}

func openStore(t testing.TB, dsn string) *Store {
	t.Helper()
	s, err := Open(dsn, Options{LockTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type database string

func (d database) Open(t testing.TB) laserbrain.Store { return openStore(t, string(d)) }
func (d database) Env() []string                      { return []string{dsnEnv + "=" + string(d)} }

// TestConformance runs the store suite on a PostgreSQL database.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Place { return database(newDatabase(t)) })
}

func step(goal string, d int) laserbrain.StepInput {
	return laserbrain.StepInput{Goal: goal, Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(d)}
}

// A save whose commit reached the server but whose answer was lost is run
// again by the retry: it finds its own save id and stops, so its steps and
// their context records count once.
func TestRetriedSaveCountsOnce(t *testing.T) {
	dsn := newDatabase(t)
	s := openStore(t, dsn)
	ctx := context.Background()
	hh, err := s.OpenRun(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	h := hh.(*runHandle)
	defer h.Close()
	for i := 0; i < 3; i++ {
		if _, err := h.Run().Step(step("ship the sky billboard", 5-i)); err != nil {
			t.Fatal(err)
		}
	}
	// Play pgdb.Tx's retry by hand: the same save's transaction, twice.
	sv, err := h.prepare()
	if err != nil {
		t.Fatal(err)
	}
	if len(sv.ctxSteps) != 3 {
		t.Fatalf("%d pending context records, want 3", len(sv.ctxSteps))
	}
	for i := 0; i < 2; i++ {
		if err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return sv.apply(ctx, tx) }); err != nil {
			t.Fatalf("try %d: %v", i+1, err)
		}
	}
	sv.done()
	var n, version int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM laserbrain.steps WHERE run_id = 'r'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT version FROM laserbrain.runs WHERE id = 'r'`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	e, _, _ := openStore(t, dsn).Contexts().Context("ctx_2qbvsr")
	if n != 3 || e.Checks != 3 || version != 1 {
		t.Fatalf("after a retried save: %d steps, %d context checks, version %d; want 3, 3, 1", n, e.Checks, version)
	}
	// The handle goes on as if the save had been answered the first time.
	if _, err := h.Run().Step(step("ship the sky billboard", 1)); err != nil {
		t.Fatal(err)
	}
	if err := h.Save(ctx); err != nil {
		t.Fatal(err)
	}
	if e, _, _ := openStore(t, dsn).Contexts().Context("ctx_2qbvsr"); e.Checks != 4 {
		t.Fatalf("after the next save: %d checks, want 4", e.Checks)
	}
}

// Connections cut by the server mid-stream (pg_terminate_backend, as when
// it restarts): the next save reconnects, the run goes on, nothing is lost
// or doubled, and the lock held over the cut is fenced by the run's
// version.
func TestConnectionsCutMidStream(t *testing.T) {
	dsn := newDatabase(t)
	s := openStore(t, dsn)
	ctx := context.Background()
	h, err := s.OpenRun(ctx, "cut")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	admin, err := pgx.Connect(ctx, pgtest.AdminDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	dbName := s.pool.Config().ConnConfig.Database
	for round := 0; round < 4; round++ {
		for i := 0; i < 5; i++ {
			if _, err := h.Run().Step(step("keep the cache warm", 8-i%8)); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.Save(ctx); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, dbName); err != nil {
			t.Fatal(err)
		}
	}
	r, err := openStore(t, dsn).ReadRun(ctx, "cut")
	if err != nil || r.StepCount() != 20 || len(r.Steps()) != 20 {
		t.Fatalf("after the cuts: %v, %d steps", err, r.StepCount())
	}
	// The lock went with the lock connection: another store may take the
	// run now; its save wins, and the old handle's next save is refused.
	other := openStore(t, dsn)
	h2, err := other.OpenRun(ctx, "cut")
	if err != nil {
		t.Fatalf("the run is still held after its lock connection was cut: %v", err)
	}
	if _, err := h2.Run().Step(step("keep the cache warm", 2)); err != nil {
		t.Fatal(err)
	}
	if err := h2.Save(ctx); err != nil {
		t.Fatal(err)
	}
	h2.Close()
	if _, err := h.Run().Step(step("keep the cache warm", 1)); err != nil {
		t.Fatal(err)
	}
	if err := h.Save(ctx); !errors.Is(err, ErrTakenOver) {
		t.Fatalf("the stale handle's save: %v, want ErrTakenOver", err)
	}
	if r, _ := openStore(t, dsn).ReadRun(ctx, "cut"); r.StepCount() != 21 {
		t.Fatalf("%d steps, want 21: the stale save must not land", r.StepCount())
	}
}

// An unreachable database is ErrUnavailable, and no message carries the
// password.
func TestUnreachable(t *testing.T) {
	dsn := "postgres://ann:s3cr3tpw@127.0.0.1:1/nothing?connect_timeout=2"
	s, err := Open(dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.OpenRun(context.Background(), "r")
	if !errors.Is(err, pgdb.ErrUnavailable) {
		t.Fatalf("OpenRun on a closed port: %v, want ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "s3cr3tpw") || !strings.Contains(err.Error(), "ann:***@127.0.0.1:1") {
		t.Fatalf("message %q shows the password or hides the place", err)
	}
}

// A database without the schema says to run store init; Init twice creates
// nothing the second time; a table from another version is refused and
// left alone.
func TestSchema(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	s := openStore(t, dsn)
	if _, err := s.OpenRun(ctx, "r"); !errors.Is(err, pgdb.ErrNoSchema) || !strings.Contains(err.Error(), "laserbrain store init") {
		t.Fatalf("OpenRun without a schema: %v", err)
	}
	created, err := Init(ctx, s.pool)
	if err != nil || len(created) != 5 {
		t.Fatalf("Init = %v, %v", created, err)
	}
	if created, err = Init(ctx, s.pool); err != nil || len(created) != 0 {
		t.Fatalf("second Init = %v, %v", created, err)
	}
	other := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA laserbrain; CREATE TABLE laserbrain.runs (id text PRIMARY KEY, state jsonb)`); err != nil {
		t.Fatal(err)
	}
	pool, _ := pgdb.NewPool(other, 1)
	defer pool.Close()
	if _, err := Init(ctx, pool); err == nil || !strings.Contains(err.Error(), "laserbrain.runs.step_count") || !strings.Contains(err.Error(), "never alters") {
		t.Fatalf("Init over another version's table: %v", err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'laserbrain'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d tables after a refused Init, want the 1 that was there", n)
	}
}

// TestOpenRunDatabaseDown: with the database out of reach, opening a run is
// "cannot reach", never "is in use" — nothing else holds a brand new run.
func TestOpenRunDatabaseDown(t *testing.T) {
	s, err := Open("postgres://laserkit@127.0.0.1:1/fleet?connect_timeout=2", Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.OpenRun(context.Background(), laserbrain.NewRunID())
	if err == nil {
		t.Skip("something answers on 127.0.0.1:1")
	}
	if !errors.Is(err, laserbrain.ErrUnavailable) || strings.Contains(err.Error(), "in use") ||
		strings.Count(err.Error(), "connection refused") != 1 {
		t.Fatalf("OpenRun with the database down: %v", err)
	}
}
