package ui

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/report"
	"github.com/laserkit/laserkit/supercode/supervise"
)

// View is what the page shows at one moment: the fleet report's view
// model, what a read-only supervisor round makes of the fleet (the route,
// the fleet catches) and the feed of what happened, newest first.
type View struct {
	Fleet *report.Fleet
	// Round is nil when the supervisor could not read the fleet (Problem
	// says why); the rest of the view still shows.
	Round   *supervise.Round
	Feed    []Item
	Now     time.Time
	Problem string
}

// Item is one line of the feed: a gate decision, a question put to a
// person, a halt or its release, an agent starting to wait.
type Item struct {
	At    time.Time
	Kind  string // gate, escalation, halt, release, waiting
	Agent string
	Run   string
	// Decision is a gate decision's deny, ask or allow; an escalation's
	// kind (drift, collision, waiting).
	Decision string
	Tool     string
	Text     string
	Labels   []string
	Role     string
	// Action is what an authorization of a refused or asked action
	// names; "" when none can be given.
	Action string
	// ID is the escalation's id, for its answer.
	ID string
}

// maxFeed is how many feed lines the page keeps.
const maxFeed = 200

// loader reads the view from the stores. It keeps its read-only
// supervisor between loads, so a round reads only what changed.
type loader struct {
	o   Options
	sup *supervise.Supervisor
}

func (l *loader) load(ctx context.Context) (*View, error) {
	now := l.o.Now().UTC()
	f, err := report.Load(ctx, report.Options{Repo: l.o.Repo, FleetID: l.o.FleetID, Runs: l.o.Runs, Fleet: l.o.Fleet, Undo: l.o.Undo,
		Usage: l.o.Usage, Now: func() time.Time { return now }})
	if err != nil {
		return nil, err
	}
	v := &View{Fleet: f, Now: now}
	if l.sup == nil {
		l.sup, err = supervise.Open(ctx, supervise.Options{Repo: l.o.Repo, FleetID: l.o.FleetID, Fleet: l.o.Fleet, Runs: l.o.Runs,
			ReadOnly: true, Now: l.o.Now})
	}
	if err == nil {
		v.Round, err = l.sup.Round(ctx)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		// A supervisor that cannot read the fleet (a damaged ledger, a
		// broken journal) is said; the report's panels still show.
		l.sup, v.Problem = nil, "the supervisor's reading: "+err.Error()
	}
	v.Feed = feed(f)
	return v, nil
}

// feed lists what happened on the fleet, newest first.
func feed(f *report.Fleet) []Item {
	var out []Item
	for _, g := range f.Gate {
		it := Item{At: g.At, Kind: "gate", Agent: g.Agent, Run: g.Run, Decision: g.Decision.String(), Tool: g.Tool, Text: g.Reason,
			Labels: g.Labels, Role: g.Role}
		if g.Decision != operator.Allow {
			it.Action = g.Action
		}
		out = append(out, it)
	}
	for _, e := range f.Escalations {
		text := e.Question
		if text == "" {
			text = e.Why
		}
		out = append(out, Item{At: e.At, Kind: "escalation", Agent: e.Who, Decision: e.Kind, Text: text, ID: e.ID})
	}
	for _, h := range f.Halts {
		out = append(out, Item{At: h.At, Kind: "halt", Agent: h.Agent, Text: h.Reason})
		if !h.Released.IsZero() {
			out = append(out, Item{At: h.Released, Kind: "release", Agent: h.Agent, Text: h.ReleaseReason})
		}
	}
	for i := range f.Agents {
		a := &f.Agents[i]
		if a.Waiting != nil {
			out = append(out, Item{At: a.Waiting.Since, Kind: "waiting", Agent: a.Name, Run: a.Run, Decision: a.Waiting.Kind, Text: a.Waiting.Message})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	if len(out) > maxFeed {
		out = out[:maxFeed]
	}
	return out
}

// Detail is one agent's drill-down: its row of the view, and what its
// row leaves out — its observed events, its journal entries, what the
// supervisor said to it.
type Detail struct {
	Agent    *report.Agent
	Gate     []report.GateDecision
	Events   []fleet.RunEvent
	Journal  []fleet.JournalRecord
	Messages []fleet.Message
	// Advice is the advice given at each check (by its number): the
	// supervisor's advice to a drifting check, the run's last verdict's.
	Advice map[int]string
	Th     report.PhiThresholds
	Now    time.Time
}

// detail reads an agent's drill-down from the view and the stores.
func (l *loader) detail(ctx context.Context, v *View, name string) (*Detail, error) {
	var a *report.Agent
	for i := range v.Fleet.Agents {
		if v.Fleet.Agents[i].Name == name {
			a = &v.Fleet.Agents[i]
		}
	}
	if a == nil {
		return nil, fleet.ErrNotFound
	}
	d := &Detail{Agent: a, Advice: map[int]string{}, Th: v.Fleet.Thresholds, Now: v.Now}
	for _, g := range v.Fleet.Gate {
		if g.Agent == name {
			d.Gate = append(d.Gate, g)
		}
	}
	st := l.o.Fleet
	if a.Kind == "run" && a.Run != "" {
		evs, err := st.Events(ctx, a.Run)
		if err != nil {
			return nil, err
		}
		d.Events = evs
		if r, err := st.Run(ctx, a.Run); err == nil && r.Last != nil && len(a.Steps) > 0 {
			d.Advice[a.Steps[len(a.Steps)-1].N] = r.Last.Advice
		}
	}
	recs, _, err := fleet.ReadJournal(ctx, st, v.Fleet.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.Agent == name {
			d.Journal = append(d.Journal, r)
		}
	}
	msgs, err := st.Messages(ctx, v.Fleet.ID, name)
	if err != nil && !errors.Is(err, laserbrain.ErrReadOnly) {
		return nil, err
	}
	d.Messages = msgs
	for _, m := range msgs {
		if m.Kind != fleet.MessageAdvice {
			continue
		}
		// The supervisor says a drifting check's advice once, under
		// advice:<agent>:<checks so far>.
		if k, ok := strings.CutPrefix(m.ID, "advice:"+name+":"); ok {
			if n, err := strconv.Atoi(k); err == nil && d.Advice[n] == "" {
				d.Advice[n] = m.Text
			}
		}
	}
	return d, nil
}
