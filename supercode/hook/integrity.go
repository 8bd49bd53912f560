package hook

import (
	"context"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// halted denies a call by an agent the supervisor halted, with the halt's
// reason. It reads the fleet store once when nothing is halted anywhere
// (one directory read, one query in a database), and looks the caller up
// only when something is. When the store's database is out of reach the
// halts cannot be read, and the call is decided from the command alone
// (the failure policy: an action needing authorization is refused, the rest
// goes on); a binary that cannot read the store hands the event on.
func (h *Handler) halted(ctx context.Context, e client.Event) (client.Answer, bool, error) {
	unreadable := func(err error) (client.Answer, bool, error) {
		if isUnreachable(err) {
			return client.Answer{}, false, nil
		}
		return client.Answer{}, true, err
	}
	st, err := h.Sup.Fleet()
	if err != nil {
		return unreadable(err)
	}
	if any, err := st.AnyHaltInForce(ctx); err != nil {
		return unreadable(err)
	} else if !any {
		return client.Answer{}, false, nil
	}
	run, found, err := h.Sup.Find(ctx, h.caller(e))
	if err != nil {
		return unreadable(err)
	}
	if !found {
		return client.Answer{}, false, nil
	}
	halt, ok, err := st.ActiveHalt(ctx, run.Fleet, fleet.RunAgent(run))
	if err != nil {
		return unreadable(err)
	}
	if !ok {
		return client.Answer{}, false, nil
	}
	c := h.caller(e)
	d := operator.Decide(operator.Analysis{}, c.Presence, operator.RunState{Halted: true, HaltReason: "laserbrain: refused: " + halt.Message(), PresenceWhy: c.PresenceWhy}, operator.Policy{})
	h.record(ctx, c, run, found, e, d)
	return answer(d), true, nil
}
