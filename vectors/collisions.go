package vectors

import "github.com/laserkit/laserkit/laserbrain"

type collisionsIn struct {
	Agents map[string]string `json:"agents"`
}

type collisionOut struct {
	Agents  [2]string `json:"agents"`
	Overlap float64   `json:"overlap"`
}

func collisionsKind() *Kind {
	return caseKind("collisions", `in: {agents: {name: ground goal}}; out: [{agents: [a, b], overlap}] at or above collision_min, highest first`, func(in collisionsIn) (any, error) {
		out := []collisionOut{}
		for _, c := range laserbrain.Collisions(in.Agents) {
			out = append(out, collisionOut{Agents: c.Agents, Overlap: c.Overlap})
		}
		return out, nil
	})
}
