package agentrun

import (
	"context"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// End closes a run whose agent has exited: the time and exit status are
// recorded, a run-end event is appended and the whole run judged (the
// judgment is kept on the run). code nil records an end whose status is
// not known (the process that watched the agent was gone). A run already
// ended keeps its first end. `laserbrain run` ends its run this way when
// the command exits, and `laserbrain loop` each agent and judge session's
// run when the call returns.
func (s *Tracker) End(ctx context.Context, runID string, code *int, why string) (fleet.Run, laserbrain.Judgment, error) {
	st, err := s.Fleet()
	if err != nil {
		return fleet.Run{}, laserbrain.Judgment{}, err
	}
	ended := false
	run, err := st.UpdateRun(ctx, runID, func(r *fleet.Run) error {
		if r.IsEnded() {
			return nil
		}
		ended = true
		r.Ended = s.now()
		if code != nil {
			c := *code
			r.ExitCode = &c
		}
		return nil
	})
	if err != nil {
		return run, laserbrain.Judgment{}, err
	}
	if ended {
		text := why
		var ok laserbrain.OK
		if code != nil {
			ok = laserbrain.OKOf(*code == 0)
			text = fmt.Sprintf("exit %d", *code)
			if why != "" {
				text += ": " + why
			}
		}
		_, _ = st.AppendEvent(ctx, runID, fleet.RunEvent{At: s.now(), Kind: fleet.KindSession, Name: "run-end", OK: ok, Text: text})
	}
	j, err := s.Judge(ctx, runID)
	if err != nil {
		return run, j, err
	}
	run, err = st.Run(ctx, runID)
	return run, j, err
}
