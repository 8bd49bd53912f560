package operator

import "github.com/laserkit/laserkit/operator/shell"

// classified is a command's analysis with the gate's answer when nothing
// is known about who is there (answered as attended), no run state and no
// project policy: what most tests check.
type classified struct {
	shell.Analysis
	Decision Answer
	decision Decision
}

func classify(cmd string) classified { return classifyIn("", cmd) }

func classifyIn(dir, cmd string) classified {
	an := shell.Analyze(cmd, dir)
	d := Decide(an, PresenceUnknown, RunState{Read: true}, Policy{})
	return classified{Analysis: an, Decision: d.Action, decision: d}
}

// answerFor is the gate's answer for a presence (why: what said so).
func (c classified) answerFor(p Presence, why string) Decision {
	return Decide(c.Analysis, p, RunState{Read: true, PresenceWhy: why}, Policy{})
}

func trim(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
