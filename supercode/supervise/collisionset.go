package supervise

import (
	"encoding/json"
	"slices"
	"sort"
)

// collisionSet is the collisions as the journal last recorded them: a
// round journals the collisions that began and ended since (not every
// collision standing), and a checkpoint holds the set.
type collisionSet map[[2]string]bool

// pairsOf is the set of the pairs given.
func pairsOf(pairs [][2]string) collisionSet {
	s := make(collisionSet, len(pairs))
	for _, p := range pairs {
		s[pairKey(p[0], p[1])] = true
	}
	return s
}

// diff is what changed from s to now: the pairs that began and those that
// ended, each sorted.
func (s collisionSet) diff(now collisionSet) (began, ended [][2]string) {
	for p := range now {
		if !s[p] {
			began = append(began, p)
		}
	}
	for p := range s {
		if !now[p] {
			ended = append(ended, p)
		}
	}
	return sortedPairs(began), sortedPairs(ended)
}

func sortedPairs(ps [][2]string) [][2]string {
	slices.SortFunc(ps, func(x, y [2]string) int {
		if x[0] != y[0] {
			if x[0] < y[0] {
				return -1
			}
			return 1
		}
		if x[1] < y[1] {
			return -1
		}
		if x[1] > y[1] {
			return 1
		}
		return 0
	})
	return ps
}

// collisionSetJSON is a collision set as a checkpoint writes it: agents
// that all collide with each other (a fleet of agents on one job is many
// such groups) as a group each, the rest as pairs.
type collisionSetJSON struct {
	Groups [][]string  `json:"groups,omitempty"`
	Pairs  [][2]string `json:"pairs,omitempty"`
}

// MarshalJSON writes the set as its groups of agents that all collide
// with each other (each connected part of the collision graph that is
// complete), and every other pair.
func (s collisionSet) MarshalJSON() ([]byte, error) {
	adj := map[string][]string{}
	for p := range s {
		adj[p[0]] = append(adj[p[0]], p[1])
		adj[p[1]] = append(adj[p[1]], p[0])
	}
	names := make([]string, 0, len(adj))
	for n := range adj {
		names = append(names, n)
	}
	sort.Strings(names)
	var out collisionSetJSON
	done := map[string]bool{}
	for _, start := range names {
		if done[start] {
			continue
		}
		part := component(adj, start, done)
		if complete(part, adj) {
			out.Groups = append(out.Groups, part)
			continue
		}
		for i, a := range part {
			for _, b := range part[i+1:] {
				if s[pairKey(a, b)] {
					out.Pairs = append(out.Pairs, pairKey(a, b))
				}
			}
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *collisionSet) UnmarshalJSON(b []byte) error {
	var in collisionSetJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	set := collisionSet{}
	for _, g := range in.Groups {
		for i, a := range g {
			for _, b := range g[i+1:] {
				set[pairKey(a, b)] = true
			}
		}
	}
	for _, p := range in.Pairs {
		set[pairKey(p[0], p[1])] = true
	}
	*s = set
	return nil
}

// component is the agents connected to start, sorted; each is marked done.
func component(adj map[string][]string, start string, done map[string]bool) []string {
	part := []string{start}
	done[start] = true
	for i := 0; i < len(part); i++ {
		for _, m := range adj[part[i]] {
			if !done[m] {
				done[m] = true
				part = append(part, m)
			}
		}
	}
	sort.Strings(part)
	return part
}

// complete reports whether every two agents of part collide.
func complete(part []string, adj map[string][]string) bool {
	for _, a := range part {
		if len(adj[a]) != len(part)-1 {
			return false
		}
	}
	return true
}
