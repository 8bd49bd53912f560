package report

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/undo"
)

// CallChange is what one call of an agent changed in its work tree, read
// off the undo checkpoint before it and the next, and the command that
// takes it back.
type CallChange struct {
	At   time.Time `json:"at"`
	Call string    `json:"call"`
	Tool string    `json:"tool,omitempty"`
	What string    `json:"what,omitempty"`
	// Changed is the change in words: files added, modified, deleted,
	// what they held, refs, the stash, the staged changes, named data.
	Changed string `json:"changed"`
	Undo    string `json:"undo"`
	// Loss says what it lost past the project policy's threshold, as
	// reported to the supervisor ("" when within it).
	Loss string `json:"loss,omitempty"`
}

// UndoChanges gives each agent run the changes its calls made, oldest
// first, from the undo checkpoints in st (nil: none shown), each loss its
// hooks reported marked. The checkpoints are the machine's own: a run on
// another machine of the fleet has none here.
func UndoChanges(agents []Agent, st *undo.Store) error {
	if st == nil {
		return nil
	}
	for i := range agents {
		a := &agents[i]
		if a.Kind != "run" || a.Run == "" {
			continue
		}
		recs, err := st.Records(a.Run)
		if errors.Is(err, undo.ErrNoCheckpoints) {
			continue
		}
		if err != nil {
			return err
		}
		for k := 0; k+1 < len(recs); k++ {
			r, next := recs[k], recs[k+1]
			if r.Kind == undo.KindEnd || next.Changed == nil || next.Since != r.Seq {
				continue
			}
			c := CallChange{At: r.At, Call: undo.CallName(r), Tool: r.Tool, What: r.What, Changed: next.Changed.Summary(),
				Undo: undo.Command(a.Run, r), Loss: a.losses[undo.CallName(r)]}
			if r.Kind == undo.KindStart {
				c.Call, c.Tool = "before the first call", ""
			}
			a.Changes = append(a.Changes, c)
		}
	}
	return nil
}

// noteLoss keeps a loss event's words by its call, for UndoChanges.
func noteLoss(a *Agent, e fleet.RunEvent) {
	var res fleet.LossResult
	if json.Unmarshal(e.Result, &res) != nil || res.Call == "" {
		return
	}
	if a.losses == nil {
		a.losses = map[string]string{}
	}
	a.losses[res.Call] = res.Loss
}
