package vectors

import (
	"encoding/json"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
)

// The drift-full kind runs one fresh run (its own context store, no
// machine evidence) through checks with observed events between them, and
// records every field an agent reads.
//
//	in  {steps: [{check: {goal, progress?, distance?, parent_goal?, user_turn?}} | {saw: event}]}
//	out {results: [verdict | null per step], phronesis, corroboration}
//
// A check's progress defaults to advancing and its distance to 5, as the
// reference harness's check does; a verdict is {drifting, reason, phi,
// laserscore, advice, why, anchored, goal_score, parent_overlap,
// ground_score}.
type dfIn struct {
	Steps []dfStep `json:"steps"`
}

type dfStep struct {
	Check *StepIn           `json:"check"`
	Saw   *laserbrain.Event `json:"saw"`
}

type dfVerdict struct {
	Drifting      bool     `json:"drifting"`
	Reason        string   `json:"reason"`
	Phi           float64  `json:"phi"`
	Laserscore    *string  `json:"laserscore"`
	Advice        string   `json:"advice"`
	Why           string   `json:"why"`
	Anchored      float64  `json:"anchored"`
	GoalScore     float64  `json:"goal_score"`
	ParentOverlap *float64 `json:"parent_overlap"`
	GroundScore   float64  `json:"ground_score"`
}

// dfJudgment is the reference's phronesis dict: three keys while
// ungrounded, every key (context null included) after.
type dfJudgment struct {
	Verdict string                     `json:"verdict"`
	Scores  *laserbrain.JudgmentScores `json:"scores,omitempty"`
	Because string                     `json:"because"`
	Counsel string                     `json:"counsel"`
	Control *laserbrain.Control        `json:"control,omitempty"`
	Context **string                   `json:"context,omitempty"`
}

type dfOut struct {
	Results       []*dfVerdict `json:"results"`
	Phronesis     dfJudgment   `json:"phronesis"`
	Corroboration float64      `json:"corroboration"`
}

func runDriftFull(raw json.RawMessage) (any, error) {
	var in dfIn
	if err := strictUnmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	run := laserbrain.NewRun(laserbrain.RunOptions{ID: "vector-drift-full"})
	out := dfOut{Results: make([]*dfVerdict, 0, len(in.Steps))}
	for i, st := range in.Steps {
		switch {
		case st.Check != nil && st.Saw == nil:
			c := st.Check
			s := c.Input()
			if c.Progress == nil {
				s.Progress = laserbrain.ProgressAdvancing
			}
			if c.Distance == nil {
				s.Distance = laserbrain.Dist(5)
			}
			v, err := run.Step(s)
			if err != nil {
				return nil, fmt.Errorf("step %d: %w", i, err)
			}
			out.Results = append(out.Results, &dfVerdict{v.Drifting, v.Reason, v.Phi, v.Laserscore, v.Advice, v.Why, v.Anchored, v.GoalScore, v.ParentOverlap, v.GroundScore})
		case st.Saw != nil && st.Check == nil:
			run.Saw(*st.Saw)
			out.Results = append(out.Results, nil)
		default:
			return nil, fmt.Errorf("bad input: step %d needs exactly one of check and saw", i)
		}
	}
	j := run.Phronesis()
	out.Phronesis = dfJudgment{Verdict: j.Verdict, Scores: j.Scores, Because: j.Because, Counsel: j.Counsel, Control: j.Control}
	if j.Scores != nil {
		out.Phronesis.Context = &j.Context
	}
	out.Corroboration = run.Corroboration()
	return out, nil
}

func driftFullKind() *Kind {
	return seqKind("drift-full", `a fresh run per case; in: {steps: [{check: {goal, progress, distance, parent_goal?, user_turn?}} | {saw: event}]}; out: {results: [full verdict | null], phronesis, corroboration}`, runDriftFull)
}
