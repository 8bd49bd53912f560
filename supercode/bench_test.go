package supercode

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
)

// The fleet the benchmarks watch: 50 agents, every fifth pair sharing a
// ground (and five pairs overlapping 0.67 by accident of the wording), each spelling its ground with a falling distance, wandering to a
// side goal every seventh step and getting stuck every eleventh, and each
// with a few observed events (so catches and fleet catches have work).

const fleetSize, stepsEach = 50, 1000

var words = []string{"parser", "cache", "billing", "footer", "schema", "router", "importer", "tokens", "search", "upload",
	"session", "ledger", "metrics", "queue", "themes", "gateway", "exporter", "locale", "auth", "reports"}

func groundOf(i int) string {
	if i%5 == 1 { // agent 1 shares agent 0's ground, 6 shares 5's, ...
		i--
	}
	return fmt.Sprintf("build the %s %s for team %d", words[i%len(words)], words[(i/len(words)+3)%len(words)], i)
}

func stepOf(i, k int) laserbrain.StepInput {
	g, p := groundOf(i), laserbrain.ProgressAdvancing
	switch {
	case k%7 == 6:
		g = "tidy the " + words[(i+k)%len(words)] + " docs"
	case k%11 == 10:
		p = laserbrain.ProgressStuck
	}
	return laserbrain.StepInput{Goal: g, Progress: p, Distance: laserbrain.Dist(10 - (k/100)%10)}
}

func names() []string {
	out := make([]string, fleetSize)
	for i := range out {
		out[i] = fmt.Sprintf("agent-%02d", i)
	}
	return out
}

func seedEvents(s *Supercode, ns []string) {
	for i, n := range ns {
		s.Saw(n, laserbrain.CheckEvent("tests", i%3 != 0), laserbrain.ToolEvent("pytest", fmt.Sprintf("%d passed", i)),
			laserbrain.ClaimEvent("parser", "it holds"), laserbrain.EditEvent("a.go", 2))
	}
}

// watched builds the state the report benchmark reads: every agent
// observed stepsEach times.
func watched(b *testing.B) (*Supercode, []string) {
	s := newSC(b)
	ns := names()
	seedEvents(s, ns)
	for k := 0; k < stepsEach; k++ {
		for i, n := range ns {
			observe(b, s, n, stepOf(i, k))
		}
	}
	return s, ns
}

// baseline is one bare laserbrain check per agent — 50 Run.Step calls on
// the same inputs, no supervisor — timed once per benchmark run, before the
// first benchmark that reports against it (testing.Benchmark cannot be
// called from inside a benchmark).
var baseline = sync.OnceValue(func() time.Duration {
	runs := make([]*laserbrain.Run, fleetSize)
	for i := range runs {
		runs[i] = laserbrain.NewRun(laserbrain.RunOptions{})
	}
	round := func(k int) {
		for i, r := range runs {
			_, _ = r.Step(stepOf(i, k))
			r.HistorySaved()
			r.ReleaseSavedHistory()
		}
	}
	for k := 0; k < 200; k++ { // warm up: grounds set, memos filled
		round(k)
	}
	const rounds = 2000
	start := time.Now()
	for k := 200; k < 200+rounds; k++ {
		round(k)
	}
	return time.Since(start) / rounds
})

func reportRatio(b *testing.B, perOp time.Duration) {
	b.ReportMetric(float64(perOp)/float64(baseline()), "x-50-bare-checks")
}

// BenchmarkObserveCollisions: 50 agents × 1,000 steps, each round of 50
// observations followed by Collisions. One op is the whole 50,000-step run.
func BenchmarkObserveCollisions(b *testing.B) {
	ns := names()
	for n := 0; n < b.N; n++ {
		s := newSC(b)
		seedEvents(s, ns)
		want := -1
		for k := 0; k < stepsEach; k++ {
			for i, name := range ns {
				observe(b, s, name, stepOf(i, k))
			}
			// Grounds are fixed, so the collisions are the same every
			// round: the 10 shared grounds and 5 near ones.
			if got := len(s.Collisions()); want < 0 {
				want = got
			} else if got != want || got < fleetSize/5 {
				b.Fatalf("round %d: %d collisions, then %d", k, want, got)
			}
		}
	}
	perRound := b.Elapsed() / time.Duration(b.N*stepsEach)
	b.ReportMetric(float64(perRound.Nanoseconds()), "ns/round")
	reportRatio(b, perRound)
}

// BenchmarkReport: the report on the state of 50 agents × 1,000 steps.
func BenchmarkReport(b *testing.B) {
	s, _ := watched(b)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if _, err := s.Report(); err != nil {
			b.Fatal(err)
		}
	}
	reportRatio(b, b.Elapsed()/time.Duration(b.N))
}

// BenchmarkRound: one full supervision round on that state — observe one
// step per agent, then collisions, route and findings. Target: < 1 ms.
func BenchmarkRound(b *testing.B) {
	s, ns := watched(b)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		k := stepsEach + n
		for i, name := range ns {
			if _, err := s.Observe(name, stepOf(i, k)); err != nil {
				b.Fatal(err)
			}
		}
		s.Collisions()
		s.Route()
		s.Findings()
	}
	reportRatio(b, b.Elapsed()/time.Duration(b.N))
}
