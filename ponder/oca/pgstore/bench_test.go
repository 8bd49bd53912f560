package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/ponder/oca"
	"github.com/laserkit/laserkit/ponder/oca/pgstore"
	"github.com/laserkit/laserkit/ponder/oca/pgstore/pgtest"
)

// passesPerSession is how many passes the benchmark judges per session
// before starting the next, so a session's rows stay as few as real ones.
const passesPerSession = 8

// benchCall is one way of making the recordPass call for a pass of a slug.
type benchCall func(b *testing.B, slug string, pass int)

// benchWays are the three ways BenchmarkRecordPass compares:
//
//	pgx-open     on an open connection, as the bridge calls it after the probe
//	pgx-connect  connecting for each call, a whole ponder command's database cost
//	psql         the upstream bridge's way: a psql process per call, values as
//	             -v variables, the SQL on stdin with -f -
func benchWays(b *testing.B, dsn string) (names []string, ways map[string]benchCall, done func()) {
	churn := 0.4
	record := func(slug string, pass int) oca.PassRecord {
		return oca.PassRecord{Session: oca.Session{Slug: slug, Subject: "bench", Lens: "ui", Project: "p", Passes: 4},
			Pass: pass, Metrics: oca.PassMetrics{Coverage: 1, Churn: &churn, Voices: 4, Verdict: "continue"}}
	}
	open, err := pgstore.Open(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	psql := findPsql(b)
	ways = map[string]benchCall{
		"pgx-open": func(b *testing.B, slug string, pass int) {
			if _, err := open.RecordPass(context.Background(), record(slug, pass)); err != nil {
				b.Fatal(err)
			}
		},
		"pgx-connect": func(b *testing.B, slug string, pass int) {
			s, err := pgstore.Open(context.Background(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if _, err := s.RecordPass(context.Background(), record(slug, pass)); err != nil {
				b.Fatal(err)
			}
		},
		"psql": func(b *testing.B, slug string, pass int) {
			cmd := exec.Command(psql, "-X", "-q", "-A", "-t",
				"-v", "domain=ponder:"+slug,
				"-v", "content=["+slug+"] bench :: lens=ui project=p passes=4 mode=deliberate pass="+strconv.Itoa(pass),
				"-v", `outcome={"churn":0.4,"verdict":"continue"}`,
				"-v", "pass="+strconv.Itoa(pass),
				"-v", "churn=0.4",
				"-v", "slug="+slug,
				"-f", "-", dsn)
			cmd.Stdin = strings.NewReader(psqlRecordPass)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("psql: %v: %s", err, out)
			}
		},
	}
	return []string{"pgx-open", "pgx-connect", "psql"}, ways, open.Close
}

// sessionPass maps iteration i to a session and pass: passes 2..9 of
// session i/passesPerSession, so every call closes one forecast and opens one.
func sessionPass(prefix string, i int) (string, int) {
	return fmt.Sprintf("%s-%d", prefix, i/passesPerSession), i%passesPerSession + 2
}

// BenchmarkRecordPass times each way on its own (absolute ns/op).
func BenchmarkRecordPass(b *testing.B) {
	dsn := pgtest.NewOCADatabase(b)
	names, ways, done := benchWays(b, dsn)
	defer done()
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			prefix := fmt.Sprintf("bench-%s-%d", name, b.N)
			i := 0
			for ; b.Loop(); i++ {
				slug, pass := sessionPass(prefix, i)
				ways[name](b, slug, pass)
			}
			b.StopTimer()
			for k := 0; k*passesPerSession < i; k++ {
				checkBenchLedger(b, dsn, fmt.Sprintf("%s-%d", prefix, k))
			}
		})
	}
}

// BenchmarkRecordPassRatio makes one call each way per iteration, in turn,
// and reports how many times slower psql is than each pgx way. Interleaving
// keeps the ratio honest on a machine whose load changes during the run.
func BenchmarkRecordPassRatio(b *testing.B) {
	dsn := pgtest.NewOCADatabase(b)
	names, ways, done := benchWays(b, dsn)
	defer done()
	spent := map[string]time.Duration{}
	prefix := fmt.Sprintf("ratio-%d", b.N)
	for i := 0; b.Loop(); i++ {
		for _, name := range names {
			slug, pass := sessionPass(prefix+"-"+name, i)
			t0 := time.Now()
			ways[name](b, slug, pass)
			spent[name] += time.Since(t0)
		}
	}
	b.ReportMetric(float64(spent["psql"])/float64(spent["pgx-open"]), "psql/pgx-open")
	b.ReportMetric(float64(spent["psql"])/float64(spent["pgx-connect"]), "psql/pgx-connect")
}

// checkBenchLedger keeps the benchmark honest: every way must have left a
// chain of forecasts, all closed but the last.
func checkBenchLedger(b *testing.B, dsn, slug string) {
	b.Helper()
	s, err := pgstore.OpenStore(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ledger, err := s.Ledger(context.Background(), slug)
	if err != nil {
		b.Fatal(err)
	}
	for i, l := range ledger {
		closed := *l.Status == "confirmed" || *l.Status == "refuted"
		if closed == (i == len(ledger)-1) || *l.ForecastMadeInPass != i+2 {
			b.Fatalf("%s ledger row %d: made in %d, %s", slug, i, *l.ForecastMadeInPass, *l.Status)
		}
	}
}

func findPsql(b *testing.B) string {
	if dir := os.Getenv("PG_BINDIR"); dir != "" {
		if p := filepath.Join(dir, "psql"); fileExists(p) {
			return p
		}
	}
	return testenv.LookPath(b, "psql")
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// psqlRecordPass is recordPass as the upstream bridge runs it: a fixed
// script whose values arrive as psql variables (:'name' expands to a quoted
// literal), computing the close in SQL since no program sits between the
// statements.
const psqlRecordPass = `\set ON_ERROR_STOP on
BEGIN;
INSERT INTO episodic_memory (event_type, content, prediction, actual_outcome, surprise_magnitude)
VALUES ('ponder_pass', :'content', NULL, :'outcome', NULL) RETURNING id \gset ep_
SELECT pg_try_advisory_xact_lock(hashtext(:'domain')) AS held \gset
\if :held
WITH pend AS (
	SELECT id, (source_data->>'forecast_churn')::float8 AS f, confidence AS c,
	       abs((source_data->>'forecast_churn')::float8 - :'churn'::float8) AS s
	FROM hypotheses
	WHERE domain = :'domain' AND status = 'pending' AND (source_data->>'for_pass')::int = :'pass'::int
	ORDER BY id LIMIT 1
), closed AS (
	UPDATE hypotheses h
	SET status = CASE WHEN p.s <= 0.05 THEN 'confirmed' ELSE 'refuted' END,
	    surprise_magnitude = p.s,
	    confidence_delta = CASE WHEN p.s <= 0.05 THEN least(0.2, (1 - p.c) * 0.3) ELSE -least(0.3, p.c * 0.4) END,
	    model_update = format('decay=0.6 forecast=%s actual=%s surprise=%s', p.f, :'churn', p.s),
	    actual_outcome = :'churn', tested_at = now()
	FROM pend p
	WHERE h.id = p.id AND h.status = 'pending'
	RETURNING h.id, h.status, h.surprise_magnitude, h.confidence, h.confidence_delta
), opened AS (
	INSERT INTO hypotheses (domain, claim, prediction, confidence, status, test_type, source_type, source_data)
	SELECT :'domain',
	       format('ponder %s: pass %s churn ≈ %s', :'slug', :'pass'::int + 1, 0.6 * :'churn'::float8),
	       format('churn(pass %s) = %s (0.6 × %s)', :'pass'::int + 1, 0.6 * :'churn'::float8, :'churn'),
	       coalesce((SELECT least(1, greatest(0, confidence + confidence_delta)) FROM closed), 0.5),
	       'pending', 'passive_observation', 'inference',
	       jsonb_build_object('pass', :'pass'::int, 'for_pass', :'pass'::int + 1, 'forecast_churn', 0.6 * :'churn'::float8)
	WHERE NOT EXISTS (SELECT 1 FROM hypotheses WHERE domain = :'domain' AND (source_data->>'pass')::int = :'pass'::int)
	RETURNING id
), tested AS (
	INSERT INTO cognitive_events (event_type, source_layer, target_layer, priority, payload)
	SELECT 'hypothesis_tested', 'ponder', :'domain', least(1, surprise_magnitude),
	       jsonb_build_object('slug', :'slug', 'pass', :'pass'::int, 'hypothesis_id', id, 'status', status,
	                          'surprise', surprise_magnitude)
	FROM closed
	RETURNING id
), formed AS (
	INSERT INTO cognitive_events (event_type, source_layer, target_layer, payload)
	SELECT 'hypothesis_formed', 'ponder', :'domain',
	       jsonb_build_object('slug', :'slug', 'pass', :'pass'::int, 'hypothesis_id', id,
	                          'for_pass', :'pass'::int + 1, 'forecastChurn', 0.6 * :'churn'::float8)
	FROM opened
	RETURNING id
)
SELECT (SELECT id FROM closed), (SELECT id FROM opened), (SELECT count(*) FROM tested), (SELECT count(*) FROM formed);
\endif
COMMIT;
`
