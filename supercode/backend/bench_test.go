package backend

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/laserbrain"
)

// durablePG is a private PostgreSQL with the durability a real server has
// (the shared test cluster runs with fsync off), reached over its Unix
// socket.
func durablePG(b *testing.B) string {
	b.Helper()
	c := pgtest.StartCluster(b)
	c.Durable(b)
	return pgtest.URL(b, c.NewDatabase(b))
}

var benchInput = laserbrain.StepInput{Goal: "add a CSV importer to the admin panel", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(6)}

// benchConfigs is the two backends on the same machine: the local home and
// PostgreSQL over its Unix socket.
func benchConfigs(b *testing.B) []Config {
	local, _ := Parse("local", filepath.Join(b.TempDir(), "home"))
	pg, _ := Parse(durablePG(b), filepath.Join(b.TempDir(), "pghome"))
	if _, err := Init(context.Background(), pg); err != nil {
		b.Fatal(err)
	}
	return []Config{local, pg}
}

// BenchmarkStoreSteps: checks per second on each backend, side by side in
// one run. "check" is what a hook or the MCP server does for every check:
// open the run, step, save, flush (durable), close. "stream" is check
// --stream: the run held, saves spilled, one flush at the end (10,000
// steps). x-local is the PostgreSQL figure over the local one, same kind.
func BenchmarkStoreSteps(b *testing.B) {
	ctx := context.Background()
	cfgs := benchConfigs(b)
	perStep := map[string]float64{}
	for _, kind := range []string{"check", "stream"} {
		for _, cfg := range cfgs {
			b.Run(kind+"/"+cfg.Kind, func(b *testing.B) {
				runs, err := OpenRuns(cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer runs.Close()
				steps, i := 0, 0
				for b.Loop() {
					i++
					switch kind {
					case "check":
						h, err := runs.OpenRun(ctx, "bench-check")
						if err != nil {
							b.Fatal(err)
						}
						h.Run().Step(benchInput)
						if err := h.Save(ctx); err != nil {
							b.Fatal(err)
						}
						h.Close()
						if err := runs.Flush(ctx); err != nil {
							b.Fatal(err)
						}
						steps++
					case "stream":
						h, err := runs.OpenRun(ctx, fmt.Sprintf("bench-stream-%d", i))
						if err != nil {
							b.Fatal(err)
						}
						for k := 0; k < 10_000; k++ {
							h.Run().Step(benchInput)
							if k%1024 == 1023 {
								if err := h.Save(ctx); err != nil {
									b.Fatal(err)
								}
							}
						}
						if err := h.Save(ctx); err != nil {
							b.Fatal(err)
						}
						h.Close()
						if err := runs.Flush(ctx); err != nil {
							b.Fatal(err)
						}
						steps += 10_000
					}
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(steps)
				b.ReportMetric(ns, "ns/step")
				b.ReportMetric(1e9/ns, "steps/s")
				perStep[kind+cfg.Kind] = ns
				if cfg.Kind == Postgres && perStep[kind+Local] > 0 {
					b.ReportMetric(ns/perStep[kind+Local], "x-local")
				}
			})
		}
	}
}
