package vectors

import (
	"encoding/json"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
)

// StepIn is a drift step's input as vector files spell it. A missing
// distance is an unknown one (as null is); a missing progress is
// ungrammatical, like any value outside the grammar's list.
type StepIn struct {
	Goal       *string         `json:"goal"`
	Progress   *string         `json:"progress"`
	Distance   json.RawMessage `json:"distance"`
	ParentGoal *string         `json:"parent_goal,omitempty"`
	UserTurn   bool            `json:"user_turn,omitempty"`
}

// Input converts the vector spelling to the instrument's input.
func (in StepIn) Input() laserbrain.StepInput {
	s := laserbrain.StepInput{Distance: laserbrain.DistanceFromJSON(in.Distance), UserTurn: in.UserTurn}
	if in.Goal != nil {
		s.Goal = *in.Goal
	}
	if in.Progress != nil {
		s.Progress = *in.Progress
	}
	if in.ParentGoal != nil {
		s.ParentGoal = *in.ParentGoal
	}
	return s
}

// DriftOut is a drift step's output as vector files spell it.
type DriftOut struct {
	Drifting      bool     `json:"drifting"`
	Reason        string   `json:"reason"`
	Phi           float64  `json:"phi"`
	Laserscore    *string  `json:"laserscore"`
	ParentOverlap *float64 `json:"parent_overlap,omitempty"`
	Period        int      `json:"period,omitempty"`
}

// driftOut is the part of a verdict a drift vector records.
func driftOut(v laserbrain.CheckResult) DriftOut {
	return DriftOut{Drifting: v.Drifting, Reason: v.Reason, Phi: v.Phi, Laserscore: v.Laserscore, ParentOverlap: v.ParentOverlap, Period: v.Period}
}

type driftFile struct {
	Vectors []driftSeq `json:"vectors"`
}

type driftSeq struct {
	Seq   *int        `json:"seq,omitempty"`
	Why   string      `json:"why,omitempty"`
	Steps []driftStep `json:"steps"`
}

type driftStep struct {
	In  json.RawMessage `json:"in"`
	Out json.RawMessage `json:"out,omitempty"`
	Why string          `json:"why,omitempty"`
}

// driftCases makes each sequence one case: its input the list of step
// inputs, its answer the list of step outputs, compared step by step.
func driftCases(f *File) ([]Case, error) {
	var df driftFile
	if err := json.Unmarshal(f.Raw, &df); err != nil {
		return nil, fmt.Errorf(`/vectors: %w`, err)
	}
	out := make([]Case, 0, len(df.Vectors))
	for i, seq := range df.Vectors {
		n, label := seqLabel(i, seq.Seq)
		if len(seq.Steps) == 0 {
			return nil, fmt.Errorf("seq %d has no steps", n)
		}
		c := Case{Label: label}
		ins := make([]json.RawMessage, len(seq.Steps))
		wants := make([]json.RawMessage, len(seq.Steps))
		haveWant := true
		for j, st := range seq.Steps {
			if st.In == nil {
				return nil, fmt.Errorf(`seq %d step %d has no "in"`, n, j+1)
			}
			ins[j], wants[j] = st.In, st.Out
			haveWant = haveWant && st.Out != nil
			c.Parts = append(c.Parts, fmt.Sprintf("seq %d step %d", n, j+1))
		}
		c.In, _ = json.Marshal(ins)
		if haveWant {
			c.Want, _ = json.Marshal(wants)
		}
		out = append(out, c)
	}
	return out, nil
}

// runDrift runs one sequence on a fresh run with its own context store and
// no evidence.
func runDrift(raw json.RawMessage) (any, error) {
	var steps []json.RawMessage
	if err := json.Unmarshal(raw, &steps); err != nil {
		return nil, fmt.Errorf("bad input: a drift case is a list of step inputs: %v", jsonProblem(err))
	}
	run := laserbrain.NewRun(laserbrain.RunOptions{ID: "vector-drift"})
	out := make([]DriftOut, 0, len(steps))
	for j, st := range steps {
		var in StepIn
		if err := strictUnmarshal(st, &in); err != nil {
			return nil, fmt.Errorf("bad input: step %d: %w", j+1, err)
		}
		v, err := run.Step(in.Input())
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", j+1, err)
		}
		out = append(out, driftOut(v))
	}
	return out, nil
}

func driftKind() *Kind {
	return &Kind{
		Name:    "drift",
		Doc:     `sequences of checks, each on a fresh run; in: {goal, progress, distance, parent_goal?, user_turn?}; out: {drifting, reason, phi, laserscore}`,
		Cases:   driftCases,
		Compute: runDrift,
		Emit: func(f *File) (any, error) {
			var df driftFile
			if err := json.Unmarshal(f.Raw, &df); err != nil {
				return nil, fmt.Errorf(`/vectors: %w`, err)
			}
			cases, err := driftCases(f)
			if err != nil {
				return nil, err
			}
			type step struct {
				In  json.RawMessage `json:"in"`
				Out DriftOut        `json:"out"`
			}
			type seq struct {
				Seq   int    `json:"seq"`
				Steps []step `json:"steps"`
			}
			doc := struct {
				Kind    string `json:"kind"`
				Source  string `json:"source"`
				Vectors []seq  `json:"vectors"`
			}{Kind: "drift", Source: EmitSource, Vectors: []seq{}}
			for i, c := range cases {
				got, err := runDrift(c.In)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", c.Label, err)
				}
				n, _ := seqLabel(i, df.Vectors[i].Seq)
				q := seq{Seq: n}
				for j, st := range df.Vectors[i].Steps {
					q.Steps = append(q.Steps, step{In: st.In, Out: got.([]DriftOut)[j]})
				}
				doc.Vectors = append(doc.Vectors, q)
			}
			return doc, nil
		},
	}
}
