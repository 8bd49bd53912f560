package vectors

import (
	"encoding/json"

	"github.com/laserkit/laserkit/laserbrain"
)

type laserscoreIn struct {
	Goal       *string         `json:"goal"`
	Progress   *string         `json:"progress"`
	Distance   json.RawMessage `json:"distance"`
	ParentGoal *string         `json:"parent_goal,omitempty"`
}

func laserscoreKind() *Kind {
	return caseKind("laserscore", `in: {goal, progress, distance, parent_goal?}; out: the laserscore, or null for an ungrammatical state`, func(in laserscoreIn) (any, error) {
		s := StepIn{Goal: in.Goal, Progress: in.Progress, Distance: in.Distance, ParentGoal: in.ParentGoal}.Input()
		ls, ok := laserbrain.Laserscore(s.Goal, s.Progress, s.Distance, s.ParentGoal)
		if !ok {
			return nil, nil
		}
		return ls, nil
	})
}
