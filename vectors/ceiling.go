package vectors

import "github.com/laserkit/laserkit/laserbrain"

type ceilingIn struct {
	Doing   *string `json:"doing"`
	Next    *string `json:"next"`
	Blocked *string `json:"blocked"`
}

type ceilingOut struct {
	Cause       int      `json:"cause"`
	Observation int      `json:"observation"`
	Grounded    *float64 `json:"grounded"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ceilingKind() *Kind {
	return caseKind("ceiling", `in: {doing, next, blocked}; out: {cause, observation, grounded} (grounded null when nothing matched)`, func(in ceilingIn) (any, error) {
		c := laserbrain.Mark(deref(in.Doing), deref(in.Next), deref(in.Blocked))
		return ceilingOut{Cause: c.Cause, Observation: c.Observation, Grounded: c.Grounded}, nil
	})
}
