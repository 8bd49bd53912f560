package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// BenchmarkCoverageGate is `make bench-coverage`: what holding an agent to
// coverage adds to the installed gate's whole process. Medians of whole
// processes, interleaved in a fresh order each round: /bin/true; the gate on
// a Bash call of no session (nothing to look up); the same call under
// laserbrain run (LASERBRAIN_RUN and the rest exported) with coverage off
// (LASERBRAIN_COVERAGE=off: the halt check, the operator, the voice's one
// stat); with coverage on, which reads the run and its record (3 steps
// since a check: allowed); the same for a session keyed by its id (its run
// found through the session); a read in the warning band (6 steps: allowed,
// warned) and an acting call past it (refused, the refusal recorded on the
// run). It fails when coverage adds more than 0.3 ms to the allowed call's
// median under laserbrain run.
func BenchmarkCoverageGate(b *testing.B) {
	gate := buildGate(b)
	home := b.TempDir()
	b.Setenv("LASERBRAIN_HOME", home)
	st, err := fleet.OpenLocal(filepath.Join(home, "fleet"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, r := range []struct {
		id    string
		steps int
	}{{"bench-ok", 3}, {"bench-late", 6}} {
		rec := &coverage.Record{Agent: "bench", Goal: "make the parser pass its tests", Steps: r.steps + 1,
			Checks: []coverage.Check{{Step: 1, Goal: "make the parser pass its tests", Progress: "advancing", Distance: json.RawMessage("5"), Reason: "grounded"}}}
		raw, err := json.Marshal(rec)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.CreateRun(ctx, fleet.Run{ID: r.id, Agent: "bench", Fleet: "bench", Sessions: []string{r.id}, Created: time.Now().UTC(), Coverage: raw}); err != nil {
			b.Fatal(err)
		}
	}
	// A run 1,000 checks in (each after a tool call), its record as the
	// hooks keep it (agentrun.SetCoverageRecord) and, beside it, the same
	// record kept whole, as it was before: every check listed.
	long := &coverage.Record{Agent: "bench", Goal: "make the parser pass its tests"}
	for i := 0; i < 1000; i++ {
		long.Steps += 2
		long.Checks = append(long.Checks, coverage.Check{Step: long.Steps, Goal: "make the parser pass its tests", Progress: "advancing",
			Distance: json.RawMessage("5"), Reason: "grounded", Phi: json.RawMessage("0.12"), Anchored: json.RawMessage("0.5")})
	}
	long.Steps += 3
	whole, err := json.Marshal(long)
	if err != nil {
		b.Fatal(err)
	}
	var keptRun fleet.Run
	if err := agentrun.SetCoverageRecord(&keptRun, long); err != nil {
		b.Fatal(err)
	}
	for id, raw := range map[string][]byte{"bench-long": keptRun.Coverage, "bench-long-whole": whole} {
		if err := st.CreateRun(ctx, fleet.Run{ID: id, Agent: "bench", Fleet: "bench", Created: time.Now().UTC(), Coverage: raw}); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("the long run's record: %d bytes kept, %d whole", len(keptRun.Coverage), len(whole))
	bash := func(session string) string {
		return fmt.Sprintf(`{"session_id":%q,"tool_use_id":"t","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"go test ./... && git status"}}`, session)
	}
	read := `{"session_id":"s","tool_use_id":"t","tool_name":"Read","cwd":"/tmp","tool_input":{"file_path":"/tmp/x"}}`
	base := quietEnv()
	// Under laserbrain run the hooks know the run from what it exported.
	runEnv := func(id string) []string {
		return append(append([]string(nil), base...), "LASERBRAIN_RUN="+id, "LASERBRAIN_AGENT=bench", "LASERBRAIN_FLEET=bench")
	}
	cs := []*contender{
		{name: "true", argv: []string{"/bin/true"}},
		{name: "gate-no-session", argv: []string{gate}, event: bash(""), env: base},
		{name: "gate-run-coverage-off", argv: []string{gate}, event: bash("s"), env: append(runEnv("bench-ok"), coverage.ModeEnv+"="+string(coverage.Off))},
		{name: "gate-run-coverage-on", argv: []string{gate}, event: bash("s"), env: runEnv("bench-ok")},
		{name: "gate-session-coverage-on", argv: []string{gate}, event: bash("bench-ok"), env: base},
		{name: "gate-run-warn-read", argv: []string{gate}, event: read, env: runEnv("bench-late")},
		{name: "gate-run-refused", argv: []string{gate}, event: bash("s"), env: runEnv("bench-late"), wantExit: 2},
		{name: "gate-run-1000-checks", argv: []string{gate}, event: bash("s"), env: runEnv("bench-long")},
		{name: "gate-run-1000-checks-whole", argv: []string{gate}, event: bash("s"), env: runEnv("bench-long-whole")},
	}
	eventFiles(b, cs)
	rounds(b, cs, 5, func(c *contender, _ int) {
		if code, err := c.runOnce(b); code != c.wantExit {
			b.Fatalf("%s exited %d (%v), want %d", c.name, code, err, c.wantExit)
		}
	})
	report := medians(b, cs, fmt.Sprintf("medians over %d runs each:", len(cs[0].times)))
	off, on := median(cs[2].times), median(cs[3].times)
	report += fmt.Sprintf("  a session keyed by its id (no LASERBRAIN_RUN) pays %.3f ms over the run's own, to find its run\n",
		float64((median(cs[4].times)-on).Microseconds())/1000)
	added := on - off
	report += fmt.Sprintf("  coverage adds %.3f ms to the allowed call (%.3f× the gate without it)\n", float64(added.Microseconds())/1000, float64(on)/float64(off))
	longKept, longWhole := median(cs[7].times), median(cs[8].times)
	report += fmt.Sprintf("  1,000 checks in: %.3f ms as the hooks keep the record (%.2f× a fresh run's), %.3f ms were it kept whole\n",
		float64(longKept.Microseconds())/1000, float64(longKept)/float64(on), float64(longWhole.Microseconds())/1000)
	b.ReportMetric(float64(longKept)/float64(on), "x-fresh-at-1000")
	b.ReportMetric(float64(on)/float64(off), "x-without")
	b.ReportMetric(float64(added.Microseconds())/1000, "added-ms")
	b.Log(report)
	if added > 300*time.Microsecond {
		b.Errorf("coverage adds %v to the gate's median (%v without it, %v with): over the 0.3 ms budget", added, off, on)
	}
}
