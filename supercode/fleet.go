package supercode

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/laserkit/laserkit/laserbrain"
)

// FleetCatch is what only the fleet's evidence shows: a per-agent catch
// reading cannot reach it, because it needs the events of several agents.
type FleetCatch struct {
	Signature string   `json:"signature"`
	Subject   string   `json:"subject"`
	Agents    []string `json:"agents"`
	Detail    string   `json:"detail"`
}

// The fleet catch signatures.
const (
	// FleetBlind: one tool returned the identical result to several agents:
	// it is not reading its input (accuses the instrument).
	FleetBlind = "blind_fleet"
	// FleetThinEvidence: a check green everywhere, red nowhere, with no agent
	// having seen enough of it alone. As in the reference, it is suppressed
	// whenever a per-agent unfalsified already fired for one of those agents
	// — which any agent whose every run of that check passed has — so it
	// does not fire; it is kept for parity and named here so that is known.
	FleetThinEvidence = "thin_evidence"
	// FleetUnrunCleared: an agent flagged unrun for a claim another agent
	// did run (exonerates: the per-agent catch was a false positive).
	FleetUnrunCleared = "unrun_cleared"
)

// FleetCatches reports where the fleet's evidence changes a per-agent
// answer, in both directions: blind_fleet (a tool returning one identical
// result to several agents), thin_evidence, and unrun_cleared (another
// agent ran what this one was flagged for claiming unrun). Tools and
// checks in name order, then claims in agent and event order.
//
// Results are compared by their Python repr, with map keys sorted (the
// reference's repr keeps a dict's insertion order, which Go maps lack).
func (s *Supercode) FleetCatches() []FleetCatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.fleetCatchesLocked())
}

type toolSeen struct {
	agents  map[string]bool
	results map[string]bool
}

type checkRow struct {
	agent string
	ok    bool
}

type claim struct{ agent, subject string }

func (s *Supercode) fleetCatchesLocked() []FleetCatch {
	if s.fleetFresh {
		return s.fleet
	}
	byCheck := map[string][]checkRow{}
	byTool := map[string]*toolSeen{}
	var claims []claim
	perAgent := map[string]map[string]bool{}
	for _, name := range s.names {
		a := s.agents[name]
		sigs := map[string]bool{}
		for _, c := range a.catchesLocked() {
			sigs[c.Signature] = true
		}
		perAgent[name] = sigs
		for _, e := range a.Events {
			switch e.Kind {
			case laserbrain.EventCheck:
				if e.OK.Known() {
					byCheck[e.Name] = append(byCheck[e.Name], checkRow{name, e.OK == laserbrain.OKTrue})
				}
			case laserbrain.EventTool:
				t := byTool[e.Name]
				if t == nil {
					t = &toolSeen{agents: map[string]bool{}, results: map[string]bool{}}
					byTool[e.Name] = t
				}
				t.agents[name] = true
				t.results[laserbrain.PyRepr(e.Result)] = true
			case laserbrain.EventClaim:
				claims = append(claims, claim{name, e.Name})
			}
		}
	}

	out := []FleetCatch{}
	for _, tool := range slices.Sorted(maps.Keys(byTool)) {
		t := byTool[tool]
		if len(t.agents) > 1 && len(t.results) == 1 {
			out = append(out, FleetCatch{FleetBlind, tool, slices.Sorted(maps.Keys(t.agents)),
				fmt.Sprintf("'%s' returned an identical result to %d agents doing different work — it is not reading its input", tool, len(t.agents))})
		}
	}
	for _, check := range slices.Sorted(maps.Keys(byCheck)) {
		rows := byCheck[check]
		seen := map[string]bool{}
		allOK := true
		for _, r := range rows {
			seen[r.agent] = true
			allOK = allOK && r.ok
		}
		agents := slices.Sorted(maps.Keys(seen))
		if len(agents) < 2 || !allOK {
			continue
		}
		if slices.ContainsFunc(agents, func(a string) bool { return perAgent[a][laserbrain.CatchUnfalsified] }) {
			continue
		}
		if len(rows) >= 3 {
			out = append(out, FleetCatch{FleetThinEvidence, check, agents,
				fmt.Sprintf("'%s' passed %dx across %d agents and never failed, and no single agent saw enough of it to notice", check, len(rows), len(agents))})
		}
	}
	for _, c := range claims {
		var others []string
		if t := byTool[c.subject]; t != nil {
			for a := range t.agents {
				if a != c.agent {
					others = append(others, a)
				}
			}
		}
		if len(others) == 0 || !perAgent[c.agent][laserbrain.CatchUnrun] {
			continue
		}
		sort.Strings(others)
		agents := append([]string{c.agent}, others...)
		sort.Strings(agents)
		out = append(out, FleetCatch{FleetUnrunCleared, c.subject, agents,
			fmt.Sprintf("'%s' was flagged for claiming '%s' without running it, but %s did — the claim is backed and the per-agent catch is a false positive", c.agent, c.subject, strings.Join(others, ", "))})
	}
	s.fleet, s.fleetFresh = out, true
	return out
}
