package coverage

import (
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Unmeasured is the state of a run (or of a task of a run) that made tool
// calls and spelled no check since its last ground: nothing measured the
// work, so no verdict about it may read as grounded or continue. A ground
// the agent spelled itself measures the few calls after it
// (GroundMeasures): an agent that checks, then acts, is within the cadence
// it was told.
const Unmeasured = "unmeasured"

// GroundMeasures is how many tool calls after a ground the agent spelled
// itself still read measured with no check after it: fewer than make a
// Stop hold the agent for a last check (Default().StopAfter), so a run the
// Stop hook let end is never called unmeasured for those calls. A ground
// made for the agent (laserbrain run --goal, recorded before the run
// starts) measures none: the agent spelled nothing.
const GroundMeasures = 3

// Figures are a run's coverage, read from the events its hooks and checks
// recorded: every tool call and every check is a step; coverage is checks
// over steps.
type Figures struct {
	ToolCalls int     `json:"tool_calls"`
	Checks    int     `json:"checks"`
	Coverage  float64 `json:"coverage"`
	// LongestUnchecked is the most tool calls in a row without a check;
	// SinceCheck the tool calls since the last one (all, before any).
	LongestUnchecked int `json:"longest_unchecked"`
	SinceCheck       int `json:"since_check"`
	// Refusals counts the gate's refusals for coverage (gate events
	// labelled RuleCoverage).
	Refusals int `json:"refusals"`
	// SinceGround counts the tool calls since the last ground (a check
	// that grounded or regrounded the task, or a reset_task); Unmeasured
	// is set when there were some and no check followed the ground.
	SinceGround int  `json:"since_ground"`
	Unmeasured  bool `json:"unmeasured"`
}

// Tally reads events one at a time, oldest first, so a reader that polls
// takes in only what is new.
type Tally struct {
	f                 Figures
	stretch           int
	checksSinceGround int
	// started: a session or the run's process has begun, so a check is
	// the agent's (laserbrain run --goal records its ground before);
	// ownGround: the current ground is a check the agent spelled.
	started, ownGround bool
}

// Add takes in one event.
func (t *Tally) Add(e fleet.RunEvent) {
	if e.Kind != fleet.KindCheck {
		t.started = true
	}
	switch e.Kind {
	case fleet.KindTool:
		t.f.ToolCalls++
		t.stretch++
		t.f.SinceGround++
		t.f.LongestUnchecked = max(t.f.LongestUnchecked, t.stretch)
	case fleet.KindCheck:
		t.f.Checks++
		t.stretch = 0
		if e.Name == laserbrain.VerdictGrounded.String() || e.Name == laserbrain.VerdictReground.String() {
			t.f.SinceGround, t.checksSinceGround, t.ownGround = 0, 0, t.started
		} else {
			t.checksSinceGround++
		}
	case fleet.KindTask:
		t.f.SinceGround, t.checksSinceGround, t.ownGround = 0, 0, false
	case fleet.KindGate:
		if IsRefusal(e) {
			t.f.Refusals++
		}
	}
}

// Figures are the figures of what was added so far.
func (t *Tally) Figures() Figures {
	f := t.f
	f.SinceCheck = t.stretch
	if steps := f.ToolCalls + f.Checks; steps > 0 {
		f.Coverage = laserbrain.Round2(float64(f.Checks) / float64(steps))
	}
	f.Unmeasured = f.SinceGround > 0 && t.checksSinceGround == 0 && !(t.ownGround && f.SinceGround < GroundMeasures)
	return f
}

// Measure reads a run's events, oldest first.
func Measure(events []fleet.RunEvent) Figures {
	var t Tally
	for _, e := range events {
		t.Add(e)
	}
	return t.Figures()
}

// Label is the gate-event label of a coverage warning or refusal at stage.
func Label(stage string) string { return RuleCoverage + ": " + stage }

// IsRefusal reports whether a gate event is a refusal for coverage: denied,
// with a Label among its labels.
func IsRefusal(e fleet.RunEvent) bool {
	if e.Kind != fleet.KindGate {
		return false
	}
	res, ok := fleet.ReadGateResult(e.Result)
	if !ok || res.Decision != operator.Deny {
		return false
	}
	for _, l := range res.Labels {
		if strings.HasPrefix(l, RuleCoverage+": ") {
			return true
		}
	}
	return false
}

// Judge is the whole-run judgment a run's figures allow: j itself, or,
// for an unmeasured run, the unmeasured judgment — which never says the
// goal held, since nothing spelled it again.
func Judge(j laserbrain.Judgment, f Figures) laserbrain.Judgment {
	if !f.Unmeasured {
		return j
	}
	return laserbrain.Judgment{Verdict: Unmeasured,
		Because: fmt.Sprintf("%s since the ground and no check: nothing measured the work.", text.Plural(f.SinceGround, "tool call")),
		Counsel: "Check (check_state, or laserbrain check) with the goal, progress and distance now; until then the run has no verdict."}
}

// Summary is the figures in one line: "5 tool calls, 1 check, coverage
// 17%, longest unchecked 5".
func (f Figures) Summary() string {
	s := fmt.Sprintf("%s, %s, coverage %s, longest unchecked %d", text.Plural(f.ToolCalls, "tool call"), text.Plural(f.Checks, "check"), pct(f.Coverage), f.LongestUnchecked)
	if f.Refusals > 0 {
		s += ", " + text.Plural(f.Refusals, "refusal") + " for coverage"
	}
	return s
}
