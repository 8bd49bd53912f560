package hook

import (
	"context"
	"fmt"
	"strings"

	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// The supervisor's messages: what laserbrain supervise decided about an
// agent (its verdict's advice, a person's answer, a halt, its release, a
// route to yield) waits in the agent's queue (fleet.Messages) until the agent's next
// hook event whose answer can put text before its model (client.Tells),
// which takes every message waiting, exactly once, and journals each
// delivery with the round it came from.

// run is the caller's run, looked up once per event (and kept when an
// observer opened it).
func (h *Handler) run(ctx context.Context, e *event) (fleet.Run, bool, error) {
	if e.run != nil {
		return e.run.run, e.run.found, nil
	}
	r, found, err := h.Tracker.Find(ctx, h.caller(e))
	if err != nil {
		return r, found, err
	}
	e.keepRun(r, found)
	return r, found, nil
}

// keepRun remembers the caller's run for the rest of the event.
func (e *event) keepRun(r fleet.Run, found bool) { e.run = &foundRun{r, found} }

// deliverMessages puts what waits for the caller into answer a, when the client
// carries text on this event: into a PreToolUse denial's reason, as a held
// Stop's reason (the Stop is held for it), or as additional context. A
// message that cannot be handed out now stays queued; a failure here is
// logged and never changes the decision.
func (h *Handler) deliverMessages(ctx context.Context, e *event, a *client.Reply) {
	ok, asReason, block := client.Tells(h.clientName(), e.Name, *a)
	if !ok {
		return
	}
	fleetID, agent, ok := h.listener(ctx, e)
	if !ok {
		return
	}
	st, err := h.Tracker.Fleet()
	if err != nil {
		return
	}
	msgs, err := st.Deliver(ctx, fleetID, agent, fleet.Delivery{At: h.now(), Via: string(e.Name)})
	if err != nil {
		h.log(fmt.Sprintf("laserbrain hook %s: the supervisor's messages could not be handed out: %v", e.Name, err))
	}
	if len(msgs) == 0 {
		return
	}
	told := make([]string, len(msgs))
	for i, m := range msgs {
		told[i] = m.Told()
	}
	text := strings.Join(told, "\n")
	switch {
	case block:
		a.Block = true
		a.Reason = joinText(a.Reason, text)
	case asReason:
		a.Reason = joinText(a.Reason, text)
	default:
		a.Context = joinText(a.Context, text)
	}
}

// listener is who the caller is to its fleet's messages (fleet.RunAgent): the
// run the event already read, or, under laserbrain run, what it exported
// (LASERBRAIN_FLEET, LASERBRAIN_AGENT, LASERBRAIN_RUN: the run as it
// registered it) — no read while nothing waits — else the caller's run.
func (h *Handler) listener(ctx context.Context, e *event) (fleetID, agent string, ok bool) {
	if e.run == nil {
		f, a, r := strings.TrimSpace(h.getenv(agentrun.EnvFleet)), strings.TrimSpace(h.getenv(agentrun.EnvAgent)), strings.TrimSpace(h.getenv(agentrun.EnvRun))
		if f != "" && a != "" && r != "" {
			return f, fleet.RunAgent(fleet.Run{ID: r, Agent: a}), true
		}
	}
	run, found, err := h.run(ctx, e)
	if err != nil || !found {
		return "", "", false
	}
	return run.Fleet, fleet.RunAgent(run), true
}

// joinText puts b after a, on a line of its own.
func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
