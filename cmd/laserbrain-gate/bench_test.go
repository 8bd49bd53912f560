package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/client"
)

// hookEvents are the answers the benchmark times: each one a whole process
// from start to exit, as Claude Code runs a hook.
var hookEvents = []struct {
	name, event string
	env         []string
	// store: the answer reads and writes the fleet store, by design; it
	// is reported, and kept out of the start-up guard below.
	store bool
}{
	{"allow", `{"tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"go test ./... && git status"}}`, nil, false},
	{"deny", `{"tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"git push --mirr origin"}}`, nil, false},
	{"deny-grammar", `{"tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"git push --force origin main"}}`, nil, false},
	{"ask", `{"tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"git commit -m 'why rm -rf is refused'"}}`, nil, false},
	// Unattended, the same commit goes ahead with a note recorded on the
	// session's run (found, and the event's id already there after the
	// first round: the reads and the lock, not the fsync of a new event).
	{"note-unattended", `{"session_id":"bench-session","tool_use_id":"t","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"git commit -m 'why rm -rf is refused'"}}`,
		[]string{"CLAUDE_CODE_SESSION_ATTENDED=0", "LASERBRAIN_FLEET=bench"}, true},
}

// quietEnv is this process's environment without what says who is there
// (the benchmark chooses that per answer).
func quietEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "CI" || k == "LASERBRAIN_ATTENDED" || k == "LASERBRAIN_LOOP_RUN" || k == "LASERBRAIN_RUN" || strings.HasPrefix(k, "CLAUDE_CODE_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// BenchmarkHookProcess is `make bench-hook`: medians of whole processes,
// interleaved so every contender sees the same machine — /bin/true (process
// start alone), an empty Go program (the Go runtime's floor), the floor of
// the gate's required parts (testdata/startfloor: encoding/json, sh/v3's
// parser and regexp2 linked, nothing done; its ratio is what the 1.5×
// gate target leaves nothing under),
// laserbrain-gate on each answer, `laserbrain hook
// pre-tool-use` and `laserbrain --version` (LASERBRAIN_BIN, else built
// here; LASERBRAIN_BASELINE and GATE_BASELINE name earlier builds to time
// beside them) and, when LB_SAFETY names the Python reference hook
// (lb_safety.py), the reference. Each one's ratio to /bin/true is
// reported (*-x-true), with the issue-30 targets it is above (the gate
// 1.5×, laserbrain hook and --version 3×). Those targets are reported, not
// asserted: they do not hold with margin here (what is left above them is
// the start of the parts linked, which floor-gate-parts shows for the
// gate, and the package inits and page faults of a large binary, which
// `laserbrain --version` is all of). It fails when the gate's slowest
// median is over 2.5× /bin/true's (a regression); it flags a median over 3 ms and a ratio to
// the reference under 100× (both bounded by the machine's process start
// cost, which /bin/true shows). What the inits allocate, exact where
// clock times are not, is held by TestStartupInitsAllocateLittle
// (cmd/laserbrain).
func BenchmarkHookProcess(b *testing.B) {
	gate := buildGate(b)
	// The handler looks for the caller's run in the laserbrain home: a
	// fresh one, never the user's.
	b.Setenv("LASERBRAIN_HOME", b.TempDir())
	type contender struct {
		name  string
		argv  []string
		event string
		times []time.Duration
		stdin *os.File
		env   []string
		every int // run in every n-th round only (the slow reference)
	}
	cs := []*contender{{name: "true", argv: []string{"/bin/true"}}, {name: "go-empty-program", argv: []string{buildEmpty(b)}},
		{name: "floor-gate-parts", argv: []string{buildFloor(b)}}}
	gates := len(cs) // the gate's own answers start here, one per event
	for _, e := range hookEvents {
		cs = append(cs, &contender{name: "gate-" + e.name, argv: []string{gate}, event: e.event, env: append(quietEnv(), e.env...)})
	}
	// GATE_BASELINE names another build of the gate (an earlier commit's)
	// to time beside this one, on the same answers, in the same run.
	if baseline := os.Getenv("GATE_BASELINE"); baseline != "" {
		for _, e := range hookEvents {
			if !e.store {
				cs = append(cs, &contender{name: "baseline-" + e.name, argv: []string{baseline}, event: e.event, env: append(quietEnv(), e.env...)})
			}
		}
	}
	// The command line install writes for Claude Code: a shell that checks
	// the gate is there, then becomes it (reported, not guarded: the
	// shell's own start is the client's to pay).
	cs = append(cs, &contender{name: "installed-command-allow", argv: []string{"/bin/sh", "-c", client.HookCommand(gate, client.Claude, client.PreToolUse)},
		event: hookEvents[0].event, env: quietEnv()})
	lb := os.Getenv("LASERBRAIN_BIN")
	if lb == "" {
		lb = buildLaserbrain(b)
	}
	cs = append(cs, &contender{name: "laserbrain-hook-allow", argv: []string{lb, "hook", "pre-tool-use"}, event: hookEvents[0].event},
		&contender{name: "laserbrain-version", argv: []string{lb, "--version"}})
	// LASERBRAIN_BASELINE names another build of laserbrain (an earlier
	// commit's) to time beside this one, in the same run.
	if baseline := os.Getenv("LASERBRAIN_BASELINE"); baseline != "" {
		cs = append(cs, &contender{name: "baseline-laserbrain-hook", argv: []string{baseline, "hook", "pre-tool-use"}, event: hookEvents[0].event},
			&contender{name: "baseline-laserbrain-version", argv: []string{baseline, "--version"}})
	}
	ref := os.Getenv("LB_SAFETY")
	if ref != "" {
		cs = append(cs, &contender{name: "python-reference-allow", argv: []string{"python3", ref}, event: hookEvents[0].event, every: 5},
			&contender{name: "python-reference-deny", argv: []string{"python3", ref}, event: hookEvents[2].event, every: 5})
	}
	// Each event is a file the child reads directly: a pipe would add a
	// copying goroutine to the parent's side of every measurement.
	for i, c := range cs {
		path := filepath.Join(b.TempDir(), fmt.Sprintf("event%d.json", i))
		if err := os.WriteFile(path, []byte(c.event), 0o600); err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		c.stdin = f
	}
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]*contender, len(cs))
	copy(order, cs)
	round := 0
	for b.Loop() {
		// A fresh order each round: whoever runs right after the Python
		// reference finds the caches cold.
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		round++
		for _, c := range order {
			if c.every > 1 && round%c.every != 0 {
				continue
			}
			if _, err := c.stdin.Seek(0, io.SeekStart); err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Stdin, cmd.Env = c.stdin, c.env
			start := time.Now()
			_ = cmd.Run() // deny exits 2 by design
			c.times = append(c.times, time.Since(start))
		}
	}
	base := median(cs[0].times)
	report := fmt.Sprintf("medians over %d runs each (the reference: every 5th round):\n", len(cs[0].times))
	for _, c := range cs {
		m := median(c.times)
		b.ReportMetric(float64(m.Microseconds())/1000, c.name+"-ms")
		report += fmt.Sprintf("  %-24s %8.2f ms  %5.2f× /bin/true\n", c.name, float64(m.Microseconds())/1000, float64(m)/float64(base))
	}
	gateWorst, storeWorst := time.Duration(0), time.Duration(0)
	for i, c := range cs[gates : gates+len(hookEvents)] {
		if hookEvents[i].store {
			storeWorst = max(storeWorst, median(c.times))
			continue
		}
		gateWorst = max(gateWorst, median(c.times))
	}
	if ref != "" {
		py := median(cs[len(cs)-2].times)
		report += fmt.Sprintf("  the reference's allow takes %.0f× the gate's slowest answer\n", float64(py)/float64(gateWorst))
		b.ReportMetric(float64(py)/float64(gateWorst), "x-reference")
		if py < 100*gateWorst {
			// Flagged, not failed: the ratio is bounded by what a bare
			// process start costs here, which the gate cannot go below.
			report += fmt.Sprintf("  BELOW the 100× target: a bare /bin/true is already 1/%.0f of the reference here\n", float64(py)/float64(base))
		}
	}
	// The issue-30 targets, whole-process medians over /bin/true's: the
	// gate 1.5×, laserbrain hook and --version 3×. Reported, not failed
	// (see above): what is left above them is the Go runtime's and the
	// linked packages' start, not the answer's work.
	byName := map[string]time.Duration{}
	for _, c := range cs {
		byName[c.name] = median(c.times)
	}
	for _, t := range []struct {
		name  string
		ratio float64
		got   time.Duration
	}{{"the gate's slowest answer", 1.5, gateWorst}, {"laserbrain hook pre-tool-use", 3, byName["laserbrain-hook-allow"]}, {"laserbrain --version", 3, byName["laserbrain-version"]}} {
		r := float64(t.got) / float64(base)
		b.ReportMetric(r, strings.ReplaceAll(strings.TrimPrefix(t.name, "the "), " ", "-")+"-x-true")
		if r > t.ratio {
			report += fmt.Sprintf("  %s: %.2f× /bin/true, above the %.1f× target\n", t.name, r, t.ratio)
		}
	}
	// The floor of the gate's required parts: what is left of the 1.5×
	// target once they have started, for reading the event and deciding.
	floor := float64(byName["floor-gate-parts"]) / float64(base)
	b.ReportMetric(floor, "floor-gate-parts-x-true")
	report += fmt.Sprintf("  the gate's required parts, linked and doing nothing: %.2f× /bin/true (%.2f ms left under 1.5× for everything else)\n",
		floor, (1.5*float64(base)-float64(byName["floor-gate-parts"]))/1e6)
	b.Log(report)
	// The regression guard: a heavy package linked into the gate costs
	// milliseconds and shows as a multiple of a bare process start. The
	// target is 2× /bin/true (issue 24): flagged past it, failed past 2.5×
	// (a loaded machine moves the ratio by a tenth either way).
	ratio := float64(gateWorst) / float64(base)
	b.ReportMetric(ratio, "x-true")
	if ratio > 2 {
		b.Logf("the gate's slowest answer is %.2f× /bin/true: OVER the 2× target", ratio)
	} else {
		b.Logf("the gate's slowest answer is %.2f× /bin/true: within the 2× target", ratio)
	}
	if ratio > 2.5 {
		b.Errorf("the gate's median %v is over 2.5× /bin/true's %v: something slow joined its start-up (see TestGateLinksLean)", gateWorst, base)
	}
	if storeWorst > 3*time.Millisecond {
		b.Logf("an answer that records on the run took %v, over the 3 ms target; /bin/true took %v here", storeWorst, base)
	}
	if gateWorst > 3*time.Millisecond {
		b.Logf("over the 3 ms target (%v); /bin/true took %v here — a loaded machine, or a regression", gateWorst, base)
	}
}

// goBuild builds target (a package path or one file) into a fresh
// directory as name, without cgo, as the Makefile builds.
func goBuild(b *testing.B, name, target string) string {
	bin := filepath.Join(b.TempDir(), name)
	build := exec.Command("go", "build", "-trimpath", "-o", bin, target)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

// buildLaserbrain builds laserbrain from its package beside this one.
func buildLaserbrain(b *testing.B) string { return goBuild(b, "laserbrain", "../laserbrain") }

// buildFloor builds testdata/startfloor: the packages the gate's decision
// needs (encoding/json, sh/v3/syntax, regexp2), linked, doing nothing.
func buildFloor(b *testing.B) string { return goBuild(b, "startfloor", "./testdata/startfloor") }

// buildEmpty builds a Go program that does nothing: the floor any Go hook
// stands on (the runtime's own start).
func buildEmpty(b *testing.B) string {
	src := filepath.Join(b.TempDir(), "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return goBuild(b, "empty", src)
}
