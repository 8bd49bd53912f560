package report

import (
	"encoding/json"
	"fmt"

	"github.com/laserkit/laserkit/grammar"
)

// PhiThresholds are the lines a Φ timeline draws, read from the grammar's
// calibration so that a new grammar moves them.
type PhiThresholds struct {
	// SelfReportFloor: a stuck or circling report with Φ above it is a
	// self-report verdict.
	SelfReportFloor float64 `json:"selfReportFloor"`
	// GoalMin is the goal overlap below which a goal has left the ground.
	GoalMin float64 `json:"goalMin"`
	// GoalDriftPhi = w_goal·(1 − goal_min): Φ is at least its goal term, so
	// below this Φ the goal overlap cannot be under goal_min — no
	// goal-drift is possible there.
	GoalDriftPhi float64 `json:"goalDriftPhi"`
	// CollisionMin is the ground overlap from which two agents collide.
	CollisionMin float64 `json:"collisionMin"`
	// PhiMax is the largest Φ there is: the sum of the weights.
	PhiMax float64 `json:"phiMax"`
}

// GrammarThresholds reads the thresholds from the canonical grammar.
func GrammarThresholds() (PhiThresholds, error) {
	var g struct {
		Calibration struct {
			GoalMin       float64  `json:"goal_min"`
			SelfReportMin float64  `json:"self_report_min"`
			CollisionMin  *float64 `json:"collision_min"`
			Weights       struct {
				Goal, Distance, Progress float64
			} `json:"weights"`
		} `json:"calibration"`
	}
	if err := json.Unmarshal(grammar.Canonical, &g); err != nil {
		return PhiThresholds{}, fmt.Errorf("read the grammar's calibration: %w", err)
	}
	c := g.Calibration
	t := PhiThresholds{SelfReportFloor: c.SelfReportMin, GoalMin: c.GoalMin,
		GoalDriftPhi: c.Weights.Goal * (1 - c.GoalMin), PhiMax: c.Weights.Goal + c.Weights.Distance + c.Weights.Progress}
	if c.CollisionMin != nil {
		t.CollisionMin = *c.CollisionMin
	}
	return t, nil
}
