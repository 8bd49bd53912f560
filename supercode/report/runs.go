package report

import (
	"strconv"

	"github.com/laserkit/laserkit/laserbrain"
)

// AgentFromRuns is the adapter from laserbrain's runs to an agent: the runs
// are the agent's tasks in order (one for a plain run; `laserbrain run`
// starts a new task on reset_task), their checks one series, numbered
// across tasks. The ground is the last task's.
func AgentFromRuns(name, run string, tasks []*laserbrain.Run) Agent {
	a := Agent{Name: name, Run: run, Kind: "run", Steps: []Step{}, Catches: []string{}, Footprint: []string{}}
	n := 0
	for i, r := range tasks {
		if r == nil {
			continue
		}
		a.Ground = r.GroundGoal()
		for _, s := range r.Steps() {
			n++
			a.Steps = append(a.Steps, Step{N: n, Task: i + 1, At: s.At, Goal: s.Goal, Progress: s.Progress,
				Distance: distance(s.Distance), Reason: s.Reason, Underlying: s.Underlying, Drifting: s.Drifting, Phi: s.Phi})
		}
	}
	if len(a.Steps) > 0 {
		a.Created = a.Steps[0].At
	}
	if len(tasks) > 0 && tasks[len(tasks)-1] != nil && len(a.Steps) > 0 {
		a.Judgment = tasks[len(tasks)-1].Phronesis().Verdict
	}
	return a
}

func distance(d laserbrain.Distance) string {
	if !d.Known {
		return "unknown"
	}
	return strconv.Itoa(d.Value)
}
