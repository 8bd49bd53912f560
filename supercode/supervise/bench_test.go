package supervise

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testhome"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/laserbrain/storetest"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// The benchmark's fleet: 20 ponder sessions of 50 decided passes each and
// 20 agent runs of 1,000 checks (and 1,000 recorded tool calls) each, on one
// repository — built once, with ponder's own engine and laserbrain's own
// run store. The events files are written in one go, in the format 1,000
// AppendEvent calls each would leave (they would take minutes of fsyncs).
const (
	benchSessions = 20
	benchPasses   = 50
	benchAgents   = 20
	benchSteps    = 1000
)

var words = []string{"lexer", "parser", "linker", "loader", "scheduler", "allocator", "tokenizer", "renderer", "compiler", "resolver",
	"indexer", "planner", "router", "encoder", "decoder", "mapper", "reducer", "sampler", "watcher", "builder", "archiver", "validator"}

type benchFleet struct {
	repo, fleetDir, runsDir string
	fid                     string
}

var (
	benchOnce sync.Once
	bench     benchFleet
	benchErr  error
)

// TestMain removes the benchmarks' fleet, built once for the whole process
// in a temporary directory of its own, when the process is done.
func TestMain(m *testing.M) {
	code := testhome.Main(m)
	if bench.repo != "" {
		os.RemoveAll(filepath.Dir(bench.repo))
	}
	os.Exit(code)
}

func buildBenchFleet(tb testing.TB) benchFleet {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "supervise-bench-")
		if err != nil {
			benchErr = err
			return
		}
		bench = benchFleet{repo: filepath.Join(dir, "repo"), fleetDir: filepath.Join(dir, "fleet"), runsDir: filepath.Join(dir, "runs"), fid: "bench"}
		benchErr = bench.build()
	})
	if benchErr != nil {
		tb.Fatal(benchErr)
	}
	return bench
}

func (f benchFleet) build() error {
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		p := filepath.Join(f.repo, "src", fmt.Sprintf("f%d.go", i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("package src"), 0o644); err != nil {
			return err
		}
	}
	eng := ponder.New(f.repo, nil)
	for s := 0; s < benchSessions; s++ {
		st, err := eng.Start(ponder.StartOptions{Subject: "audit of the " + words[s] + " subsystem", Passes: benchPasses + 10})
		if err != nil {
			return err
		}
		if _, err := eng.Units(st.Slug, ponder.UnitsOptions{Scan: "src"}); err != nil {
			return err
		}
		for k := 1; k <= benchPasses; k++ {
			if k > 1 {
				if _, err := eng.Predict(st.Slug, 0, nil); err != nil {
					return err
				}
			}
			if _, err := eng.Deliberate(st.Slug, voices(), false); err != nil {
				return err
			}
			if k == 1 {
				if _, err := eng.Grade(st.Slug, []string{"u0001", "u0002", "u0003", "u0004", "u0005", "u0006", "u0007", "u0008", "u0009", "u0010"}, nil); err != nil {
					return err
				}
			}
			if _, err := eng.Judge(st.Slug); err != nil {
				return err
			}
			if _, err := eng.Decide(st.Slug, "continue"); err != nil {
				return err
			}
		}
	}
	fl, err := fleet.OpenLocal(f.fleetDir)
	if err != nil {
		return err
	}
	runs, err := localstore.Open(localstore.Paths{Home: f.runsDir, Config: filepath.Join(f.runsDir, "config")})
	if err != nil {
		return err
	}
	defer runs.Close()
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	for a := 0; a < benchAgents; a++ {
		id := fmt.Sprintf("run%02d", a)
		if err := fl.CreateRun(ctx, fleet.Run{ID: id, Agent: "agent", Fleet: f.fid, Dir: f.repo, Created: t0, Task: id, Tasks: 1, Checks: benchSteps}); err != nil {
			return err
		}
		h, err := runs.OpenRun(ctx, id)
		if err != nil {
			return err
		}
		goal := "build the " + words[(a+2)%len(words)] + " feature for release " + fmt.Sprint(a)
		for i := 0; i < benchSteps; i++ {
			if _, err := h.Run().Step(laserbrain.StepInput{Goal: goal, Progress: "advancing", Distance: laserbrain.Dist(5 + i%4)}); err != nil {
				return err
			}
		}
		if err := h.Save(ctx); err != nil {
			return err
		}
		h.Close()
		var buf bytes.Buffer
		for i := 0; i < benchSteps; i++ {
			e := fleet.RunEvent{ID: fmt.Sprintf("tool:%s-%d", id, i), At: t0, Kind: fleet.KindTool, Name: "Bash", OK: laserbrain.OKTrue,
				Text: fmt.Sprintf("go test ./src/... -run T%d", i), Result: json.RawMessage(fmt.Sprintf(`{"stdout":"ok %d"}`, i))}
			b, _ := json.Marshal(e)
			buf.Write(b)
			buf.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(f.fleetDir, "events", id+".jsonl"), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return runs.Flush(ctx)
}

func (f benchFleet) open(tb testing.TB) (*Supervisor, *fleet.Local) {
	fl, err := fleet.OpenLocal(f.fleetDir)
	if err != nil {
		tb.Fatal(err)
	}
	runs, err := localstore.Open(localstore.Paths{Home: f.runsDir, Config: filepath.Join(f.runsDir, "config")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { runs.Close() })
	s, err := Open(context.Background(), Options{Repo: f.repo, FleetID: f.fid, Fleet: fl, Runs: runs, ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	return s, fl
}

// BenchmarkRound: a round over 20 sessions × 50 passes and 20 agents ×
// 1,000 steps.
//
//   - first: the first round of a new supervisor, which reads everything;
//   - idle: every later round in which nothing happened (the polling cost);
//   - busy: a later round in which one session decided a pass and one
//     agent made a check and a tool call;
//   - baseline: what a supervisor without the incremental reading would do
//     every round — read every session afresh (ponder's Facts, 20 ×) —
//     measured in the same run, for the ratio.
func BenchmarkRound(b *testing.B) {
	f := buildBenchFleet(b)
	ctx := context.Background()
	b.Run("first", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s, _ := f.open(b)
			r, err := s.Round(ctx)
			if err != nil || len(r.Agents) != benchSessions+benchAgents {
				b.Fatalf("%v, %d agents", err, len(r.Agents))
			}
		}
	})
	b.Run("idle", func(b *testing.B) {
		s, _ := f.open(b)
		if _, err := s.Round(ctx); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := s.Round(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("busy", func(b *testing.B) {
		s, fl := f.open(b)
		if _, err := s.Round(ctx); err != nil {
			b.Fatal(err)
		}
		eng := ponder.New(f.repo, nil)
		slugs, _ := eng.Slugs()
		runs, _ := localstore.Open(localstore.Paths{Home: f.runsDir, Config: filepath.Join(f.runsDir, "config")})
		defer runs.Close()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			slug := slugs[i%len(slugs)]
			if _, err := eng.Predict(slug, 0, nil); err != nil {
				b.Fatal(err)
			}
			if _, err := eng.Deliberate(slug, voices(), false); err != nil {
				b.Fatal(err)
			}
			if _, err := eng.Judge(slug); err != nil {
				b.Fatal(err)
			}
			if _, err := eng.Decide(slug, "continue"); err != nil {
				b.Fatal(err)
			}
			id := fmt.Sprintf("run%02d", i%benchAgents)
			v, _ := s.sc.View(fleet.RunAgent(fleet.Run{ID: id, Agent: "agent"}))
			recordCheck(b, runs, fl, id, v.Ground, 6)
			if _, err := fl.AppendEvent(ctx, id, fleet.RunEvent{Kind: fleet.KindTool, Name: "Bash", OK: laserbrain.OKTrue, Text: "go vet ./src/..."}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := s.Round(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline", func(b *testing.B) {
		eng := ponder.New(f.repo, nil)
		slugs, _ := eng.Slugs()
		for i := 0; i < b.N; i++ {
			for _, slug := range slugs {
				if _, err := eng.Facts(slug); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestBenchFleetShape keeps the benchmark honest about what it measures:
// the fixture has the sizes it claims (a short run of the real builder is
// too slow for every test run, so only under -bench or with
// SUPERVISE_BENCH_CHECK=1).
func TestBenchFleetShape(t *testing.T) {
	if os.Getenv("SUPERVISE_BENCH_CHECK") == "" {
		t.Skip("set SUPERVISE_BENCH_CHECK=1 to build the benchmark's fleet and check it")
	}
	f := buildBenchFleet(t)
	s, _ := f.open(t)
	r, err := s.Round(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sessions, agents := 0, 0
	for _, a := range r.Agents {
		switch {
		case a.Kind == KindPonder && a.Steps == benchPasses+1:
			sessions++
		case a.Kind == KindRun && a.Steps == benchSteps:
			agents++
		}
	}
	if sessions != benchSessions || agents != benchAgents || !strings.HasPrefix(r.Self.Reason, "") {
		t.Fatalf("%d sessions of %d steps, %d agents of %d steps", sessions, benchPasses+1, agents, benchSteps)
	}
}

// onceFleet is a fleet of onceAgents agent runs of onceSteps checks each,
// with its own fleet and run stores in dir.
const (
	onceAgents = 50
	onceSteps  = 100
)

type onceFleet struct {
	dir, repo     string
	agents, steps int
}

func (o onceFleet) stores(tb testing.TB) (*fleet.Local, *localstore.Store) {
	fl, err := fleet.OpenLocal(filepath.Join(o.dir, "fleet"))
	if err != nil {
		tb.Fatal(err)
	}
	runs, err := localstore.Open(localstore.Paths{Home: filepath.Join(o.dir, "runs"), Config: filepath.Join(o.dir, "runs", "config")})
	if err != nil {
		tb.Fatal(err)
	}
	return fl, runs
}

func buildOnceFleet(tb testing.TB, dir string) onceFleet {
	return buildFleetOf(tb, dir, onceAgents, onceSteps)
}

// buildFleetOf is a fleet of agents agent runs of steps checks each, their
// goals clustered (clusteredGoal).
func buildFleetOf(tb testing.TB, dir string, agents, steps int) onceFleet {
	return buildFleetWith(tb, dir, agents, steps, clusteredGoal)
}

// clusteredGoal puts agent a's goal in one of len(words) clusters: two
// agents of a cluster share six of their eight words, and collide.
func clusteredGoal(a int) string {
	return "build the " + words[a%len(words)] + " feature for release " + fmt.Sprint(a)
}

// spreadGoal is a goal no other agent's overlaps.
func spreadGoal(a int) string {
	return fmt.Sprintf("tune module m%d so that q%d passes its s%d checks", a, a, a)
}

// buildFleetWith is a fleet of agents agent runs of steps checks each,
// agent a's goal goal(a).
func buildFleetWith(tb testing.TB, dir string, agents, steps int, goalOf func(int) string) onceFleet {
	return buildFleetSteps(tb, dir, agents, func(int) int { return steps }, goalOf)
}

// buildFleetSteps is a fleet of agents agent runs, agent a's goal goal(a)
// and steps(a) checks.
func buildFleetSteps(tb testing.TB, dir string, agents int, stepsOf func(int) int, goalOf func(int) string) onceFleet {
	ctx := context.Background()
	o := onceFleet{dir: dir, repo: filepath.Join(dir, "repo"), agents: agents, steps: stepsOf(0)}
	if err := os.MkdirAll(o.repo, 0o755); err != nil {
		tb.Fatal(err)
	}
	fl, runs := o.stores(tb)
	defer runs.Close()
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	for a := 0; a < agents; a++ {
		id := fmt.Sprintf("run%02d", a)
		steps := stepsOf(a)
		if err := fl.CreateRun(ctx, fleet.Run{ID: id, Agent: "agent", Fleet: "bench", Dir: o.repo, Created: t0, Task: id, Tasks: 1, Checks: steps}); err != nil {
			tb.Fatal(err)
		}
		ins := make([]laserbrain.StepInput, steps)
		for i := range ins {
			ins[i] = laserbrain.StepInput{Goal: goalOf(a), Progress: "advancing", Distance: laserbrain.Dist(5 + i%4)}
		}
		storetest.Save(tb, runs, id, ins...)
	}
	if err := runs.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	return o
}

// home makes the fleet's own directory the laserbrain home (what this
// machine verified of its journal is kept there, machine.json) until the
// function returned is called: two fleets built side by side each have
// their own, as two machines would.
func (o onceFleet) home() (restore func()) {
	old, had := os.LookupEnv("LASERBRAIN_HOME")
	_ = os.Setenv("LASERBRAIN_HOME", filepath.Join(o.dir, "home"))
	return func() {
		if had {
			_ = os.Setenv("LASERBRAIN_HOME", old)
		} else {
			_ = os.Unsetenv("LASERBRAIN_HOME")
		}
	}
}

// check makes one more check on agent a, as its hooks would record it.
func (o onceFleet) check(tb testing.TB, a int) {
	fl, runs := o.stores(tb)
	defer runs.Close()
	recordCheck(tb, runs, fl, fmt.Sprintf("run%02d", a%o.agents), "", 5)
}

// recordCheck makes one check on run id as its hooks record it: a step
// toward goal (the run's ground when "") at distance d, saved, and the
// run's checks counted.
func recordCheck(tb testing.TB, runs laserbrain.Store, fl fleet.Store, id, goal string, d int) {
	tb.Helper()
	ctx := context.Background()
	h, err := runs.OpenRun(ctx, id)
	if err != nil {
		tb.Fatal(err)
	}
	if goal == "" {
		goal = h.Run().GroundGoal()
	}
	if _, err := h.Run().Step(laserbrain.StepInput{Goal: goal, Progress: "advancing", Distance: laserbrain.Dist(d)}); err != nil {
		tb.Fatal(err)
	}
	if err := h.Save(ctx); err != nil {
		tb.Fatal(err)
	}
	h.Close()
	if _, err := fl.UpdateRun(ctx, id, func(r *fleet.Run) error { r.Checks++; return nil }); err != nil {
		tb.Fatal(err)
	}
}

// once is laserbrain supervise --once: open (resuming from the journal),
// one round, close.
func (o onceFleet) once(tb testing.TB) *Round {
	defer o.home()()
	ctx := context.Background()
	fl, runs := o.stores(tb)
	defer runs.Close()
	s, err := Open(ctx, Options{Repo: o.repo, FleetID: "bench", Fleet: fl, Runs: runs, EscalateAfter: -1})
	if err != nil {
		tb.Fatal(err)
	}
	r, err := s.Round(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		tb.Fatal(err)
	}
	if len(r.Agents) != o.agents {
		tb.Fatalf("%d agents in the round, want %d", len(r.Agents), o.agents)
	}
	return r
}

// BenchmarkSuperviseOnceAfter1000: laserbrain supervise --once on a fleet
// of 50 agents × 100 checks whose journal holds 1,000 earlier rounds
// (each after one agent made one more check, as a supervisor from cron
// sees it), against the first round on the same fleet — the same runs and
// checks, built side by side — with no journal, interleaved; before each
// pair one agent makes one more check. x-first is the ratio of the
// medians: a start verifies only what was journaled since its last
// checkpoint, so it is bounded at 1.3. journal-mb is the journal of the
// 1,000 rounds on disk, archive included (target 5 MB).
func BenchmarkSuperviseOnceAfter1000(b *testing.B) {
	dir := b.TempDir()
	first := buildOnceFleet(b, filepath.Join(dir, "first"))
	after := buildOnceFleet(b, filepath.Join(dir, "after"))
	prior := 1000
	if n, err := strconv.Atoi(os.Getenv("SUPERVISE_BENCH_PRIOR")); err == nil && n > 0 {
		prior = n // a shorter history, to measure a build that cannot afford 1,000
	}
	for i := 0; i < prior; i++ {
		// The same checks on both fleets: they differ by their journals.
		first.check(b, i)
		after.check(b, i)
		after.once(b)
	}
	// The journal of 1,000 rounds on disk, its archive included.
	onDisk := dirSize(b, filepath.Join(after.dir, "fleet", "journal"))
	b.Logf("the journal of %d rounds of %d agents: %d bytes on disk, archive included", prior, onceAgents, onDisk)
	if prior >= 1000 && onDisk > 5<<20 {
		b.Errorf("the journal of %d rounds of %d agents takes %.1f MB on disk (target 5 MB)", prior, onceAgents, float64(onDisk)/(1<<20))
	}
	journal := filepath.Join(first.dir, "fleet", "journal")
	var tf, ta []time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		first.check(b, i)
		after.check(b, i)
		i++
		// A first round: no journal, and nothing this machine verified
		// of one (machine.json in the fleet's own home).
		if err := os.RemoveAll(journal); err != nil {
			b.Fatal(err)
		}
		if err := os.Remove(filepath.Join(first.dir, "home", "machine.json")); err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
		if err := os.MkdirAll(journal, 0o755); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		first.once(b)
		tf = append(tf, time.Since(start))
		start = time.Now()
		after.once(b)
		ta = append(ta, time.Since(start))
	}
	slices.Sort(tf)
	slices.Sort(ta)
	f, a := tf[len(tf)/2], ta[len(ta)/2]
	b.ReportMetric(float64(f.Microseconds())/1000, "first-ms")
	b.ReportMetric(float64(a.Microseconds())/1000, "after1000-ms")
	b.ReportMetric(float64(a)/float64(f), "x-first")
	b.ReportMetric(float64(onDisk)/(1<<20), "journal-mb") // after the loop: the loop's start resets metrics
	b.Logf("--once: first round %v, after %d rounds %v (medians of %d): %.2f×", f, prior, a, len(tf), float64(a)/float64(f))
	if float64(a) > 1.3*float64(f) {
		b.Errorf("--once after 1,000 rounds takes %.2f× a first round, over 1.3×", float64(a)/float64(f))
	}
}

// BenchmarkSuperviseClustered: a round on 1,000 agents after 10 of them
// checked again, on two shapes of fleet built the same way: goals in 22
// clusters (22,230 collisions, 462 of them with no basis to choose:
// clusterSteps) and goals that overlap nobody's. Each shape's first two
// rounds are taken before the timer; then every iteration 10 agents check once
// more and the supervisor that took the first round (laserbrain supervise
// --watch) takes a round, and 10 more check and a new supervisor takes one
// (--once: it reads every agent's history again). cpu-ms is a round's CPU
// (user + system, this process), journal-kb what it added to the journal on
// disk, medians. The target: ≤ 0.5 s of CPU and ≤ 100 KB for the round on
// the clustered fleet; x-spread is its CPU over the spread fleet's.
func BenchmarkSuperviseClustered(b *testing.B) {
	dir := b.TempDir()
	type taken struct {
		cpu  []time.Duration
		grew []int64
	}
	shapes := []struct {
		name        string
		goal        func(int) string
		o           onceFleet
		sup         *Supervisor
		watch, once taken
	}{{name: "clustered", goal: clusteredGoal}, {name: "spread", goal: spreadGoal}}
	ctx := context.Background()
	for i := range shapes {
		sh := &shapes[i]
		sh.o = buildFleetSteps(b, filepath.Join(dir, sh.name), clusterAgents, clusterSteps, sh.goal)
		fl, runs := sh.o.stores(b)
		b.Cleanup(func() { runs.Close() })
		var err error
		restore := sh.o.home()
		if sh.sup, err = Open(ctx, Options{Repo: sh.o.repo, FleetID: "bench", Fleet: fl, Runs: runs, EscalateAfter: -1}); err != nil {
			b.Fatal(err)
		}
		// The first round writes every collision; the next one's
		// checkpoint archives them (RotateBytes). Both are taken before
		// the timer, so that a timed round's growth is what it appended,
		// not a rotation's shrinking.
		for range 2 {
			if _, err := sh.sup.Round(ctx); err != nil {
				b.Fatal(err)
			}
		}
		restore()
	}
	// take measures one round after 10 agents checked.
	take := func(t *taken, o onceFleet, from int, round func(), profile bool) {
		b.StopTimer()
		for n := 0; n < 10; n++ {
			o.check(b, from+n*97)
		}
		journal := filepath.Join(o.dir, "fleet", "journal")
		before := dirSize(b, journal)
		b.StartTimer()
		stop := profileOnce(b, profile)
		c0 := processCPU()
		round()
		t.cpu = append(t.cpu, processCPU()-c0)
		stop()
		t.grew = append(t.grew, dirSize(b, journal)-before)
	}
	i := 0
	for b.Loop() {
		for k := range shapes {
			sh := &shapes[k]
			take(&sh.watch, sh.o, i*20, func() {
				defer sh.o.home()()
				if _, err := sh.sup.Round(ctx); err != nil {
					b.Fatal(err)
				}
			}, i == 0 && k == 0)
			take(&sh.once, sh.o, i*20+10, func() { sh.o.once(b) }, false)
		}
		i++
	}
	cl, sp := shapes[0], shapes[1]
	cpu, grew := median(cl.watch.cpu), median(cl.watch.grew)
	b.ReportMetric(float64(cpu.Microseconds())/1000, "cpu-ms")
	b.ReportMetric(float64(grew)/1024, "journal-kb")
	b.ReportMetric(float64(median(sp.watch.cpu).Microseconds())/1000, "spread-cpu-ms")
	b.ReportMetric(float64(cpu)/float64(median(sp.watch.cpu)), "x-spread")
	b.ReportMetric(float64(median(cl.once.cpu).Microseconds())/1000, "once-cpu-ms")
	b.ReportMetric(float64(median(cl.once.grew))/1024, "once-journal-kb")
	b.ReportMetric(float64(median(sp.once.cpu).Microseconds())/1000, "spread-once-cpu-ms")
	b.ReportMetric(float64(median(cl.once.cpu))/float64(median(sp.once.cpu)), "once-x-spread")
	b.Logf("a round after 10 checks — clustered: %v CPU, %d bytes of journal; spread: %v, %d bytes. --once: clustered %v, %d bytes; spread %v, %d bytes (medians of %d)",
		cpu, grew, median(sp.watch.cpu), median(sp.watch.grew), median(cl.once.cpu), median(cl.once.grew), median(sp.once.cpu), median(sp.once.grew), len(cl.watch.cpu))
	if cpu > 500*time.Millisecond || grew > 100<<10 || median(cl.once.grew) > 100<<10 {
		b.Errorf("a round on 1,000 clustered agents after 10 checks: %v of CPU, %d KB of journal (--once: %d KB) (target 0.5 s, 100 KB)", cpu, grew>>10, median(cl.once.grew)>>10)
	}
}

// profileOnce writes a CPU profile of what runs until stop to the file
// SUPERVISE_PROFILE names, when on and it does.
func profileOnce(tb testing.TB, on bool) (stop func()) {
	path := os.Getenv("SUPERVISE_PROFILE")
	if !on || path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		tb.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// clusterAgents is the clustered benchmark's fleet size.
const clusterAgents = 1000

// clusterSteps are agent a's checks in the clustered benchmark: the first
// seven agents of each cluster three each (tied: 21 pairs a cluster with no
// basis to choose, 462 in all), every other agent of a cluster a number
// of its own.
func clusterSteps(a int) int {
	if a < 7*len(words) {
		return 3
	}
	return 4 + a%45
}

// processCPU is the CPU this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dirSize is the bytes of the files under dir.
func dirSize(tb testing.TB, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	return n
}

func median[T time.Duration | int64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
