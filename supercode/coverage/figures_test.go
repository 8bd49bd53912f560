package coverage

import (
	"encoding/json"
	"testing"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/fleet"
)

func tool() fleet.RunEvent          { return fleet.RunEvent{Kind: fleet.KindTool, Name: "Bash"} }
func check(r string) fleet.RunEvent { return fleet.RunEvent{Kind: fleet.KindCheck, Name: r} }
func reset() fleet.RunEvent         { return fleet.RunEvent{Kind: fleet.KindTask, Name: "reset_task"} }
func sessionStart() fleet.RunEvent {
	return fleet.RunEvent{Kind: fleet.KindSession, Name: "session-start"}
}
func runStart() fleet.RunEvent { return fleet.RunEvent{Kind: fleet.KindSession, Name: "run-start"} }
func gate(d operator.Answer, labels ...string) fleet.RunEvent {
	b, _ := json.Marshal(fleet.GateResult{Decision: d, Labels: labels})
	return fleet.RunEvent{Kind: fleet.KindGate, Result: b}
}

func TestMeasure(t *testing.T) {
	evs := func(es ...fleet.RunEvent) []fleet.RunEvent { return es }
	cases := []struct {
		name string
		evs  []fleet.RunEvent
		want Figures
	}{
		{"nothing", nil, Figures{}},
		{"five calls, no check", evs(tool(), tool(), tool(), tool(), tool()),
			Figures{ToolCalls: 5, LongestUnchecked: 5, SinceCheck: 5, SinceGround: 5, Unmeasured: true}},
		{"grounded, then five calls", evs(check("grounded"), tool(), tool(), tool(), tool(), tool()),
			Figures{ToolCalls: 5, Checks: 1, Coverage: 0.17, LongestUnchecked: 5, SinceCheck: 5, SinceGround: 5, Unmeasured: true}},
		{"calls, then the ground: measured once", evs(tool(), tool(), check("grounded")),
			Figures{ToolCalls: 2, Checks: 1, Coverage: 0.33, LongestUnchecked: 2}},
		{"grounded, calls, a check", evs(check("grounded"), tool(), tool(), tool(), check("advancing"), tool()),
			Figures{ToolCalls: 4, Checks: 2, Coverage: 0.33, LongestUnchecked: 3, SinceCheck: 1, SinceGround: 4}},
		{"a reset: the new task is unmeasured until its check", evs(check("grounded"), tool(), check("advancing"), reset(), tool(), tool()),
			Figures{ToolCalls: 3, Checks: 2, Coverage: 0.4, LongestUnchecked: 2, SinceCheck: 2, SinceGround: 2, Unmeasured: true}},
		{"a reground is a ground", evs(check("grounded"), tool(), check("advancing"), tool(), check("reground"), tool(), tool(), tool()),
			Figures{ToolCalls: 5, Checks: 3, Coverage: 0.38, LongestUnchecked: 3, SinceCheck: 3, SinceGround: 3, Unmeasured: true}},
		{"the agent's own ground measures the calls right after it", evs(sessionStart(), check("grounded"), tool(), tool()),
			Figures{ToolCalls: 2, Checks: 1, Coverage: 0.33, LongestUnchecked: 2, SinceCheck: 2, SinceGround: 2}},
		{"a reground the agent spelled, then a call", evs(check("grounded"), tool(), check("advancing"), tool(), check("reground"), tool()),
			Figures{ToolCalls: 3, Checks: 3, Coverage: 0.5, LongestUnchecked: 1, SinceCheck: 1, SinceGround: 1}},
		{"but not as many as make a Stop hold for a check", evs(sessionStart(), check("grounded"), tool(), tool(), tool()),
			Figures{ToolCalls: 3, Checks: 1, Coverage: 0.25, LongestUnchecked: 3, SinceCheck: 3, SinceGround: 3, Unmeasured: true}},
		{"a ground made before the run started (run --goal) measures nothing", evs(check("grounded"), runStart(), tool()),
			Figures{ToolCalls: 1, Checks: 1, Coverage: 0.5, LongestUnchecked: 1, SinceCheck: 1, SinceGround: 1, Unmeasured: true}},
		{"a reset: the agent's next ground is its own", evs(sessionStart(), check("grounded"), tool(), reset(), check("grounded"), tool()),
			Figures{ToolCalls: 2, Checks: 2, Coverage: 0.5, LongestUnchecked: 1, SinceCheck: 1, SinceGround: 1}},
		{"an ungrammatical first check still measured the work", evs(tool(), check("ungrammatical"), tool()),
			Figures{ToolCalls: 2, Checks: 1, Coverage: 0.33, LongestUnchecked: 1, SinceCheck: 1, SinceGround: 2}},
		{"refusals for coverage, only", evs(tool(), gate(operator.Deny, Label(StageActing)), gate(operator.Deny, Label(StageHard)),
			gate(operator.Allow, Label(StageWarn)), gate(operator.Deny, "irreversible: git push --force")),
			Figures{ToolCalls: 1, LongestUnchecked: 1, SinceCheck: 1, SinceGround: 1, Unmeasured: true, Refusals: 2}},
	}
	for _, c := range cases {
		if got := Measure(c.evs); got != c.want {
			t.Errorf("%s:\n got  %+v\n want %+v", c.name, got, c.want)
		}
	}
}

func TestJudgeUnmeasured(t *testing.T) {
	held := laserbrain.Judgment{Verdict: laserbrain.JudgmentContinue, Because: "Distance 6 → 5 over 2 checks (0.50/check), goal held at 1.0."}
	if j := Judge(held, Figures{ToolCalls: 3, Checks: 2}); j.Verdict != laserbrain.JudgmentContinue {
		t.Errorf("a measured run was re-judged: %+v", j)
	}
	j := Judge(held, Measure([]fleet.RunEvent{check("grounded"), tool(), tool(), tool(), tool(), tool()}))
	if j.Verdict != Unmeasured || j.Because != "5 tool calls since the ground and no check: nothing measured the work." {
		t.Errorf("unmeasured: %+v", j)
	}
}
