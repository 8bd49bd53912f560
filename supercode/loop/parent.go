package loop

import (
	"context"
	"strings"
	"time"

	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Parent is the supervised client session a loop was started from: the
// run `laserbrain run` registered for it, as its environment names it.
type Parent struct {
	Fleet, Agent, Run string
}

// ParentOf reads the session a loop runs in from its environment; ok is
// false from a terminal (no supervised session around it).
func ParentOf(getenv func(string) string) (p Parent, ok bool) {
	p = Parent{Fleet: strings.TrimSpace(getenv(agentrun.EnvFleet)), Agent: strings.TrimSpace(getenv(agentrun.EnvAgent)),
		Run: strings.TrimSpace(getenv(agentrun.EnvRun))}
	return p, p.Fleet != "" && p.Agent != "" && p.Run != ""
}

// TellParent queues the run's account for the session that started it:
// its hooks hand it to the client once, at the session's next event that
// can put text before the model (the client's own mechanism — Claude
// Code's next UserPromptSubmit or PostToolUse additional context), as a
// turn of its own. The message's id is the run's, so a run's account is
// queued once however often this is called.
func TellParent(ctx context.Context, tr *agentrun.Tracker, p Parent, res Result, now time.Time) error {
	st, err := tr.Fleet()
	if err != nil {
		return err
	}
	_, err = st.Say(ctx, fleet.Message{ID: "loop:" + res.RunID, Fleet: p.Fleet, Agent: fleet.RunAgent(fleet.Run{ID: p.Run, Agent: p.Agent}),
		Kind: fleet.MessageLoop, Text: res.Summary(), At: now.UTC()})
	return err
}
