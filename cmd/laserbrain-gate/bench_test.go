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
// start alone), an empty Go program (the Go runtime's floor), the floors of
// the gate's required parts (testdata/startfloor: encoding/json, sh/v3's
// parser and regexp2 linked, nothing done; testdata/parsefloor: the event
// decoded and its command parsed, nothing else linked; testdata/workfloor:
// the same and one regexp2 match), laserbrain-gate on each answer,
// `laserbrain hook pre-tool-use` and `laserbrain --version` (LASERBRAIN_BIN,
// else built here; LASERBRAIN_BASELINE and GATE_BASELINE name earlier
// builds to time beside them) and, when LB_SAFETY names the Python
// reference hook (lb_safety.py), the reference. Every program is timed as
// installed: a copy, not the linker's own file (see installed), and every
// Go program is built the same way (goBuild, buildGate). Each one's ratio
// to /bin/true is reported (*-x-true), with the start-up targets
// laserbrain hook and --version are above (3×); the gate's allow and the
// floors are reported over the empty Go program (*-x-go-empty), against
// the gate's target of 1.5× (overEmptyGo). Those targets are reported,
// not asserted: a whole-process ratio moves by a tenth with the machine's
// load. It fails when the gate's slowest median is over 2.5× /bin/true's
// (a regression); it flags a median over 3 ms and a ratio to the
// reference under 100× (both bounded by the machine's process start cost,
// which /bin/true shows). What the inits allocate, exact where clock times
// are not, is held by TestStartupInitsAllocateLittle (cmd/laserbrain) and
// TestGateInitsAllocateLittle; what the gate links, by TestGateLinksLean.
func BenchmarkHookProcess(b *testing.B) {
	gate := installed(b, buildGate(b))
	// The handler looks for the caller's run in the laserbrain home: a
	// fresh one, never the user's.
	b.Setenv("LASERBRAIN_HOME", b.TempDir())
	cs := []*contender{{name: "true", argv: []string{"/bin/true"}}, {name: "go-empty-program", argv: []string{buildEmpty(b)}},
		{name: "floor-gate-parts", argv: []string{buildFloor(b)}}, {name: "floor-gate-work", argv: []string{buildWorkFloor(b)}, event: hookEvents[0].event},
		{name: "floor-decode-parse", argv: []string{goBuild(b, "parsefloor", "./testdata/parsefloor")}, event: hookEvents[0].event}}
	gates := len(cs) // the gate's own answers start here, one per event
	for _, e := range hookEvents {
		cs = append(cs, &contender{name: "gate-" + e.name, argv: []string{gate}, event: e.event, env: append(quietEnv(), e.env...)})
	}
	// GATE_BASELINE names another build of the gate (an earlier commit's)
	// to time beside this one, on the same answers, in the same run.
	if baseline := os.Getenv("GATE_BASELINE"); baseline != "" {
		baseline = installed(b, baseline)
		for _, e := range hookEvents {
			if !e.store {
				cs = append(cs, &contender{name: "baseline-" + e.name, argv: []string{baseline}, event: e.event, env: append(quietEnv(), e.env...)})
			}
		}
	}
	// The command line install writes for Claude Code: a shell that checks
	// the gate is there, then becomes it (reported, not guarded: the
	// shell's own start is the client's to pay).
	// Beside it, the same command line installed for an empty Go program
	// that answers as the gate does: what the line costs a client whoever
	// answers it.
	cs = append(cs, &contender{name: "installed-command-allow", argv: []string{"/bin/sh", "-c", client.HookCommand(gate, client.Claude, client.PreToolUse)},
		event: hookEvents[0].event, env: quietEnv()},
		&contender{name: "installed-command-empty-go", argv: []string{"/bin/sh", "-c", client.HookCommand(buildEmptyAnswering(b), client.Claude, client.PreToolUse)},
			event: hookEvents[0].event, env: quietEnv()})
	lb := os.Getenv("LASERBRAIN_BIN")
	if lb == "" {
		lb = buildLaserbrain(b)
	} else {
		lb = installed(b, lb)
	}
	cs = append(cs, &contender{name: "laserbrain-hook-allow", argv: []string{lb, "hook", "pre-tool-use"}, event: hookEvents[0].event},
		&contender{name: "laserbrain-version", argv: []string{lb, "--version"}})
	// LASERBRAIN_BASELINE names another build of laserbrain (an earlier
	// commit's) to time beside this one, in the same run.
	if baseline := os.Getenv("LASERBRAIN_BASELINE"); baseline != "" {
		baseline = installed(b, baseline)
		cs = append(cs, &contender{name: "baseline-laserbrain-hook", argv: []string{baseline, "hook", "pre-tool-use"}, event: hookEvents[0].event},
			&contender{name: "baseline-laserbrain-version", argv: []string{baseline, "--version"}})
	}
	ref := os.Getenv("LB_SAFETY")
	if ref != "" {
		cs = append(cs, &contender{name: "python-reference-allow", argv: []string{"python3", ref}, event: hookEvents[0].event, every: 5},
			&contender{name: "python-reference-deny", argv: []string{"python3", ref}, event: hookEvents[2].event, every: 5})
	}
	eventFiles(b, cs)
	rounds(b, cs, 1, func(c *contender, round int) {
		if c.every <= 1 || round%c.every == 0 {
			_, _ = c.runOnce(b) // deny exits 2 by design
		}
	})
	base := median(cs[0].times)
	report := medians(b, cs, fmt.Sprintf("medians over %d runs each (the reference: every 5th round):", len(cs[0].times)))
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
	// The start-up targets over /bin/true's: laserbrain hook and
	// --version 3×; the gate's is over the empty Go program (overEmptyGo).
	// Reported, not failed (see above).
	byName := map[string]time.Duration{}
	for _, c := range cs {
		byName[c.name] = median(c.times)
	}
	for _, t := range []struct {
		name  string
		ratio float64
		got   time.Duration
	}{{"laserbrain hook pre-tool-use", 3, byName["laserbrain-hook-allow"]}, {"laserbrain --version", 3, byName["laserbrain-version"]}} {
		r := float64(t.got) / float64(base)
		b.ReportMetric(r, strings.ReplaceAll(strings.TrimPrefix(t.name, "the "), " ", "-")+"-x-true")
		if r > t.ratio {
			report += fmt.Sprintf("  %s: %.2f× /bin/true, above the %.1f× target\n", t.name, r, t.ratio)
		}
	}
	report += overEmptyGo(b, byName)
	b.Log(report)
	// The regression guard: a heavy package linked into the gate costs
	// milliseconds and shows as a multiple of a bare process start. The
	// target is 2× /bin/true: flagged past it, failed past 2.5×
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

// overEmptyGo reports the gate's allow and the floors of its required
// parts over the empty Go program (NAME-x-go-empty), against the gate's
// start-up target: its allow within 1.5× an empty Go program. Reported,
// not failed (a whole-process ratio moves by a tenth with the load). The
// floors say what is left of the target once the parts every gate built
// on them must run have run: linked and doing nothing; the event decoded
// and its command parsed; and that, plus one regexp2 match.
func overEmptyGo(b *testing.B, byName map[string]time.Duration) string {
	empty := float64(byName["go-empty-program"])
	report := "  over an empty Go program (target: the gate's allow within 1.5×):\n"
	for _, f := range []struct{ name, what string }{
		{"gate-allow", "the gate's allow"},
		{"floor-gate-parts", "the gate's required parts, linked and doing nothing"},
		{"floor-decode-parse", "the floor: the event decoded, its command parsed (encoding/json, sh/v3), nothing else"},
		{"floor-gate-work", "the same, and the command matched against one regexp2 pattern"},
	} {
		r := float64(byName[f.name]) / empty
		b.ReportMetric(r, f.name+"-x-go-empty")
		report += fmt.Sprintf("    %-92s %.2f× (%+.2f ms to 1.5×)\n", f.what, r, (1.5*empty-float64(byName[f.name]))/1e6)
	}
	installed := float64(byName["installed-command-allow"]) / float64(byName["installed-command-empty-go"])
	b.ReportMetric(installed, "installed-x-installed-empty-go")
	report += fmt.Sprintf("  the installed command line (a shell, then the gate) on the allow: %.2f× the same line answered by an empty Go program\n", installed)
	return report
}

// goBuild builds target (a package path or one file) without cgo, as the
// Makefile builds, and installs it (installed) into a fresh directory as
// name.
func goBuild(b testing.TB, name, target string) string {
	bin := filepath.Join(b.TempDir(), name)
	build := exec.Command("go", "build", "-trimpath", "-o", bin, target)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return installed(b, bin)
}

// installed copies the program at path into a fresh directory, byte by
// byte as make install (install(1)) does, and returns the copy: the
// benchmarks time programs as installed. A program straight from the
// linker is written through a memory map, and until its pages leave the
// page cache each start maps them in more, smaller pieces: on this
// machine's kernel (6.18, ext4) the same gate measured 2.21× /bin/true
// from the linker's file and 2.02× from a copy, in one interleaved run.
func installed(b testing.TB, path string) string {
	b.Helper()
	in, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(b.TempDir(), filepath.Base(path))
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(struct{ io.Writer }{out}, in); err != nil { // plain writes, no copy_file_range
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	return dst
}

// buildLaserbrain builds laserbrain from its package beside this one.
func buildLaserbrain(b testing.TB) string { return goBuild(b, "laserbrain", "../laserbrain") }

// buildFloor builds testdata/startfloor: the packages the gate's decision
// needs (encoding/json, sh/v3/syntax, regexp2), linked, doing nothing.
func buildFloor(b *testing.B) string { return goBuild(b, "startfloor", "./testdata/startfloor") }

// buildWorkFloor builds testdata/workfloor: the same packages doing the
// least a gate must do with them (decode the event, parse the command,
// match it).
func buildWorkFloor(b *testing.B) string { return goBuild(b, "workfloor", "./testdata/workfloor") }

// buildEmpty builds a Go program that does nothing: the floor any Go hook
// stands on (the runtime's own start).
func buildEmpty(b *testing.B) string {
	src := filepath.Join(b.TempDir(), "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return goBuild(b, "empty", src)
}

// buildEmptyAnswering builds a Go program that does nothing but exit with
// the status an installed pre-tool-use command takes as the gate's answer
// (client.AnsweredStatus): the floor of an installed hook pair.
func buildEmptyAnswering(b testing.TB) string {
	src := filepath.Join(b.TempDir(), "main.go")
	prog := fmt.Sprintf("package main\n\nimport \"os\"\n\nfunc main() { os.Exit(%d) }\n", client.AnsweredStatus)
	if err := os.WriteFile(src, []byte(prog), 0o600); err != nil {
		b.Fatal(err)
	}
	return goBuild(b, "empty-answering", src)
}

// contender is one program a hook benchmark measures, as it runs it.
type contender struct {
	name     string
	argv     []string
	env      []string
	event    string   // the hook event on its stdin
	stdin    *os.File // the event as a file (eventFiles)
	wantExit int
	every    int             // run in every n-th round only (the slow reference)
	prepare  func(round int) // what changes before each run
	times    []time.Duration
	cpu      []time.Duration // user and system time, the process and the children it waited for
}

// runOnce runs c once, its event on stdin from the start, and keeps the
// wall time and the CPU time; it returns the exit status and Run's error.
func (c *contender) runOnce(b *testing.B) (int, error) {
	if _, err := c.stdin.Seek(0, io.SeekStart); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Stdin, cmd.Env = c.stdin, c.env
	start := time.Now()
	err := cmd.Run()
	c.times = append(c.times, time.Since(start))
	if cmd.ProcessState == nil {
		return -1, err
	}
	c.cpu = append(c.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	return cmd.ProcessState.ExitCode(), err
}

// rounds runs each contender once an iteration of b, in an order shuffled
// afresh each round (whoever runs right after a slow one finds the caches
// cold) from seed, so that a benchmark's orders are the same run to run;
// run gets the round's number, from 1.
func rounds(b *testing.B, cs []*contender, seed uint64, run func(c *contender, round int)) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	order := append([]*contender(nil), cs...)
	for round := 1; b.Loop(); round++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, c := range order {
			run(c, round)
		}
	}
}

// medians reports each contender's median wall time (the metric NAME-ms)
// and returns title and a line each, with its ratio to the first
// contender's (/bin/true).
func medians(b *testing.B, cs []*contender, title string) string {
	base := median(cs[0].times)
	report := title + "\n"
	for _, c := range cs {
		m := median(c.times)
		b.ReportMetric(float64(m.Microseconds())/1000, c.name+"-ms")
		report += fmt.Sprintf("  %-26s %8.3f ms  %5.2f× /bin/true\n", c.name, float64(m.Microseconds())/1000, float64(m)/float64(base))
	}
	return report
}

// eventFiles gives each contender its event as a file the child reads
// directly (closed when b ends): a pipe would add a copying goroutine to
// the parent's side of every measurement.
func eventFiles(b *testing.B, cs []*contender) {
	for i, c := range cs {
		path := filepath.Join(b.TempDir(), fmt.Sprintf("event%d.json", i))
		if err := os.WriteFile(path, []byte(c.event), 0o600); err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		c.stdin = f
	}
}
