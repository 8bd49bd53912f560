package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/undo"
)

// BenchmarkCheckpointHooksOnly is the second half of `make bench-undo`:
// what the undo checkpoint costs the installed gate's whole process on a
// 5,000-file repository when no laserbrain run answers the hooks (hooks
// installed, the agent run by hand), so no watch of the work tree is held
// and every checkpoint compares the whole tree.
// Medians of whole processes, interleaved in a fresh order each round:
// /bin/true; the gate with checkpoints off (LASERBRAIN_UNDO=off: the
// baseline the checkpoint adds to); the gate whose checkpoint finds
// nothing changed since the last one; and the gate after 10 files were
// changed (written before the process starts, not timed), whose
// checkpoint hashes them and records what changed. Each call is a Bash
// call of its own (its own tool_use_id) under laserbrain run's variables.
// It reports wall and CPU time (the process and the git processes it
// waited for); the bounds are held under laserbrain run
// (BenchmarkCheckpointUnderRun).
func BenchmarkCheckpointHooksOnly(b *testing.B) {
	for _, tool := range []string{"git", "true"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Fatalf("%s is not on PATH", tool)
		}
	}
	gate := buildGate(b)
	home := b.TempDir()
	repo := filepath.Join(b.TempDir(), "repo")
	benchRepo(b, repo, 5000)
	base := append(quietEnv(), "LASERBRAIN_HOME="+home, "LASERBRAIN_RUN=bench-undo", "LASERBRAIN_AGENT=bench",
		"LASERBRAIN_FLEET=bench", "LASERBRAIN_COVERAGE=off")
	// The run's start: the work tree's first checkpoint, which laserbrain
	// run takes before the agent starts.
	b.Setenv("LASERBRAIN_HOME", home)
	st, err := undo.Default()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := st.Capture(context.Background(), repo, undo.Input{Run: "bench-undo", Kind: undo.KindStart}); err != nil {
		b.Fatal(err)
	}
	b.Logf("the first checkpoint of the 5,000 files took %v", time.Since(start))
	changeTen := func(round int) {
		for i := 0; i < 10; i++ {
			p := filepath.Join(repo, fmt.Sprintf("d%02d", i), "f0.txt")
			if err := os.WriteFile(p, []byte(fmt.Sprintf("changed in round %d\n", round)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	cs := []*contender{
		{name: "true", argv: []string{"true"}},
		{name: "gate-undo-off", argv: []string{gate}, env: append(base[:len(base):len(base)], undo.EnvOff+"=off")},
		{name: "gate-nothing-changed", argv: []string{gate}, env: base},
		{name: "gate-10-changed", argv: []string{gate}, env: base, prepare: changeTen},
	}
	if p, err := exec.LookPath("true"); err == nil {
		cs[0].argv[0] = p
	}
	rounds(b, cs, 7, func(c *contender, round int) {
		// The checkpoint before each timed call, so that each finds
		// only its own changes (untimed: the previous call's checkpoint
		// is the agent's last one).
		if _, err := st.Capture(context.Background(), repo, undo.Input{Run: "bench-undo", Kind: undo.KindCall, Call: fmt.Sprintf("warm-%d-%s", round, c.name)}); err != nil {
			b.Fatal(err)
		}
		if c.prepare != nil {
			c.prepare(round)
		}
		call, _ := json.Marshal(map[string]any{"session_id": "s", "tool_use_id": fmt.Sprintf("t-%d-%s", round, c.name), "tool_name": "Bash",
			"cwd": repo, "tool_input": map[string]any{"command": "go test ./..."}})
		cmd := exec.Command(c.argv[0], c.argv[1:]...)
		cmd.Env, cmd.Dir = c.env, repo
		cmd.Stdin = strings.NewReader(string(call))
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		c.times = append(c.times, time.Since(t0))
		if err != nil {
			b.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		c.cpu = append(c.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	})
	// The changed call's checkpoint did see the ten files.
	recs, err := st.Records("bench-undo")
	if err != nil {
		b.Fatal(err)
	}
	if ch, err := st.Changes(context.Background(), recs, len(recs)-3); err == nil {
		b.Logf("a checkpoint's change in the last round: %s", ch.Summary())
	}
	load, _ := os.ReadFile("/proc/loadavg")
	report := fmt.Sprintf("medians over %d rounds, 5,000 files, load average %s", len(cs[0].times), strings.Join(strings.Fields(string(load))[:3], " "))
	report += fmt.Sprintf("\n  %-22s %10s %10s %12s\n", "", "wall", "cpu", "× true wall")
	floor := median(cs[0].times)
	for _, c := range cs {
		m, cpu := median(c.times), median(c.cpu)
		b.ReportMetric(float64(m.Microseconds())/1000, c.name+"-ms")
		b.ReportMetric(float64(cpu.Microseconds())/1000, c.name+"-cpu-ms")
		report += fmt.Sprintf("  %-22s %7.2f ms %7.2f ms %11.2f×\n", c.name, float64(m.Microseconds())/1000, float64(cpu.Microseconds())/1000, float64(m)/float64(floor))
	}
	off, same, ten := median(cs[1].times), median(cs[2].times), median(cs[3].times)
	sameCPU, tenCPU := median(cs[2].cpu), median(cs[3].cpu)
	ratio, cpuRatio := float64(ten)/float64(same), float64(tenCPU)/float64(sameCPU)
	report += fmt.Sprintf("  10 files changed over nothing changed: %.2f× wall, %.2f× cpu (bound 1.5×); the checkpoint adds %.2f ms (nothing changed) and %.2f ms (10 changed) to the gate's wall time without it\n",
		ratio, cpuRatio, float64((same-off).Microseconds())/1000, float64((ten-off).Microseconds())/1000)
	b.ReportMetric(ratio, "x-unchanged")
	b.ReportMetric(cpuRatio, "x-unchanged-cpu")
	b.Log(report)
}

// benchRepo is a committed repository of n files, 100 to a directory.
func benchRepo(b *testing.B, dir string, n int) {
	b.Helper()
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i/100), fmt.Sprintf("f%d.txt", i%100))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m", "files"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}
