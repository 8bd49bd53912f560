package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/undo"
)

// undoDriverName is the name the test binary answers to as the agent of
// BenchmarkCheckpointUnderRun (TestMain dispatches on it).
const undoDriverName = "laserkit-undo-driver"

// undoSpec is what the undo driver runs inside laserbrain run: each round,
// in a fresh order, the installed PreToolUse command line as Claude Code
// runs it, once per contender: with checkpoints off (LASERBRAIN_UNDO=off),
// with nothing changed since the last checkpoint, and after Changed files
// were written (before the call, untimed).
type undoSpec struct {
	Rounds  int
	Pre     string
	Changed int
	Out     string
}

// The contenders of the undo driver.
const (
	undoOff       = "undo-off"
	undoNothing   = "nothing-changed"
	undoTenFiles  = "10-changed"
	undoRunRounds = 100
)

// BenchmarkCheckpointUnderRun is `make bench-undo`: what a PreToolUse with
// its undo checkpoint costs an agent supervised by laserbrain run, on a
// committed repository of 5,000 files, the way the agent waits for it:
// the installed command line (laserbrain-gate, which hands the event to
// the run's broker, whose process takes the checkpoint with the paths its
// watch of the work tree saw change), run through sh -c with the event on
// standard input by an agent confined by the kernel. Each round, in a
// fresh order: the call with checkpoints off (the baseline the checkpoint
// adds to), a call with nothing changed since the last checkpoint, and a
// call after 10 files were changed (written before it, untimed). It
// reports medians of wall and CPU time (the hook process's own, what the
// run's process spent answering it, and the mean of what the run's
// children — a checkpoint's git — spent), and fails when the changed
// call's CPU is over 1.5× the unchanged one's or over 20 ms.
func BenchmarkCheckpointUnderRun(b *testing.B) {
	dir := b.TempDir()
	lb := filepath.Join(dir, "laserbrain")
	copyExec(b, buildLaserbrain(b), lb)
	copyExec(b, buildGate(b), filepath.Join(dir, client.GateName))
	repo := filepath.Join(b.TempDir(), "repo")
	benchRepo(b, repo, 5000)
	home := b.TempDir()
	out := filepath.Join(b.TempDir(), "undo-times.json")
	spec := undoSpec{Rounds: max(b.N, undoRunRounds), Pre: client.HookCommand(lb, client.Claude, client.PreToolUse), Changed: 10, Out: out}
	raw, err := json.Marshal(spec)
	if err != nil {
		b.Fatal(err)
	}
	loadBefore := loadAverage()
	times := driveUnderRun(b, lb, undoDriverName, repo, out, "LASERBRAIN_HOME="+home, "HOME="+home, "LASERBRAIN_STORE=local", "LASERBRAIN_COVERAGE=off", "LASERKIT_UNDO_SPEC="+string(raw))
	b.Setenv("LASERBRAIN_HOME", home)
	undoRunSaw(b, spec.Rounds)
	undoRunReport(b, times, spec.Rounds, loadBefore+" (before), "+loadAverage()+" (after)")
}

// undoRunSaw checks that the changed calls' checkpoints recorded the 10
// files: the run's last such checkpoint says so.
func undoRunSaw(b *testing.B, rounds int) {
	b.Helper()
	st, err := undo.Default()
	if err != nil {
		b.Fatal(err)
	}
	runs, err := st.Runs()
	if err != nil || len(runs) != 1 {
		b.Fatalf("the run's checkpoints: %v (%d runs)", err, len(runs))
	}
	recs, err := st.Records(runs[0].Run)
	if err != nil {
		b.Fatal(err)
	}
	seen := 0
	for _, r := range recs {
		if r.Changed != nil && r.Changed.Files.Modified == 10 {
			seen++
		}
	}
	// Each changed call's change is kept by the checkpoint after it.
	if seen < rounds-1 {
		b.Fatalf("%d of %d checkpoints after a changed call recorded 10 modified files", seen, rounds)
	}
}

// undoRunReport prints the medians and holds the bounds.
func undoRunReport(b *testing.B, times map[string]pairTimes, rounds int, load string) {
	b.Helper()
	cpuOfC := func(t pairTimes) time.Duration { return median(t.CPU) + t.Children/time.Duration(len(t.CPU)) }
	report := fmt.Sprintf("a PreToolUse with its checkpoint under laserbrain run, medians over %d rounds, 5,000 files, load average %s", rounds, load)
	report += fmt.Sprintf("\n  %-18s %10s %10s %14s\n", "", "wall", "cpu", "children/call")
	for _, n := range []string{undoOff, undoNothing, undoTenFiles} {
		t := times[n]
		w, c := median(t.Wall), cpuOfC(t)
		b.ReportMetric(float64(w.Microseconds())/1000, n+"-ms")
		b.ReportMetric(float64(c.Microseconds())/1000, n+"-cpu-ms")
		report += fmt.Sprintf("  %-18s %7.2f ms %7.2f ms %11.2f ms\n", n, float64(w.Microseconds())/1000, float64(c.Microseconds())/1000,
			float64((t.Children/time.Duration(len(t.CPU))).Microseconds())/1000)
	}
	same, ten := times[undoNothing], times[undoTenFiles]
	ratio := float64(median(ten.Wall)) / float64(median(same.Wall))
	cpuRatio := float64(cpuOfC(ten)) / float64(cpuOfC(same))
	report += fmt.Sprintf("  10 files changed over nothing changed: %.2f× wall, %.2f× cpu (bound 1.5×); 10 changed: %.2f ms cpu (bound 20 ms)\n",
		ratio, cpuRatio, float64(cpuOfC(ten).Microseconds())/1000)
	b.ReportMetric(ratio, "x-unchanged")
	b.ReportMetric(cpuRatio, "x-unchanged-cpu")
	b.Log(report)
	if cpuRatio > 1.5 {
		b.Errorf("a checkpoint with 10 files changed takes %.2f× the CPU of one with nothing changed: over 1.5×", cpuRatio)
	}
	if c := cpuOfC(ten); c > 20*time.Millisecond {
		b.Errorf("a PreToolUse with its checkpoint of 10 changed files takes %v of CPU (median): over 20 ms", c)
	}
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes.
func loadAverage() string {
	load, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(load))[:3], " ")
}

// undoDriver is the agent of BenchmarkCheckpointUnderRun: it runs the
// spec in LASERKIT_UNDO_SPEC and writes the times.
func undoDriver() int {
	var spec undoSpec
	if err := json.Unmarshal([]byte(os.Getenv("LASERKIT_UNDO_SPEC")), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "undo driver:", err)
		return 2
	}
	wd, _ := os.Getwd()
	d := driver{who: "undo driver", names: []string{undoOff, undoNothing, undoTenFiles}, rounds: spec.Rounds, seed: 7, out: spec.Out}
	d.prepare = func(n string, i int) error {
		for k := 0; n == undoTenFiles && k < spec.Changed; k++ {
			p := filepath.Join(wd, fmt.Sprintf("d%02d", k), "f0.txt")
			if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d changed in round %d\n", k, i)), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	d.call = func(n string, i int) (time.Duration, time.Duration, error) {
		env := os.Environ()
		if n == undoOff {
			env = append(env, undo.EnvOff+"=off")
		}
		return runPre(spec.Pre, env, wd, fmt.Sprintf("%s-%d", n, i))
	}
	return d.drive()
}

// runPre runs one PreToolUse command line as Claude Code does and returns
// how long it took and its process's CPU time.
func runPre(line string, env []string, cwd, id string) (time.Duration, time.Duration, error) {
	event := fmt.Sprintf(`{"hook_event_name":"PreToolUse","session_id":"undo-bench","tool_use_id":%q,"tool_name":"Bash","cwd":%q,"tool_input":{"command":"go test ./..."}}`, id, cwd)
	c := exec.Command("/bin/sh", "-c", line)
	c.Env, c.Stdin = env, strings.NewReader(event)
	start := time.Now()
	if o, err := c.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("%s: %v\n%s", line, err, o)
	}
	return time.Since(start), c.ProcessState.UserTime() + c.ProcessState.SystemTime(), nil
}
