package shell

import (
	"fmt"
	"time"
)

// limits are the time limits one analysis runs under and the clock it
// reads them on. Every analysis a program makes runs under
// productionLimits: AnalysisBudget on the wall clock, MatchTimeout per
// regexp match. No flag, setting or environment variable changes them;
// only tests do (WidenBudgetForTest, which no program links, and this
// package's own tests through analyzeUnder).
type limits struct {
	// total bounds the whole analysis; new work starts until all but one
	// match timeout of it is spent.
	total time.Duration
	// match bounds one regexp match (regexp2 reads it on the wall clock,
	// whatever now is).
	match time.Duration
	now   func() time.Time
}

var productionLimits = limits{total: AnalysisBudget, match: MatchTimeout, now: time.Now}

// active are the limits Analyze and the compiled patterns use.
var active = productionLimits

// TestBudgetFactor is the factor the test binaries widen the budget by:
// 150 ms becomes 30 s, a 50 ms match 10 s.
const TestBudgetFactor = 200

// maxTestFactor bounds WidenBudgetForTest: even a test binary's budget is
// a bound.
const maxTestFactor = 1000

// WidenBudgetForTest multiplies the analysis budget and the match timeout
// by factor (2 to 1000) for the rest of the process. It exists for tests
// that are not about the budget: on a loaded machine (a CI runner at load
// 30) a command that takes a few milliseconds of work can take longer than
// 150 ms of wall time, and such a test would see "analysis took too long"
// instead of what it checks. Past the widened budget the answer is still
// unknown, never allowed. Call it from TestMain before any analysis (a
// pattern takes its match timeout when it compiles, on first use).
//
// Only tests call it, so the linker leaves it out of every program (a
// test of the installed binaries holds them to that): nothing a program
// runs, reads or is given can widen the gate's budget, and no program
// links the testing package to ask whether it is a test.
func WidenBudgetForTest(factor int) {
	if factor < 2 || factor > maxTestFactor {
		panic(fmt.Sprintf("operator: WidenBudgetForTest(%d): the factor must be 2 to %d", factor, maxTestFactor))
	}
	active = limits{total: productionLimits.total * time.Duration(factor), match: productionLimits.match * time.Duration(factor), now: time.Now}
}

// deadline is the moment after which an analysis starts no new work, on
// its limits' clock; the zero deadline never passes.
type deadline struct {
	at    time.Time
	now   func() time.Time
	total time.Duration
	match time.Duration
}

// start is the deadline of an analysis that starts now.
func (l limits) start() deadline {
	return deadline{at: l.now().Add(l.total - l.match), now: l.now, total: l.total, match: l.match}
}

// timeout is the match timeout the patterns run with under this deadline
// (the active one when there is none).
func (d deadline) timeout() time.Duration {
	if d.now == nil {
		return active.match
	}
	return d.match
}

func (d deadline) set() bool { return d.now != nil }

func (d deadline) passed() bool { return d.now != nil && d.now().After(d.at) }

// stopped is the note an analysis that ran out of time carries.
func (d deadline) stopped() string { return fmt.Sprintf("stopped after %v", d.total) }

// AnalysisBudget bounds the time Analyze spends on one input, every phase
// together (raw scan, parse, analysis, script files read). No new work
// starts once all but one regexp match timeout of it is spent, so a match
// in flight still ends within it; what was not read makes the
// analysis incomplete (unknown: asked when a person is there, refused when
// nobody is), never allowed. It leaves a hook process room to start and
// answer within 250 ms.
const AnalysisBudget = 150 * time.Millisecond

// MatchTimeout bounds one regexp2 match. regexp2 backtracks, so a hostile
// command could otherwise keep the gate busy; a timeout counts as a match
// (fail closed).
const MatchTimeout = 50 * time.Millisecond
