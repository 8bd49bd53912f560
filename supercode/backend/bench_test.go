package backend

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/pgtest"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/storetest"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
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
						storetest.Save(b, runs, "bench-check", benchInput)
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
							if _, err := h.Run().Step(benchInput); err != nil {
								b.Fatal(err)
							}
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

// superviseFleet puts 100 agent runs on a backend: each with a ground of
// its own (no collision, so the round decides nothing and the time is the
// reading), 40 checks and 40 recorded tool calls.
func superviseFleet(b *testing.B, cfg Config, fid string) {
	ctx := context.Background()
	be := New(cfg)
	defer be.Close()
	runs, st := bothStores(b, be)
	t0 := time.Now().UTC()
	for i := 0; i < 100; i++ {
		id := fmt.Sprintf("agent-%03d", i)
		if err := st.CreateRun(ctx, fleet.Run{ID: id, Agent: fmt.Sprintf("w%d", i), Fleet: fid, Created: t0, Task: id, Tasks: 1}); err != nil {
			b.Fatal(err)
		}
		h, err := runs.OpenRun(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		goal := fmt.Sprintf("build the %s module number %d", supervisorWords[i%len(supervisorWords)], i)
		for k := 0; k < 40; k++ {
			if _, err := h.Run().Step(laserbrain.StepInput{Goal: goal, Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(9 - k%9)}); err != nil {
				b.Fatal(err)
			}
		}
		if err := h.Save(ctx); err != nil {
			b.Fatal(err)
		}
		h.Close()
		for k := 0; k < 40; k++ {
			if _, err := st.AppendEvent(ctx, id, fleet.RunEvent{ID: fmt.Sprintf("tool:%d", k), At: t0, Kind: fleet.KindTool, Name: "Bash", OK: laserbrain.OKTrue, Text: "go test ./..."}); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := runs.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

var supervisorWords = []string{"parser", "lexer", "scheduler", "allocator", "renderer", "resolver", "indexer", "planner", "router", "encoder"}

// BenchmarkSuperviseRound100: a supervisor round over 100 agents (40
// checks and 40 tool calls each) on each backend, side by side in one run:
// "first" is a supervisor's first round (it reads every agent's history),
// "next" a round after every agent made one more check and one more tool
// call (what a watching supervisor does). x-local is the PostgreSQL time
// over the local one.
func BenchmarkSuperviseRound100(b *testing.B) {
	ctx := context.Background()
	local := map[string]float64{}
	for _, cfg := range benchConfigs(b) {
		fid := "bench-" + cfg.Kind
		superviseFleet(b, cfg, fid)
		repo := b.TempDir()
		open := func(b *testing.B) (*Backend, *supervise.Supervisor) {
			be := New(cfg)
			runs, st := bothStores(b, be)
			sup, err := supervise.Open(ctx, supervise.Options{Repo: repo, FleetID: fid, Fleet: st, Runs: runs, EscalateAfter: -1})
			if err != nil {
				b.Fatal(err)
			}
			return be, sup
		}
		report := func(b *testing.B, kind string) {
			ms := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / 1e6
			b.ReportMetric(ms, "ms/round")
			if cfg.Kind == Local {
				local[kind] = ms
			} else if local[kind] > 0 {
				b.ReportMetric(ms/local[kind], "x-local")
			}
		}
		b.Run("first/"+cfg.Kind, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				be, sup := open(b)
				b.StartTimer()
				if _, err := sup.Round(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				be.Close()
				b.StartTimer()
			}
			report(b, "first")
		})
		b.Run("next/"+cfg.Kind, func(b *testing.B) {
			be, sup := open(b)
			defer be.Close()
			if _, err := sup.Round(ctx); err != nil {
				b.Fatal(err)
			}
			runs, _ := be.Runs()
			st, _ := be.Fleet()
			n := 0
			for b.Loop() {
				b.StopTimer()
				n++
				for i := 0; i < 100; i++ {
					id := fmt.Sprintf("agent-%03d", i)
					h, err := runs.OpenRun(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := h.Run().Step(laserbrain.StepInput{Goal: fmt.Sprintf("build the %s module number %d", supervisorWords[i%len(supervisorWords)], i), Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(3)}); err != nil {
						b.Fatal(err)
					}
					if err := h.Save(ctx); err != nil {
						b.Fatal(err)
					}
					h.Close()
					if _, err := st.AppendEvent(ctx, id, fleet.RunEvent{ID: fmt.Sprintf("more:%d", n), Kind: fleet.KindTool, Name: "Bash", OK: laserbrain.OKTrue}); err != nil {
						b.Fatal(err)
					}
				}
				if err := runs.Flush(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := sup.Round(ctx); err != nil {
					b.Fatal(err)
				}
			}
			report(b, "next")
		})
	}
}
