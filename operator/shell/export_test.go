package shell

import (
	"runtime"
	"syscall"
	"time"
)

// What the external tests (package shell_test) reach inside. They judge
// what the analysis reads by the gate's answer, and the gate (package
// operator) imports this package, so they cannot be internal tests.

// Limits are the limits one analysis runs under.
type Limits = limits

// ProductionLimits are the limits Analyze runs under outside tests (the
// package's TestMain widens them).
var ProductionLimits = productionLimits

// CPULimits are the production limits read on the calling thread's CPU
// clock (TimedAnalyze locks the thread): a budget of work, which the load
// on the machine does not shorten. regexp2 still reads a match's timeout
// on the wall clock.
var CPULimits = limits{total: AnalysisBudget, match: MatchTimeout, now: func() time.Time { return time.Unix(0, int64(threadCPU())) }}

// The walk's limits of size and count.
const (
	MaxNesting  = maxNesting
	MaxCommands = maxCommands
)

// ErrTimeout is what a pattern match that timed out says.
var ErrTimeout = errTimeout

// AnalyzeUnder is Analyze under the limits l.
func AnalyzeUnder(l Limits, command, dir string) Analysis {
	return analyzeUnder(l, command, dir, Session{})
}

// TimedAnalyze analyses cmd under l on one locked OS thread and returns
// the CPU time that thread spent, and the wall time.
func TimedAnalyze(l Limits, cmd string) (Analysis, time.Duration, time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadCPU()
	start := time.Now()
	an := analyzeUnder(l, cmd, "", Session{})
	wall := time.Since(start)
	return an, threadCPU() - before, wall
}

// SpentAnalysis walks script with a budget whose deadline passed before
// the walk began, and returns the analysis of the raw text "ls" it
// belongs to.
func SpentAnalysis(script string) Analysis {
	spent := productionLimits
	spent.total = spent.match - time.Millisecond
	a := newAnalyzer(spent.start(), "", Session{})
	a.script(script, 0)
	v, raw := classifyRaw("ls", true, false, productionLimits.start())
	return a.result("ls", "", v, raw)
}

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1
