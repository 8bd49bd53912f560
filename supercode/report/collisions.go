package report

import (
	"slices"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode"
)

// FindCollisions is the adapter from the agents to the fleet's
// collisions: the supervisor's own collision model (supercode.Collide — a
// session by its subject with its lens beside it, a run and the session it
// drives never), with when each began and the files both agents touched.
// The report is history too, so a pair one of whose agents has finished
// is kept, marked Over; the rest are exactly the supervisor's collisions.
// Outcomes come from the supervisor's records (Outcomes).
func FindCollisions(agents []Agent) []Collision {
	gs := make([]supercode.Ground, 0, len(agents))
	byName := map[string]*Agent{}
	for i := range agents {
		a := &agents[i]
		byName[a.Name] = a
		gs = append(gs, supercode.Ground{Agent: a.Name, Ground: a.Ground, Subject: a.Subject, Lens: a.Lens, SameAs: a.SameAs})
	}
	out := []Collision{}
	for _, c := range supercode.Collide(gs) {
		a, b := byName[c.Agents[0]], byName[c.Agents[1]]
		first := groundedAt(a)
		if t := groundedAt(b); t.After(first) {
			first = t
		}
		out = append(out, Collision{Agents: c.Agents, Overlap: c.Overlap, Grounds: c.Grounds, Lenses: [2]string{a.Lens, b.Lens},
			Over: a.Finished || b.Finished, FirstSeen: first, SharedFiles: shared(a.Footprint, b.Footprint)})
	}
	return out
}

// groundedAt is when the agent's current ground was set: its latest
// grounded or reground check (the first check when none says so).
func groundedAt(a *Agent) time.Time {
	for i := len(a.Steps) - 1; i >= 0; i-- {
		r := a.Steps[i].Reason
		if r == laserbrain.VerdictGrounded.String() || r == laserbrain.VerdictReground.String() {
			return a.Steps[i].At
		}
	}
	if len(a.Steps) > 0 {
		return a.Steps[0].At
	}
	return a.Created
}

// shared is the intersection of two sorted lists.
func shared(a, b []string) []string {
	out := []string{}
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); ok {
			out = append(out, x)
		}
	}
	return out
}

// Outcomes attaches what the supervisor did about each collision: a halt
// of one of the pair after the collision began, else an escalation naming
// the pair. Without the supervisor's records every outcome stays
// empty and the report says it is not recorded.
func Outcomes(cols []Collision, halts []Halt, escs []Escalation) {
	for i := range cols {
		c := &cols[i]
		for _, h := range halts {
			if (h.Agent == c.Agents[0] || h.Agent == c.Agents[1]) && !h.At.Before(c.FirstSeen) {
				keep := c.Agents[0]
				if keep == h.Agent {
					keep = c.Agents[1]
				}
				c.Outcome = Outcome{Kind: "halted", Keep: keep, Yield: h.Agent, Why: h.Reason, At: h.At}
				break
			}
		}
		if c.Outcome.Kind != "" {
			continue
		}
		for _, e := range escs {
			if e.Who == c.Agents[0]+"+"+c.Agents[1] || e.Who == c.Agents[1]+"+"+c.Agents[0] {
				c.Outcome = Outcome{Kind: "escalated", Why: e.Why, At: e.At}
				break
			}
		}
	}
}
