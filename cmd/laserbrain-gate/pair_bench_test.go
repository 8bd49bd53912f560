package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/confine"
)

// pairDriverName is the name the test binary answers to as the agent of
// BenchmarkHookPairUnderRun (TestMain dispatches on it).
const pairDriverName = "laserkit-pair-driver"

// pairSpec is what the driver runs inside laserbrain run: each round, in a
// fresh order, the installed PreToolUse and PostToolUse command lines of
// each contender, as Claude Code runs them (sh -c, the event on standard
// input), timed as one pair.
type pairSpec struct {
	Rounds int
	// Pairs are the contenders' (pre, post) command lines.
	Pairs map[string][2]string
	// Check is a check the agent makes every CheckEvery rounds, untimed,
	// so that coverage lets its calls go ahead as a working agent's.
	Check      []string
	CheckEvery int
	// Out is where the driver writes each contender's times.
	Out string
	// Mark: the driver marks each hook's start and end for a tracer of
	// the run (hookMark), so that what the run did answering it can be
	// told apart.
	Mark bool
}

// pairTimes are one contender's pairs: the wall time of each, and the CPU
// time its two hook processes and the run's broker spent on it.
type pairTimes struct {
	Wall, CPU []time.Duration
	// Children is the CPU time of the processes the run's process started
	// and waited for while answering (the undo checkpoint's git), over all
	// of the contender's pairs: the kernel counts it in clock ticks, too
	// coarse for one pair, so the benchmark adds its mean to the median.
	Children time.Duration
	// Run is the part of CPU the run's process spent answering the pair.
	Run []time.Duration
}

// BenchmarkHookPairUnderRun is what a tool call's hooks cost an agent
// supervised by laserbrain run: the installed PreToolUse (laserbrain-gate)
// and PostToolUse (laserbrain hook post-tool-use) command lines, run as
// Claude Code runs them (through sh -c, the event on standard input) by an
// agent confined by the kernel, whose hooks hand each event to the run's
// broker; beside the same pair of command lines installed for an empty Go
// program, interleaved in one run inside the same agent. x-empty is the
// ratio of the wall medians (the target is at most 2×, and 10 ms a pair on
// the idle machine). cpu-x-empty is the same ratio in CPU time (the hook
// processes' own, and for laserbrain's pair what the run's process spent
// answering it, with the mean of what its children — the checkpoint's git —
// spent), which the machine's load moves far less: the benchmark
// fails when it is over 2×. PAIR_BIN_DIR measures another build instead
// (its laserbrain and laserbrain-gate). The call is a Bash command
// that may write (so the undo checkpoint runs); the agent checks every
// third round, untimed, as a working agent does.
func BenchmarkHookPairUnderRun(b *testing.B) {
	dir := b.TempDir()
	lb := filepath.Join(dir, "laserbrain")
	// PAIR_BIN_DIR names another build's laserbrain and laserbrain-gate (an
	// earlier commit's) to measure instead of this one's; PAIR_POST=hook
	// gives it the PostToolUse a build whose gate answered only PreToolUse
	// installed (laserbrain hook post-tool-use, from a copy with no gate
	// beside it).
	post := ""
	if other := os.Getenv("PAIR_BIN_DIR"); other != "" {
		copyExec(b, filepath.Join(other, "laserbrain"), lb)
		copyExec(b, filepath.Join(other, client.GateName), filepath.Join(dir, client.GateName))
		if os.Getenv("PAIR_POST") == "hook" {
			alone := filepath.Join(b.TempDir(), "laserbrain")
			copyExec(b, lb, alone)
			post = client.HookCommand(alone, client.Claude, client.PostToolUse)
		}
	} else {
		copyExec(b, buildLaserbrain(b), lb)
		copyExec(b, buildGate(b), filepath.Join(dir, client.GateName))
	}
	empty := filepath.Join(b.TempDir(), "empty")
	copyExec(b, buildEmptyAnswering(b), empty)
	repo := gitRepo(b)
	home := b.TempDir()
	out := filepath.Join(repo, ".pair-times.json")
	rounds := max(b.N, 30)
	if post == "" {
		post = client.HookCommand(lb, client.Claude, client.PostToolUse)
	}
	spec := pairSpec{Rounds: rounds, Out: out, CheckEvery: 3,
		Check: []string{lb, "check", "--goal", "make the parser pass its tests", "--distance", "5"},
		Pairs: map[string][2]string{
			"laserbrain": {client.HookCommand(lb, client.Claude, client.PreToolUse), post},
			"empty-go":   {client.HookCommand(empty, client.Claude, client.PreToolUse), client.HookCommand(empty, client.Claude, client.PostToolUse)},
		}}
	raw, err := json.Marshal(spec)
	if err != nil {
		b.Fatal(err)
	}
	times := driveUnderRun(b, lb, pairDriverName, repo, out, "LASERBRAIN_HOME="+home, "HOME="+home, "LASERBRAIN_STORE=local", "LASERKIT_PAIR_SPEC="+string(raw))
	ours, base := times["laserbrain"], times["empty-go"]
	wall, wallBase := median(ours.Wall), median(base.Wall)
	cpu, cpuBase := median(ours.CPU)+ours.Children/time.Duration(len(ours.CPU)), median(base.CPU)+base.Children/time.Duration(len(base.CPU))
	x, xc := float64(wall)/float64(wallBase), float64(cpu)/float64(cpuBase)
	b.ReportMetric(float64(wall.Microseconds())/1000, "pair-ms")
	b.ReportMetric(float64(wallBase.Microseconds())/1000, "empty-pair-ms")
	b.ReportMetric(x, "x-empty")
	b.ReportMetric(float64(cpu.Microseconds())/1000, "pair-cpu-ms")
	b.ReportMetric(float64(cpuBase.Microseconds())/1000, "empty-pair-cpu-ms")
	b.ReportMetric(xc, "cpu-x-empty")
	// Where laserbrain's pair spends: the run's process answering it, and
	// the rest (its two hook processes and their shells).
	b.ReportMetric(float64(median(ours.Run).Microseconds())/1000, "run-process-cpu-ms")
	b.Logf("a tool call's hooks under laserbrain run: %v (CPU %v, of it the run's process %v), the same pair of an empty Go program %v (CPU %v); medians of %d: %.2f×, CPU %.2f×",
		wall, cpu, median(ours.Run), wallBase, cpuBase, rounds, x, xc)
	if xc > 2 {
		b.Errorf("the hook pair under laserbrain run takes %.2f× the CPU of the empty program's pair, over 2×", xc)
	}
}

// pairDriver is the agent of BenchmarkHookPairUnderRun: it runs the spec
// in LASERKIT_PAIR_SPEC and writes the times.
func pairDriver() int {
	var spec pairSpec
	if err := json.Unmarshal([]byte(os.Getenv("LASERKIT_PAIR_SPEC")), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "pair driver:", err)
		return 2
	}
	wd, _ := os.Getwd()
	names := make([]string, 0, len(spec.Pairs))
	for n := range spec.Pairs {
		names = append(names, n)
	}
	d := driver{who: "pair driver", names: names, rounds: spec.Rounds, seed: 1, out: spec.Out}
	d.round = func(i int) {
		if spec.CheckEvery > 0 && i%spec.CheckEvery == 0 {
			if o, err := exec.Command(spec.Check[0], spec.Check[1:]...).CombinedOutput(); err != nil && !strings.Contains(string(o), "verdict") {
				fmt.Fprintf(os.Stderr, "pair driver: check: %v\n%s", err, o)
			}
		}
	}
	d.call = func(n string, i int) (time.Duration, time.Duration, error) {
		return runPair(spec.Pairs[n], wd, fmt.Sprintf("%s-%d", n, i), spec.Mark)
	}
	return d.drive()
}

// driver is the loop of an agent a benchmark runs under laserbrain run:
// rounds of calls, one a contender, in an order shuffled afresh each round
// from seed.
type driver struct {
	who    string // for its messages
	names  []string
	rounds int
	seed   uint64
	out    string // where the times are written, as JSON
	// round, if set, runs at the start of each round, untimed; prepare
	// before each call, untimed too.
	round   func(i int)
	prepare func(name string, i int) error
	// call makes one call and returns its wall time and its processes' CPU.
	call func(name string, i int) (wall, cpu time.Duration, err error)
}

// drive runs the rounds and writes the times: each call's wall time, its
// CPU with what the run's process spent meanwhile (Run, that part alone),
// and the CPU of the children the run's process waited for. It returns the
// driver's exit status, 1 when a step failed.
func (d driver) drive() int {
	sv := supervisorPid()
	times := map[string]*pairTimes{}
	rng := rand.New(rand.NewPCG(d.seed, d.seed+1))
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, d.who+":", err)
		return 1
	}
	for i := 0; i < d.rounds; i++ {
		if d.round != nil {
			d.round(i)
		}
		rng.Shuffle(len(d.names), func(a, c int) { d.names[a], d.names[c] = d.names[c], d.names[a] })
		for _, n := range d.names {
			if d.prepare != nil {
				if err := d.prepare(n, i); err != nil {
					return fail(err)
				}
			}
			before, kids := cpuOf(sv), childrenCPUOf(sv)
			wall, cpu, err := d.call(n, i)
			if err != nil {
				return fail(err)
			}
			if times[n] == nil {
				times[n] = &pairTimes{}
			}
			times[n].Wall = append(times[n].Wall, wall)
			answered := cpuOf(sv) - before
			times[n].CPU = append(times[n].CPU, cpu+answered)
			times[n].Run = append(times[n].Run, answered)
			times[n].Children += childrenCPUOf(sv) - kids
		}
	}
	data, _ := json.Marshal(times)
	if err := os.WriteFile(d.out, data, 0o644); err != nil {
		return fail(err)
	}
	return 0
}

// supervisorPid is the laserbrain run process above this one (0 when
// there is none).
func supervisorPid() int {
	for p := os.Getppid(); p > 1; {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p))
		if err != nil {
			return 0
		}
		if strings.TrimSpace(string(comm)) == confine.SupervisorComm {
			return p
		}
		f := statFields(p)
		if len(f) < 2 {
			return 0
		}
		p, _ = strconv.Atoi(f[1]) // the parent
	}
	return 0
}

// cpuOf is the CPU time process pid has spent, every thread's (the
// scheduler's nanoseconds, /proc/PID/task/*/schedstat); 0 for pid 0.
func cpuOf(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var total time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(ns)
		}
	}
	return total
}

// childrenCPUOf is the CPU time of the children process pid waited for
// (/proc/PID/stat's cutime and cstime, in clock ticks; 0 for pid 0).
func childrenCPUOf(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	f := statFields(pid)
	if len(f) < 15 { // cutime and cstime are the 14th and 15th
		return 0
	}
	ut, _ := strconv.ParseInt(f[13], 10, 64)
	st, _ := strconv.ParseInt(f[14], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// statFields are the fields of /proc/PID/stat after the command's closing
// ")" (the command may hold spaces and parentheses): the state first, then
// the parent; none where the process cannot be read.
func statFields(pid int) []string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := strings.LastIndexByte(string(stat), ')')
	if err != nil || i < 0 {
		return nil
	}
	return strings.Fields(string(stat[i+1:]))
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times (100
// on every Linux architecture Go runs on).
const clockTicks = 100

// runPair runs one tool call's two hooks and returns how long both took
// and the CPU time of their processes.
func runPair(pair [2]string, cwd, id string, mark bool) (time.Duration, time.Duration, error) {
	call := fmt.Sprintf(`"session_id":"pair-bench","tool_use_id":%q,"tool_name":"Bash","cwd":%q,"tool_input":{"command":"go test ./..."}`, id, cwd)
	events := [2]string{`{"hook_event_name":"PreToolUse",` + call + `}`,
		`{"hook_event_name":"PostToolUse",` + call + `,"tool_response":{"stdout":"ok","stderr":"","interrupted":false}}`}
	start := time.Now()
	var cpu time.Duration
	for k, line := range pair {
		c := exec.Command("/bin/sh", "-c", line)
		c.Stdin = strings.NewReader(events[k])
		if mark {
			hookMark(k, "begin")
		}
		o, err := c.CombinedOutput()
		if mark {
			hookMark(k, "end")
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %v\n%s", line, err, o)
		}
		cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	}
	return time.Since(start), cpu, nil
}

// hookMarkDir is where hookMark's paths would be: nowhere.
const hookMarkDir = "/laserkit-hook-mark-that-does-not-exist"

// hookMark marks, for a tracer of the run (strace -e trace=truncate), the
// begin or end of the pair's hook k (0 PreToolUse, 1 PostToolUse): a
// truncate(2) of a path that is not there, which nothing else here calls.
func hookMark(k int, what string) {
	_ = syscall.Truncate(fmt.Sprintf("%s/%s-%s", hookMarkDir, [2]string{"pre", "post"}[k], what), 0)
}

// copyExec writes the program at src to dst as install does (plain
// writes; see installed).
func copyExec(b testing.TB, src, dst string) {
	b.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		b.Fatal(err)
	}
}

// gitRepo is a repository with one commit, for an agent to work in.
func gitRepo(b testing.TB) string {
	b.Helper()
	testenv.LookPath(b, "git")
	dir := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=b@example.com", "-c", "user.name=b", "commit", "-qm", "start", "--allow-empty"}} {
		c := exec.Command("git", args...)
		c.Dir = dir
		if o, err := c.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, o)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// driveUnderRun runs this test binary as the agent named driverName (its
// TestMain plays the driver the spec in env describes) under laserbrain
// run lb in repo, timed, and returns the times the driver wrote to out.
// An agent the kernel does not confine is skipped (failed under CI): its
// hooks would not go through the run's broker.
func driveUnderRun(b *testing.B, lb, driverName, repo, out string, env ...string) map[string]pairTimes {
	b.Helper()
	driver := filepath.Join(b.TempDir(), driverName)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink(self, driver); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(lb, "run", "--agent", "bench", "--goal", "make the parser pass its tests", "--", driver)
	cmd.Dir = repo
	cmd.Env = append(quietEnv(), env...)
	b.ResetTimer()
	if o, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("laserbrain run: %v\n%s", err, o)
	} else if !strings.Contains(string(o), "confined by the kernel") && strings.Contains(string(o), "not confined") {
		testenv.SkipOrFail(b, "the agent is not confined here, so its hooks do not go through the broker:\n%s", o)
	}
	b.StopTimer()
	data, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	var times map[string]pairTimes
	if err := json.Unmarshal(data, &times); err != nil {
		b.Fatal(err)
	}
	return times
}
