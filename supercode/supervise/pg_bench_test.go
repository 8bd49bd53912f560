package supervise

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/pgdb"
	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/pgstore"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/fleet/pgfleet"
)

// BenchmarkSuperviseJournalPostgres: the journal of 1,000 --once rounds
// of 50 agents × 100 checks (each round after one agent made one more
// check, as BenchmarkSuperviseOnceAfter1000 builds it on the local store)
// in PostgreSQL: journal-mb is the database space of the journal's tables
// (pg_total_relation_size of the journal, its archive, heads and marks:
// rows, indexes and TOAST, dead rows not yet vacuumed included), the
// target 5 MB; live-mb is the journal table alone. SUPERVISE_BENCH_PRIOR
// sets fewer rounds.
func BenchmarkSuperviseJournalPostgres(b *testing.B) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(b)
	if _, err := pgdb.InitDSN(ctx, dsn, pgstore.Component, pgfleet.Component, pgfleet.SuperviseComponent); err != nil {
		b.Fatal(err)
	}
	b.Setenv("LASERBRAIN_HOME", b.TempDir())
	fl, err := pgfleet.Open(dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer fl.Close()
	runs, err := pgstore.Open(dsn, pgstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer runs.Close()
	repo := b.TempDir()
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	step := func(id, goal string, n, d int) {
		h, err := runs.OpenRun(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		if goal == "" {
			goal = h.Run().GroundGoal()
		}
		for i := 0; i < n; i++ {
			if _, err := h.Run().Step(laserbrain.StepInput{Goal: goal, Progress: "advancing", Distance: laserbrain.Dist(d + i%4)}); err != nil {
				b.Fatal(err)
			}
		}
		if err := h.Save(ctx); err != nil {
			b.Fatal(err)
		}
		h.Close()
	}
	for a := 0; a < onceAgents; a++ {
		id := fmt.Sprintf("run%02d", a)
		if err := fl.CreateRun(ctx, fleet.Run{ID: id, Agent: "agent", Fleet: "bench", Dir: repo, Created: t0, Task: id, Tasks: 1, Checks: onceSteps}); err != nil {
			b.Fatal(err)
		}
		step(id, clusteredGoal(a), onceSteps, 5)
	}
	prior := 1000
	if n, err := strconv.Atoi(os.Getenv("SUPERVISE_BENCH_PRIOR")); err == nil && n > 0 {
		prior = n
	}
	for b.Loop() {
		for i := 0; i < prior; i++ {
			id := fmt.Sprintf("run%02d", i%onceAgents)
			step(id, "", 1, 5)
			if _, err := fl.UpdateRun(ctx, id, func(r *fleet.Run) error { r.Checks++; return nil }); err != nil {
				b.Fatal(err)
			}
			s, err := Open(ctx, Options{Repo: repo, FleetID: "bench", Fleet: fl, Runs: runs, EscalateAfter: -1})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Round(ctx); err != nil {
				b.Fatal(err)
			}
			if err := s.Close(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var total, live int64
	q := `SELECT sum(pg_total_relation_size(('laserbrain.' || t)::regclass)) FROM unnest(ARRAY['journal','journal_archive','journal_heads','journal_marks']) t`
	if err := conn.QueryRow(ctx, q).Scan(&total); err != nil {
		b.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT pg_total_relation_size('laserbrain.journal')`).Scan(&live); err != nil {
		b.Fatal(err)
	}
	c, err := fleet.CheckJournal(ctx, fl, "bench")
	if err != nil || c.Problem != nil {
		b.Fatalf("the journal after %d rounds: %v, %v", prior, c.Problem, err)
	}
	if n, p, err := fleet.CheckArchive(ctx, fl, "bench", c.Records); err != nil || p != nil {
		b.Fatalf("its archive: %d records, %v, %v", n, p, err)
	}
	b.Logf("the journal of %d rounds of %d agents: %d records, %d bytes of database space (%d in the live journal table)", prior, onceAgents, c.Head.Records, total, live)
	b.ReportMetric(float64(total)/(1<<20), "journal-mb")
	b.ReportMetric(float64(live)/(1<<20), "live-mb")
	if prior >= 1000 && total > 5<<20 {
		b.Errorf("the journal of %d rounds takes %.1f MB of database space (target 5 MB)", prior, float64(total)/(1<<20))
	}
}
