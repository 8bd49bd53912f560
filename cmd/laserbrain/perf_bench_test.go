package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fleet-scale benchmarks of the real binary: each measures two
// contenders interleaved in one run (so both see the same machine) and
// reports the ratio of their medians, which the acceptance bounds.

// medianOf is the median of ds (ds is sorted in place).
func medianOf(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// registerRun registers an agent run in home as laserbrain run does (the
// agent is a shell that prints the id) and returns its id.
func registerRun(tb testing.TB, bin string, env []string) string {
	tb.Helper()
	reg := exec.Command(bin, "run", "--agent", "bench", "--goal", "add a CSV importer to the admin panel", "--", "sh", "-c", "echo $LASERBRAIN_RUN")
	reg.Env = env
	out, err := reg.Output()
	if err != nil {
		tb.Fatalf("laserbrain run: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// streamEnv is the environment of a stream in home: nothing of this
// process's own laserbrain settings.
func streamEnv(home string) []string {
	env := []string{"LASERBRAIN_HOME=" + home, "LASERBRAIN_FLEET=bench", "LASERBRAIN_STORE=local"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LASERBRAIN_") || strings.HasPrefix(k, "CLAUDE_") || k == "CI" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// timeStream runs check --stream on the file at in and returns the wall
// time and the process's peak RSS.
func timeStream(tb testing.TB, bin string, env []string, in string) (time.Duration, int64) {
	tb.Helper()
	f, err := os.Open(in)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, "check", "--stream")
	cmd.Env, cmd.Stdin = env, f
	var out strings.Builder
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		tb.Fatalf("check --stream: %v", err)
	}
	d := time.Since(start)
	if n := strings.Count(out.String(), "\n"); n == 0 || strings.Contains(out.String(), `"error":`) {
		tb.Fatalf("check --stream answered %d lines, errors among them:\n%.500s", n, out.String())
	}
	return d, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}

// BenchmarkStreamRegistered1000: 1,000 checks streamed by an agent under
// laserbrain run (its run registered in the fleet store: each check is
// counted on the run, recorded as an event and saved in its task) against
// the same 1,000 lines streamed unregistered (one run of laserbrain's
// store), interleaved. x-unregistered is the ratio of the medians; the
// acceptance is at most 2×.
func BenchmarkStreamRegistered1000(b *testing.B) {
	const steps = 1000
	bin := buildLaserbrain(b)
	dir := b.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, streamInput(steps), 0o644); err != nil {
		b.Fatal(err)
	}
	env := streamEnv(filepath.Join(dir, "home"))
	var reg, unreg []time.Duration
	for b.Loop() {
		b.StopTimer()
		id := registerRun(b, bin, env)
		b.StartTimer()
		d, _ := timeStream(b, bin, append(slices.Clip(env), "LASERBRAIN_RUN="+id), in)
		reg = append(reg, d)
		d, _ = timeStream(b, bin, env, in)
		unreg = append(unreg, d)
	}
	r, u := medianOf(reg), medianOf(unreg)
	b.ReportMetric(float64(r.Microseconds())/1000, "registered-ms")
	b.ReportMetric(float64(u.Microseconds())/1000, "unregistered-ms")
	b.ReportMetric(float64(r)/float64(u), "x-unregistered")
	b.Logf("1,000 checks: registered %v, unregistered %v (medians of %d): %.2f×", r, u, len(reg), float64(r)/float64(u))
	if float64(r) > 2*float64(u) {
		b.Errorf("a registered stream takes %.2f× the unregistered one, over 2×", float64(r)/float64(u))
	}
}

// BenchmarkStreamRunLocks: 10,000 steps in one stream spread over 1,000
// runs (10 each) and over 10,000 runs (one each), every run held by the
// stream until it ends, interleaved. x-1k is the per-step cost over
// 10,000 runs against that over 1,000: holding a run must cost the same
// however many others are held (the acceptance is at most 2×).
func BenchmarkStreamRunLocks(b *testing.B) {
	const steps = 10_000
	bin := buildLaserbrain(b)
	dir := b.TempDir()
	env := streamEnv(filepath.Join(dir, "home"))
	iter := 0
	input := func(runs int) string {
		p := filepath.Join(dir, fmt.Sprintf("in-%d-%d.jsonl", runs, iter))
		it := iter
		if err := os.WriteFile(p, streamInputRuns(steps, func(i int) string { return fmt.Sprintf("i%d-r%d", it, i%runs) }), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	var k1, k10 []time.Duration
	for b.Loop() {
		b.StopTimer()
		iter++
		in1, in10 := input(1000), input(10_000)
		b.StartTimer()
		d, _ := timeStream(b, bin, env, in1)
		k1 = append(k1, d)
		d, _ = timeStream(b, bin, env, in10)
		k10 = append(k10, d)
	}
	a, c := medianOf(k1), medianOf(k10)
	b.ReportMetric(float64(a.Nanoseconds())/steps, "ns/step-1k-runs")
	b.ReportMetric(float64(c.Nanoseconds())/steps, "ns/step-10k-runs")
	b.ReportMetric(float64(c)/float64(a), "x-1k")
	b.Logf("10,000 steps over 1,000 runs %v, over 10,000 runs %v: %.2f×", a, c, float64(c)/float64(a))
	if float64(c) > 2*float64(a) {
		b.Errorf("10,000 runs cost %.2f× 1,000 runs per step, over 2×", float64(c)/float64(a))
	}
}

// BenchmarkLongRunRSS: the peak resident memory of one stream of 300,000
// steps on one run against one of 30,000, interleaved. A held run keeps its
// history on disk, not in memory: x-30k, the ratio of the peaks, is
// bounded at 1.5.
func BenchmarkLongRunRSS(b *testing.B) {
	bin := buildLaserbrain(b)
	dir := b.TempDir()
	short, long := filepath.Join(dir, "30k.jsonl"), filepath.Join(dir, "300k.jsonl")
	if err := os.WriteFile(short, streamInput(30_000), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(long, streamInput(300_000), 0o644); err != nil {
		b.Fatal(err)
	}
	var s, l []int64
	var ls time.Duration
	for b.Loop() {
		env := streamEnv(filepath.Join(b.TempDir(), "home"))
		_, rss := timeStream(b, bin, env, short)
		s = append(s, rss)
		d, rss := timeStream(b, bin, env, long)
		l = append(l, rss)
		ls += d
	}
	slices.Sort(s)
	slices.Sort(l)
	sm, lm := s[len(s)/2], l[len(l)/2]
	b.ReportMetric(float64(sm)/1024, "MB-30k")
	b.ReportMetric(float64(lm)/1024, "MB-300k")
	b.ReportMetric(float64(lm)/float64(sm), "x-30k")
	b.ReportMetric(float64(ls.Nanoseconds())/float64(len(l)*300_000), "ns/step-300k")
	b.Logf("peak RSS: 30,000 steps %.1f MB, 300,000 steps %.1f MB: %.2f×", float64(sm)/1024, float64(lm)/1024, float64(lm)/float64(sm))
	if float64(lm) > 1.5*float64(sm) {
		b.Errorf("300,000 steps peak at %.2f× 30,000 steps' memory, over 1.5×", float64(lm)/float64(sm))
	}
}
