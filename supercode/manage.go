package supercode

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/laserkit/laserkit/laserbrain"
)

// Spelled is what an agent reports each step: the same three fields a
// check reads, and whether it is done.
type Spelled struct {
	Goal string
	// Progress must be spelled: "" is not a progress (the reference's
	// manage defaults a missing one to advancing).
	Progress string
	Distance laserbrain.Distance
	// Done finishes the agent; so does a distance of 0.
	Done bool
}

// Agent is one agent Manage runs: each round it takes a step and spells
// its state. c is its context, where the Supercode delivers advice
// (c.Return) and decisions.
type Agent interface {
	Step(c *Context) Spelled
}

// AgentFunc adapts a function to an Agent.
type AgentFunc func(c *Context) Spelled

// Step calls f.
func (f AgentFunc) Step(c *Context) Spelled { return f(c) }

// Routable is implemented by an agent that says whether the Supercode may
// route it. Operator work — anything that acts on the world — must answer
// false: allocation is a reading, an action is not, and Manage refuses a
// fleet that contains one before anything runs.
type Routable interface {
	Routable() bool
}

// RoutingRefused is Manage's refusal to route operator work.
type RoutingRefused struct {
	Agents []string // the agents that are not routable, sorted
}

func (e *RoutingRefused) Error() string {
	return fmt.Sprintf("supercode may not route operator work: %s. Allocation is a reading; an action is not (grammar 1.8.0, layers.operator.routing).", strings.Join(e.Agents, ", "))
}

// Context is what Manage keeps for one agent, and hands it every step.
type Context struct {
	Name    string `json:"-"`
	Returns int    `json:"returns"` // drifting verdicts so far
	Streak  int    `json:"streak"`  // drifting verdicts in a row
	Steps   int    `json:"steps"`
	// Return is what the agent should act on: the advice of its own
	// drifting verdict, or a person's decision. Empty while on track.
	Return string `json:"return,omitempty"`
	// Escalated is set once a drift streak reached EscalateAfter (cleared
	// when the agent recovers); Decision is the person's answer, if any.
	Escalated bool   `json:"escalated,omitempty"`
	Decision  string `json:"decision,omitempty"`
	Finished  bool   `json:"finished,omitempty"`
	// Halted: the agent yielded a shared ground, on the Supercode's
	// route or a person's decision; HaltedWhy says which.
	Halted    bool   `json:"halted,omitempty"`
	HaltedWhy string `json:"halted_why,omitempty"`
	// CollisionUnresolved records, once per other agent, a shared ground
	// with no basis to choose who yields.
	CollisionUnresolved []Unresolved `json:"collision_unresolved,omitempty"`
	CollisionEscalated  bool         `json:"collision_escalated,omitempty"`
	// Verdict is the last verdict.
	Verdict *laserbrain.CheckResult `json:"verdict,omitempty"`
}

// Unresolved is one collision nobody could settle.
type Unresolved struct {
	With    string  `json:"with"`
	Overlap float64 `json:"overlap"`
	Why     string  `json:"why"`
}

// Escalation is a question Manage sends up to a person.
type Escalation struct {
	// Who is the agent, or "a+b" for a collision.
	Who string
	// Verdict and Context are the drifting agent's (nil for a collision).
	Verdict *laserbrain.CheckResult
	Context *Context
	// Collision is the unresolved route (nil for a drift).
	Collision *Route
}

// ManageOptions configures Manage.
type ManageOptions struct {
	// MaxSteps bounds the rounds (default 30).
	MaxSteps int
	// OnReturn is told of every drifting verdict, after its advice is in
	// the agent's context.
	OnReturn func(agent string, v laserbrain.CheckResult, c *Context)
	// EscalateAfter escalates an agent once its drift streak reaches it
	// (0: never).
	EscalateAfter int
	// OnEscalate asks a person. For a drift, a non-empty answer overrides
	// the agent's advice (Return and Decision). For a collision "a+b",
	// answering a or b halts that agent.
	OnEscalate func(e Escalation) (decision string)
}

// ManagedAgent names an agent for Manage.
type ManagedAgent struct {
	Name  string
	Agent Agent
}

// Manage runs agents under supervision, in rounds, in the order given,
// until every one is finished or halted, MaxSteps rounds have run, or ctx
// is done. Each round every live agent steps and is observed against its
// own ground; a drifting agent gets its own verdict's advice delivered in
// its context (the Supercode is the courier, not the author), and a drift
// streak of EscalateAfter goes to a person, whose answer outranks the
// advice. After each round the routes are taken: a live agent that should
// yield a shared ground is halted (never given a new goal); a collision
// with no basis to choose is recorded on both and escalated once.
//
// It never regrounds or sets a ground: no step is observed as a user turn.
// A fleet with a non-routable agent is refused whole, before anything
// runs. The contexts are returned in the order given.
func (s *Supercode) Manage(ctx context.Context, agents []ManagedAgent, opts ManageOptions) ([]*Context, error) {
	var refused []string
	seen := map[string]bool{}
	for _, m := range agents {
		if seen[m.Name] {
			return nil, fmt.Errorf("supercode: agent %q named twice", m.Name)
		}
		seen[m.Name] = true
		if m.Agent == nil {
			return nil, fmt.Errorf("supercode: agent %q has nothing to run", m.Name)
		}
		if r, ok := m.Agent.(Routable); ok && !r.Routable() {
			refused = append(refused, m.Name)
		}
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return nil, &RoutingRefused{Agents: refused}
	}
	maxSteps := opts.MaxSteps
	if maxSteps <= 0 {
		maxSteps = 30
	}
	ctxs := make([]*Context, len(agents))
	byName := make(map[string]*Context, len(agents))
	live := make(map[string]bool, len(agents))
	for i, m := range agents {
		ctxs[i] = &Context{Name: m.Name}
		byName[m.Name] = ctxs[i]
		live[m.Name] = true
	}
	for round := 0; round < maxSteps && len(live) > 0; round++ {
		for i, m := range agents {
			if !live[m.Name] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return ctxs, err
			}
			c := ctxs[i]
			st := m.Agent.Step(c)
			c.Steps++
			s.mu.Lock()
			v, err := s.observeLocked(m.Name, laserbrain.StepInput{Goal: st.Goal, Progress: st.Progress, Distance: st.Distance})
			s.mu.Unlock()
			if err != nil {
				return ctxs, err
			}
			c.Verdict = &v
			if v.Drifting {
				c.Returns++
				c.Streak++
				c.Return = v.Advice
				if opts.OnReturn != nil {
					opts.OnReturn(m.Name, v, c)
				}
				if opts.EscalateAfter > 0 && c.Streak >= opts.EscalateAfter && !c.Escalated {
					c.Escalated = true
					if opts.OnEscalate != nil {
						if d := opts.OnEscalate(Escalation{Who: m.Name, Verdict: &v, Context: c}); d != "" {
							c.Return, c.Decision = d, d
						}
					}
				}
			} else {
				c.Streak = 0
				c.Return = ""
				c.Escalated = false
			}
			if st.Done || (st.Distance.Known && st.Distance.Value == 0) {
				c.Finished = true
				delete(live, m.Name)
			}
		}
		s.mu.Lock()
		routes := s.routeLocked()
		s.mu.Unlock()
		for _, r := range routes {
			if r.Yield != "" && live[r.Yield] {
				c := byName[r.Yield]
				c.Halted = true
				c.HaltedWhy = fmt.Sprintf("shares a ground with %s (overlap %s) — halted to stop duplicate work. Choosing what %s does next is not supercode's call.", r.Keep, f2(r.Overlap), r.Yield)
				delete(live, r.Yield)
				continue
			}
			if r.Keep != "" {
				continue
			}
			s.unresolved(r, byName, live, opts.OnEscalate)
		}
	}
	return ctxs, nil
}

// unresolved handles a collision with no basis to choose: recorded on both
// agents' contexts (once per other agent), and sent up to a person once —
// the reference marks both agents escalated and asks only while the first
// is unmarked. A person naming one of the two halts it.
func (s *Supercode) unresolved(r Route, byName map[string]*Context, live map[string]bool, onEscalate func(Escalation) string) {
	a, b := r.Agents[0], r.Agents[1]
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		c := byName[pair[0]]
		if c == nil {
			continue // an agent watched but not managed here
		}
		known := false
		for _, u := range c.CollisionUnresolved {
			known = known || u.With == pair[1]
		}
		if !known {
			c.CollisionUnresolved = append(c.CollisionUnresolved, Unresolved{With: pair[1], Overlap: r.Overlap, Why: r.Why})
		}
	}
	ca, cb := byName[a], byName[b]
	if onEscalate == nil || ca == nil || ca.CollisionEscalated {
		return
	}
	ca.CollisionEscalated = true
	if cb != nil {
		cb.CollisionEscalated = true
	}
	row := r
	d := onEscalate(Escalation{Who: a + "+" + b, Collision: &row})
	if (d == a || d == b) && live[d] {
		other := a
		if d == a {
			other = b
		}
		c := byName[d]
		c.Halted = true
		c.HaltedWhy = "human decision: yield to " + other
		delete(live, d)
	}
}
