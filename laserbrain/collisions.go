package laserbrain

import (
	"slices"
	"sort"
	"strings"
)

// CollisionMin is the ground overlap at or above which two agents are doing
// the same job (the grammar's collision_min). It is higher than goal_min on
// purpose: two agents on one ground is a stronger claim than one agent off
// its own.
func CollisionMin() float64 { return collisionMin }

// Collision is two agents whose grounds overlap enough that they are doing
// the same job. It is a supervisor's finding about a pair of agents, not a
// verdict about either: each may be perfectly on its own ground.
type Collision struct {
	Agents  [2]string `json:"agents"`
	Overlap float64   `json:"overlap"` // 2 places
	Grounds [2]string `json:"grounds"`
}

// Collisions compares every pair of agents (names sorted) by the Jaccard
// overlap of their ground goals' tokens and reports the pairs at or above
// CollisionMin(), highest overlap first (pairs in name order among equals).
// Agents whose ground is blank or has no tokens take no part.
func Collisions(grounds map[string]string) []Collision {
	gs := make([]AgentGround, 0, len(grounds))
	for name, g := range grounds {
		gs = append(gs, AgentGround{Agent: name, Ground: g, Tokens: Norm(g)})
	}
	slices.SortFunc(gs, func(a, b AgentGround) int { return strings.Compare(a.Agent, b.Agent) })
	return CollisionsAmong(gs)
}

// AgentGround is one agent's ground with its tokens (Norm(Ground)), for a
// caller that keeps grounds normalised between rounds.
type AgentGround struct {
	Agent  string
	Ground string
	Tokens []string
}

// CollisionsAmong is Collisions over grounds already normalised and given
// in agent-name order.
func CollisionsAmong(gs []AgentGround) []Collision {
	out := []Collision{}
	for i := range gs {
		a := &gs[i]
		if len(a.Tokens) == 0 || pyStrip(a.Ground) == "" {
			continue
		}
		for j := i + 1; j < len(gs); j++ {
			b := &gs[j]
			if len(b.Tokens) == 0 || pyStrip(b.Ground) == "" {
				continue
			}
			if ov := Overlap(a.Tokens, b.Tokens); ov >= collisionMin {
				out = append(out, Collision{Agents: [2]string{a.Agent, b.Agent}, Overlap: round2(ov), Grounds: [2]string{a.Ground, b.Ground}})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Overlap > out[j].Overlap })
	return out
}
