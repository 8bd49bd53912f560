package vectors

import (
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
)

type phronesisIn struct {
	Steps []StepIn `json:"steps"`
}

type phronesisOut struct {
	Verdict string `json:"verdict"`
	Control string `json:"control,omitempty"`
}

func phronesisKind() *Kind {
	return caseKind("phronesis", `in: {steps: [drift step inputs]} on a fresh run and store, no evidence; out: {verdict, control?}`, func(in phronesisIn) (any, error) {
		run := laserbrain.NewRun(laserbrain.RunOptions{ID: "vector-phronesis"})
		for i, s := range in.Steps {
			if _, err := run.Step(s.Input()); err != nil {
				return nil, fmt.Errorf("step %d: %w", i+1, err)
			}
		}
		j := run.Phronesis()
		out := phronesisOut{Verdict: j.Verdict}
		if j.Control != nil {
			out.Control = j.Control.Decision
		}
		return out, nil
	})
}
