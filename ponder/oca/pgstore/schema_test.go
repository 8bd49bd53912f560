package pgstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/ponder/oca/pgstore"
	"github.com/laserkit/laserkit/ponder/oca/pgstore/pgtest"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(testCtx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(testCtx(t), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func probe(t *testing.T, dsn string) []string {
	t.Helper()
	s, err := pgstore.Open(testCtx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Probe(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Schema != (len(rep.Missing) == 0) {
		t.Errorf("Schema = %v with Missing %v", rep.Schema, rep.Missing)
	}
	return rep.Missing
}

// allMissing is what the probe must say of a live database that is not an
// OCA database: the five tables ponder writes and the five labels it emits.
var allMissing = []string{
	"episodic_memory", "hypotheses", "deliberations", "metacognitive_observations", "cognitive_events",
	"enum:hypothesis_formed", "enum:hypothesis_tested", "enum:deliberation_result",
	"enum:metacognition_alert", "enum:reasoning_trace_created",
}

func TestProbeNonOCADatabaseNamesFiveTablesAndLabels(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	// An unrelated table must not confuse the probe.
	mustExec(t, connect(t, dsn), `CREATE TABLE notes (id int, body text)`)
	if got := probe(t, dsn); !slices.Equal(got, allMissing) {
		t.Errorf("missing = %q\nwant      %q", got, allMissing)
	}
}

func TestInitSchemaOnFreshDatabaseIsCompleteAndIdempotent(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	rep, err := pgstore.InitSchema(testCtx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.CreatedEnum || len(rep.CreatedTables) != 5 || len(rep.AddedLabels) != 0 {
		t.Errorf("first init = %+v, want the enum and five tables created", rep)
	}
	if got := probe(t, dsn); len(got) != 0 {
		t.Errorf("after init the probe still misses %q", got)
	}
	rep, err = pgstore.InitSchema(testCtx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if rep.CreatedEnum || len(rep.CreatedTables) != 0 || len(rep.AddedLabels) != 0 {
		t.Errorf("second init = %+v, want nothing done", rep)
	}
	// OCA's column defaults ponder relies on (and must override explicitly).
	conn := connect(t, dsn)
	var def string
	if err := conn.QueryRow(testCtx(t), `SELECT column_default FROM information_schema.columns
		WHERE table_name = 'episodic_memory' AND column_name = 'surprise_magnitude'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if def != "0.0" {
		t.Errorf("episodic_memory.surprise_magnitude default = %q, want OCA's 0.0", def)
	}
	// No pgvector anywhere.
	var vec int
	if err := conn.QueryRow(testCtx(t), `SELECT count(*) FROM pg_extension WHERE extname = 'vector'`).Scan(&vec); err != nil {
		t.Fatal(err)
	}
	if vec != 0 {
		t.Error("init installed pgvector")
	}
}

func TestInitSchemaConcurrentRunsAgree(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() { _, err := pgstore.InitSchema(testCtx(t), dsn); errs <- err }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got := probe(t, dsn); len(got) != 0 {
		t.Errorf("probe misses %q", got)
	}
}

// An OCA database from before migration 003, with a table carrying more
// columns than ponder's subset and a row in it: init adds the missing label
// and the missing tables and leaves the existing table exactly as it was.
func TestInitSchemaNeverAltersExistingTables(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	conn := connect(t, dsn)
	mustExec(t, conn, `CREATE TYPE cognitive_event_type AS ENUM ('hypothesis_formed', 'hypothesis_tested',
		'deliberation_result', 'metacognition_alert', 'interrupt')`)
	mustExec(t, conn, `CREATE TABLE hypotheses (
		id serial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now(), domain text NOT NULL,
		claim text NOT NULL, confidence float NOT NULL DEFAULT 0.5, prediction text NOT NULL,
		prediction_deadline timestamptz, test_method text, test_type text, status text DEFAULT 'pending',
		actual_outcome text, tested_at timestamptz, surprise_magnitude float, model_update text,
		confidence_delta float, source_type text, source_data jsonb DEFAULT '{}', related_hypotheses int[] DEFAULT '{}')`)
	mustExec(t, conn, `INSERT INTO hypotheses (domain, claim, prediction, test_method) VALUES ('code', 'c', 'p', 'keep me')`)
	columns := func() []string {
		rows, _ := conn.Query(testCtx(t), `SELECT column_name::text FROM information_schema.columns
			WHERE table_name = 'hypotheses' ORDER BY ordinal_position`)
		cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return cols
	}
	before := columns()

	rep, err := pgstore.InitSchema(testCtx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if rep.CreatedEnum || !slices.Equal(rep.AddedLabels, []string{"reasoning_trace_created"}) {
		t.Errorf("enum work = created %v, added %q; want only reasoning_trace_created added", rep.CreatedEnum, rep.AddedLabels)
	}
	if want := []string{"episodic_memory", "deliberations", "metacognitive_observations", "cognitive_events"}; !slices.Equal(rep.CreatedTables, want) {
		t.Errorf("created %q, want %q", rep.CreatedTables, want)
	}
	if after := columns(); !slices.Equal(after, before) {
		t.Errorf("hypotheses columns changed:\n%q\n%q", before, after)
	}
	var method string
	if err := conn.QueryRow(testCtx(t), `SELECT test_method FROM hypotheses`).Scan(&method); err != nil || method != "keep me" {
		t.Errorf("existing row: %q, %v", method, err)
	}
	// The enum keeps its foreign label.
	var n int
	if err := conn.QueryRow(testCtx(t), `SELECT count(*) FROM pg_enum WHERE enumtypid = 'cognitive_event_type'::regtype`).Scan(&n); err != nil || n != 6 {
		t.Errorf("enum has %d labels (%v), want the 5 it had plus 1", n, err)
	}
}

// A table that exists without a column ponder writes is reported, never
// altered, and init fails saying what is missing.
func TestInitSchemaReportsColumnsItWillNotAdd(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	conn := connect(t, dsn)
	mustExec(t, conn, `CREATE TABLE deliberations (id serial PRIMARY KEY, started_at timestamptz NOT NULL DEFAULT now(),
		completed_at timestamptz, decision text NOT NULL, stakes text DEFAULT 'medium',
		skeptic_argument text, skeptic_confidence float, builder_argument text, builder_confidence float,
		dreamer_argument text, dreamer_confidence float, empath_confidence float,
		resolution text, resolution_method text)`)
	rep, err := pgstore.InitSchema(testCtx(t), dsn)
	if err == nil || !strings.Contains(err.Error(), "deliberations.empath_argument") {
		t.Fatalf("err = %v, want it to name deliberations.empath_argument", err)
	}
	if !slices.Equal(rep.Missing, []string{"deliberations.empath_argument"}) {
		t.Errorf("Missing = %q", rep.Missing)
	}
	if got := probe(t, dsn); !slices.Equal(got, []string{"deliberations.empath_argument"}) {
		t.Errorf("probe misses %q", got)
	}
}
