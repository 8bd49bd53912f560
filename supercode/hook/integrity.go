package hook

import (
	"context"
	"errors"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// halted denies a call by an agent the supervisor halted, with the halt's
// reason. It reads the fleet store once when nothing is halted anywhere
// (one directory read, one query in a database), and looks the caller up
// only when something is. When the store's database is out of reach the
// halts cannot be read, and the call is decided from the command alone
// (the failure policy: an action needing authorization is refused, the rest
// goes on); a binary that cannot read the store hands the event on.
func (h *Handler) halted(ctx context.Context, p Payload) (Answer, bool) {
	unreadable := func(err error) (Answer, bool) {
		switch {
		case errors.Is(err, agentrun.ErrStoreElsewhere):
			return Answer{Delegate: true}, true
		case isUnreachable(err):
			return Answer{}, false
		}
		return h.failed(PreToolUse, err), true
	}
	st, err := h.Sup.Fleet()
	if err != nil {
		return unreadable(err)
	}
	if any, err := st.AnyHaltInForce(ctx); err != nil {
		return unreadable(err)
	} else if !any {
		return Answer{}, false
	}
	run, found, err := h.Sup.Find(ctx, h.caller(p))
	if err != nil {
		return unreadable(err)
	}
	if !found {
		return Answer{}, false
	}
	halt, ok, err := st.ActiveHalt(ctx, run.Fleet, fleet.RunAgent(run))
	if err != nil {
		return unreadable(err)
	}
	if !ok {
		return Answer{}, false
	}
	c := h.caller(p)
	d := operator.Decide(operator.Analysis{}, c.Presence, operator.RunState{Halted: true, HaltReason: "laserbrain: refused: " + halt.Message(), PresenceWhy: c.PresenceWhy}, operator.Policy{})
	h.record(ctx, c, run, found, p, d)
	return h.answer(d), true
}
