package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/internal/text"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// The lines a person reads after a run's judgment (judge-run, the summary
// laserbrain run prints): the judgment's own words are the reference's —
// the vectors hold them, and an agent reads them through judge_run — so
// where they leave out what happened, a line of ours says it and what to
// do about it.

// driftLine says that the goal drifted from the run's ground, when it did:
// the judgment's reason speaks only of the checks that kept the ground
// ("goal held at 1.0"). "" when no check drifted.
func driftLine(j laserbrain.Judgment) string {
	c := j.Control
	if c == nil || c.Reads.GoalDrifts == 0 {
		return ""
	}
	return fmt.Sprintf("drift:    the goal drifted from the ground at %d of %s; the judgment reads the checks that held it. "+
		"Return to the ground — or, when the task really changed, reground: reset_task (MCP), or laserbrain check --user-turn after the user's new instruction.",
		c.Reads.GoalDrifts, text.Plural(int64(c.Reads.Checks), "check"))
}

// controlText is the control decision's reason in our words: what the
// reference calls recording through saw() is, here, the work the hooks
// observe (an agent's tool calls).
func controlText(because string) string {
	return strings.ReplaceAll(because, "nothing has been recorded through saw(), so this read the count and nothing else",
		"no work of this run was observed (the hooks record an agent's tool calls as its work), so this read the count of checks and nothing else")
}

// denialLine names what the gate refused on a run (its refusals for
// coverage are counted in the coverage line), and where to read them all.
// "" when it refused nothing.
func denialLine(events []fleet.RunEvent, runID string) string {
	var denied, asked int
	var labels []string
	for _, e := range events {
		if e.Kind != fleet.KindGate || coverage.IsRefusal(e) {
			continue
		}
		var res fleet.GateResult
		if json.Unmarshal(e.Result, &res) != nil {
			continue
		}
		switch res.Decision {
		case operator.Deny:
			denied++
		case operator.Ask:
			asked++
		default:
			continue
		}
		for _, l := range res.Labels {
			if !slices.Contains(labels, l) {
				labels = append(labels, l)
			}
		}
	}
	if denied+asked == 0 {
		return ""
	}
	var parts []string
	if denied > 0 {
		parts = append(parts, text.Plural(int64(denied), "tool call")+" denied")
	}
	if asked > 0 {
		parts = append(parts, text.Plural(int64(asked), "tool call")+" held for a person to confirm")
	}
	what := ""
	if len(labels) > 0 {
		if len(labels) > 3 {
			labels = append(labels[:3], "…")
		}
		what = " (" + strings.Join(labels, "; ") + ")"
	}
	return fmt.Sprintf("gate:     %s%s; laserbrain history --run %s lists each with its reason", strings.Join(parts, ", "), what, runID)
}
