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

// runDrift runs each sequence on a fresh run with its own context store and
// no evidence, and returns one outcome per step.
func runDrift(f *File) ([]Outcome, [][]DriftOut, error) {
	var df driftFile
	if err := json.Unmarshal(f.Raw, &df); err != nil {
		return nil, nil, fmt.Errorf(`"vectors": %w`, err)
	}
	var outs []Outcome
	var got [][]DriftOut
	for i, seq := range df.Vectors {
		n := i
		if seq.Seq != nil {
			n = *seq.Seq
		}
		if len(seq.Steps) == 0 {
			return nil, nil, fmt.Errorf("seq %d has no steps", n)
		}
		run := laserbrain.NewRun(laserbrain.RunOptions{ID: fmt.Sprintf("vector-seq-%d", n)})
		var seqGot []DriftOut
		for j, st := range seq.Steps {
			o := Outcome{Label: fmt.Sprintf("seq %d step %d", n, j+1), In: st.In, Want: st.Out}
			var in StepIn
			if st.In == nil {
				return nil, nil, fmt.Errorf("%s has no \"in\"", o.Label)
			}
			if err := strictUnmarshal(st.In, &in); err != nil {
				// A broken step poisons the rest of its sequence: stop here.
				o.Err = fmt.Errorf("bad input: %w", err)
				outs = append(outs, o)
				break
			}
			v, err := run.Step(in.Input())
			d := driftOut(v)
			o.Got, o.Err = d, err
			seqGot = append(seqGot, d)
			outs = append(outs, o)
		}
		got = append(got, seqGot)
	}
	return outs, got, nil
}

func init() {
	register(&Kind{
		Name: "drift",
		Doc:  `sequences of checks, each on a fresh run; in: {goal, progress, distance, parent_goal?, user_turn?}; out: {drifting, reason, phi, laserscore}`,
		Run: func(f *File) ([]Outcome, error) {
			outs, _, err := runDrift(f)
			return outs, err
		},
		Emit: func(f *File) (any, error) {
			var df driftFile
			if err := json.Unmarshal(f.Raw, &df); err != nil {
				return nil, fmt.Errorf(`"vectors": %w`, err)
			}
			outs, got, err := runDrift(f)
			if err != nil {
				return nil, err
			}
			for _, o := range outs {
				if o.Err != nil {
					return nil, fmt.Errorf("%s: %v", o.Label, o.Err)
				}
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
			}{Kind: "drift", Source: EmitSource}
			for i, s := range df.Vectors {
				n := i
				if s.Seq != nil {
					n = *s.Seq
				}
				q := seq{Seq: n}
				for j, st := range s.Steps {
					q.Steps = append(q.Steps, step{In: st.In, Out: got[i][j]})
				}
				doc.Vectors = append(doc.Vectors, q)
			}
			return doc, nil
		},
	})
}
