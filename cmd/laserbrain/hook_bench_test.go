package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkHookProcess measures the hook as Claude Code runs it: a fresh
// process, the event on stdin, until the answer. /bin/true, started the same
// way in the same run, is the baseline (process start cost alone); the
// ratio is reported as x-true.
func BenchmarkHookProcess(b *testing.B) {
	bin := buildLaserbrain(b)
	events := map[string]string{
		"allow": `{"tool_name":"Bash","tool_input":{"command":"ls -la"}}`,
		"deny":  `{"tool_name":"Bash","tool_input":{"command":"git push origin +main"}}`,
		"ask":   `{"tool_name":"Bash","tool_input":{"command":"git commit -m 'why rm -rf is refused'"}}`,
	}
	run := func(b *testing.B, path string, args []string, stdin string) {
		for b.Loop() {
			c := exec.Command(path, args...)
			c.Stdin = strings.NewReader(stdin)
			_ = c.Run() // deny exits 2 by design
		}
	}
	var baseline float64
	b.Run("true", func(b *testing.B) {
		run(b, "/bin/true", nil, "")
		baseline = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	for _, name := range []string{"allow", "deny", "ask"} {
		b.Run(name, func(b *testing.B) {
			run(b, bin, []string{"hook", "pre-tool-use"}, events[name])
			if baseline > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/baseline, "x-true")
			}
		})
	}
}

// buildLaserbrain is the binary as `make build` builds it (static,
// trimmed: laserbrainBinary), so process benchmarks time what users run
// rather than the test binary standing in for it, as a copy written with
// plain writes, as `make install` leaves it: the linker writes its output
// through a memory map, and a program started from those cached pages
// starts slower (the gate's benchmarks measured 2.21× against 2.02×
// /bin/true for the same build).
func buildLaserbrain(b *testing.B) string {
	b.Helper()
	return placeLaserbrain(b, laserbrainBinary(b))
}

// laserbrainFrom is the laserbrain a benchmark measures: another build's,
// in the directory the variable env names (an earlier commit's, measured
// beside this one in the same run), else this package's, built.
func laserbrainFrom(b *testing.B, env string) string {
	b.Helper()
	if dir := os.Getenv(env); dir != "" {
		return placeLaserbrain(b, filepath.Join(dir, "laserbrain"))
	}
	return buildLaserbrain(b)
}

// placeLaserbrain copies the program at src into a place of its own.
func placeLaserbrain(b *testing.B, src string) string {
	b.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "laserbrain")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		b.Fatal(err)
	}
	return bin
}
