package hook

import (
	"context"
	"errors"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// halted denies a call by an agent the supervisor halted, with the halt's
// reason (agentrun.Tracker.Halted: the store's halt, or one the journal
// witnesses that no journaled release lifted). It reads the fleet store
// once when nothing is halted anywhere (one directory read, one query in a
// database), and looks the caller up only when something is. When the
// store's database is out of reach, the halts this machine last read
// hold; a binary that cannot read the store hands the event on.
func (h *Handler) halted(ctx context.Context, e *event) (client.Reply, bool, error) {
	c := h.caller(e)
	halt, ok, note, err := h.Tracker.Halted(ctx, c)
	var damaged *fleet.MachineDamagedError
	if errors.As(err, &damaged) {
		// What this machine verified is unreadable: nothing is known to
		// be released.
		return deny("laserbrain: refused: " + damaged.Error() + ". Nothing runs until a person acts (" + fleet.MachineDamagedFix + ")."), true, nil
	}
	if err != nil {
		return client.Reply{}, true, err
	}
	if !ok {
		return client.Reply{}, false, nil
	}
	msg := halt.Message()
	if note != "" {
		msg += " (" + note + ")"
	}
	run, found, _ := h.Tracker.Find(ctx, c)
	d := operator.Decide(shell.Analysis{}, c.Presence, operator.RunState{Halted: true, HaltReason: "laserbrain: refused: " + msg, PresenceWhy: c.PresenceWhy}, operator.Policy{})
	h.record(ctx, c, run, found, e, d)
	return answer(d), true, nil
}
