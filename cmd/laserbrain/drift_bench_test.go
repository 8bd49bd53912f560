package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
)

// BenchmarkDriftStreamOverReference is `make bench-drift`: the same
// 10,000 states checked by `laserbrain check --stream` (the real binary,
// a fresh home each run, process start included) and by the Python
// reference (one Harness in one process, testdata/reference_drift.py), the
// best of three runs of each, interleaved. x-reference is the reference's
// best time over ours; the target is at least 150×, which the benchmark
// asserts.
func BenchmarkDriftStreamOverReference(b *testing.B) {
	const steps, runs = 10_000, 3
	sdk := testenv.Shared(b, "reference/laserbrain-sdk-0.53.0")
	python := testenv.LookPath(b, "python3")
	dir := b.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, streamInput(steps), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := buildLaserbrain(b)
	var ours, ref time.Duration
	for b.Loop() {
		for i := 0; i < runs; i++ {
			d := timeStream(b, bin, streamEnv(filepath.Join(dir, "home-"+strconv.Itoa(i))), in)
			if ours == 0 || d < ours {
				ours = d
			}
		}
		cmd := exec.Command(python, filepath.Join("testdata", "reference_drift.py"), sdk, in, strconv.Itoa(runs))
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("the reference: %v\n%s", err, out)
		}
		secs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			b.Fatalf("the reference printed %q", out)
		}
		if d := time.Duration(secs * float64(time.Second)); ref == 0 || d < ref {
			ref = d
		}
	}
	x := float64(ref) / float64(ours)
	b.ReportMetric(float64(ours.Microseconds())/1000, "stream-ms")
	b.ReportMetric(float64(ref.Microseconds())/1000, "reference-ms")
	b.ReportMetric(x, "x-reference")
	b.Logf("%d states: check --stream %v, the Python reference %v (best of %d each): %.0f×", steps, ours, ref, runs, x)
	if x < 150 {
		b.Errorf("check --stream is %.0f× the reference, under 150×", x)
	}
}
