package laserbrain

import (
	"slices"
	"sort"
)

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
// collision_min, highest overlap first (pairs in name order among equals).
// Agents whose ground is blank or has no tokens take no part.
func Collisions(grounds map[string]string) []Collision {
	names := make([]string, 0, len(grounds))
	toks := make(map[string][]string, len(grounds))
	for name, g := range grounds {
		if pyStrip(g) == "" {
			continue
		}
		if t := Norm(g); len(t) > 0 {
			names = append(names, name)
			toks[name] = t
		}
	}
	slices.Sort(names)
	out := []Collision{}
	for i, a := range names {
		for _, b := range names[i+1:] {
			ov := Overlap(toks[a], toks[b])
			if ov >= collisionMin {
				out = append(out, Collision{Agents: [2]string{a, b}, Overlap: round2(ov), Grounds: [2]string{grounds[a], grounds[b]}})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Overlap > out[j].Overlap })
	return out
}
