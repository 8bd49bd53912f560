package supercode

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/laserkit/laserkit/laserbrain"
)

// DefaultGoal is the Supercode's own goal when none is given.
const DefaultGoal = "keep every agent on its own ground"

// Options configures a Supercode.
type Options struct {
	// Goal is the Supercode's own goal, the ground of its self-check
	// (default DefaultGoal).
	Goal string
	// Contexts is the context store every agent's run and the self-check
	// record into (nil: one private in-memory store).
	Contexts laserbrain.ContextStore
	// CorroborateSaw also hands every event Saw records to the agent's run,
	// so observed work backs its next check (anchored, corroboration, the
	// stall veto). The reference keeps the two apart — its Supercode.saw
	// feeds only the catches — and so does the default, which is what the
	// parity vectors check.
	CorroborateSaw bool
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// AgentView is one agent as the Supercode sees it: its own run, measured
// against its own ground, and the events observed of it.
type AgentView struct {
	Name string
	// Ground is the first non-empty goal the agent spelled, as spelled: the
	// ground collisions compare. Empty until then.
	Ground string
	// Steps is how many states were observed.
	Steps int
	// Last is the latest verdict, nil before any observation.
	Last *laserbrain.CheckResult
	// Events is every event observed of the agent, oldest first.
	Events []laserbrain.Event
	// Run is the agent's run. It belongs to the Supercode: read it, do not
	// step it.
	Run *laserbrain.Run
}

type agent struct {
	AgentView
	// ended: the agent no longer runs (SetEnded); it keeps its view and
	// findings, and leaves the collisions and the route.
	ended bool
	// subject and lens, when set (SetSubject), are what the agent
	// collides on instead of its whole ground: a ponder session's subject,
	// its lens compared apart.
	subject, lens []string // Norm of each; subject nil when not set
	subjectText   string
	// sameAs is the agent this one is another view of (SetSameAs): the
	// two never collide.
	sameAs  string
	tokens  []string           // Norm(Ground)
	catches []laserbrain.Catch // Catches(Events), nil when stale
	fresh   bool               // catches is current
}

// Supercode watches N agents, each against its own ground, judges them on
// observed events as well as on what they spell, and reports — who is
// drifting, whose evidence is questionable, which two are doing the same
// job and which of those should yield. Its one power over execution is
// Manage's halt of a yielding agent; it never sets or moves a ground.
//
// A Supercode is safe for concurrent use.
type Supercode struct {
	mu       sync.Mutex
	opts     Options
	goal     string
	agents   map[string]*agent
	names    []string // sorted
	self     *laserbrain.Run
	contexts laserbrain.ContextStore
	// fleet caches FleetCatches until the next Saw.
	fleet      []FleetCatch
	fleetFresh bool
	// cols caches the collisions until an agent's ground is set: grounds
	// never move, so most rounds have nothing to recompute.
	cols      []laserbrain.Collision
	colsFresh bool
}

// New returns a Supercode with no agents, its self-check already grounded
// on its goal at distance 0: the first real SelfCheck is measured against a
// reference that existed before it, so it can come back drifting rather
// than agreeing with itself by construction.
func New(opts Options) (*Supercode, error) {
	if opts.Goal == "" {
		opts.Goal = DefaultGoal
	}
	if opts.Contexts == nil {
		opts.Contexts = laserbrain.NewMemContexts()
	}
	s := &Supercode{opts: opts, goal: opts.Goal, agents: map[string]*agent{}, contexts: opts.Contexts}
	s.self = s.newRun()
	if _, err := s.self.Step(laserbrain.StepInput{Goal: s.goal, Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(0)}); err != nil {
		return nil, fmt.Errorf("supercode: ground the self-check: %w", err)
	}
	s.self.HistorySaved()
	s.self.ReleaseSavedHistory()
	return s, nil
}

func (s *Supercode) newRun() *laserbrain.Run {
	return laserbrain.NewRun(laserbrain.RunOptions{Contexts: s.contexts, Now: s.opts.Now})
}

// Goal is the Supercode's own goal.
func (s *Supercode) Goal() string { return s.goal }

func (s *Supercode) agentLocked(name string) *agent {
	a, ok := s.agents[name]
	if !ok {
		a = &agent{AgentView: AgentView{Name: name, Run: s.newRun()}, fresh: true}
		s.agents[name] = a
		i, _ := slices.BinarySearch(s.names, name)
		s.names = slices.Insert(s.names, i, name)
		s.fleetFresh = false
	}
	return a
}

// Observe checks one state an agent spelled against that agent's own
// ground (its first grammatical state), not the Supercode's. The first
// non-empty goal it spells becomes its collision ground.
func (s *Supercode) Observe(name string, in laserbrain.StepInput) (laserbrain.CheckResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.observeLocked(name, in)
}

func (s *Supercode) observeLocked(name string, in laserbrain.StepInput) (laserbrain.CheckResult, error) {
	a := s.agentLocked(name)
	if a.Ground == "" && in.Goal != "" {
		a.Ground = in.Goal
		a.tokens = laserbrain.Norm(in.Goal)
		s.colsFresh = false
	}
	v, err := a.Run.Step(in)
	// The Supercode reads verdicts, not step histories: keep the run's
	// memory bounded however long it watches.
	a.Run.HistorySaved()
	a.Run.ReleaseSavedHistory()
	a.Last = &v
	a.Steps++
	return v, err
}

// Saw records an event observed of an agent — a check, a tool result, a
// claim, an edit — for the catches. With Options.CorroborateSaw it also
// backs the agent's next check.
func (s *Supercode) Saw(name string, events ...laserbrain.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agentLocked(name)
	a.Events = append(a.Events, events...)
	a.fresh = false
	s.fleetFresh = false
	if s.opts.CorroborateSaw {
		a.Run.Saw(events...)
	}
}

// SetEnded marks an agent as no longer running (its run ended, its
// session closed or its goal reached), or running again. An ended agent
// stays among the agents, with its view and findings, but two agents
// collide only while both run, so it leaves Collisions and Route (and
// what Publish writes of them). Marking an agent never seen records it.
func (s *Supercode) SetEnded(name string, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.agentLocked(name); a.ended != ended {
		a.ended = ended
		s.colsFresh = false
	}
}

// SetSubject makes an agent collide on its subject alone, with its lens
// compared apart, instead of on its whole ground (a ponder session, whose
// ground is its subject and lens: a lens must not dilute the subject).
// Two such agents collide when their subjects overlap at least
// laserbrain.CollisionMin(), unless both have a lens and the lenses do not
// overlap that much: two lenses on one subject split the work. An agent
// with a subject and one without compare the subject with the other's
// ground. The grounds a collision names are then the subjects compared.
func (s *Supercode) SetSubject(name, subject, lens string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agentLocked(name)
	a.subjectText, a.subject, a.lens = subject, laserbrain.Norm(subject), laserbrain.Norm(lens)
	s.colsFresh = false
}

// SetSameAs says that agent name is another view of agent other — a
// laserbrain run driving a ponder session (ponder:<slug>) — so that the
// worker collides once, as other: name is not compared itself (it keeps its
// row, its verdicts and its catches).
func (s *Supercode) SetSameAs(name, other string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.agentLocked(name); a.sameAs != other {
		a.sameAs = other
		s.colsFresh = false
	}
}

// Ended reports whether the agent is marked ended (SetEnded).
func (s *Supercode) Ended(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[name]
	return ok && a.ended
}

// Agents lists the agents seen so far, sorted.
func (s *Supercode) Agents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.names)
}

// View returns a copy of one agent's view (its run is shared, not copied).
func (s *Supercode) View(name string) (AgentView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[name]
	if !ok {
		return AgentView{}, false
	}
	v := a.AgentView
	v.Events = slices.Clone(v.Events)
	if v.Last != nil {
		last := *v.Last
		v.Last = &last
	}
	return v, true
}

func (a *agent) catchesLocked() []laserbrain.Catch {
	if !a.fresh {
		a.catches = laserbrain.Catches(a.Events)
		a.fresh = true
	}
	return a.catches
}

func catchNames(cs []laserbrain.Catch) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Signature
	}
	return out
}

// Finding is one agent worth mentioning: drifting, or with a catch.
type Finding struct {
	Agent string `json:"agent"`
	Steps int    `json:"steps"`
	// Reason, Phi and Laserscore are the last verdict's; Reason and Phi
	// are nil for an agent seen only through events.
	Reason     *string  `json:"reason"`
	Phi        *float64 `json:"phi"`
	Drifting   bool     `json:"drifting"`
	Laserscore *string  `json:"laserscore"`
	// Catches are the signatures of the agent's catches, in Catches order.
	Catches []string `json:"catches"`
}

// Findings is one row per agent that is drifting or has a catch, by name;
// empty when all is well.
func (s *Supercode) Findings() []Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.findingsLocked()
}

func (s *Supercode) findingsLocked() []Finding {
	out := []Finding{}
	for _, name := range s.names {
		a := s.agents[name]
		f := Finding{Agent: name, Steps: a.Steps, Catches: catchNames(a.catchesLocked())}
		if a.Last != nil {
			reason, phi := a.Last.Reason, a.Last.Phi
			f.Reason, f.Phi, f.Drifting, f.Laserscore = &reason, &phi, a.Last.Drifting, a.Last.Laserscore
		}
		if f.Drifting || len(f.Catches) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// Collisions is every pair of running agents whose grounds overlap at
// least laserbrain.CollisionMin(): two agents on the same job. Each may be
// perfectly on its own ground; the duplication exists only as a relation,
// which is why no verdict of either can show it. Compared on grounds, which
// are fixed for a run, not on current goals, which touch in passing. An
// agent that ended (SetEnded) is compared with nobody: duplicate work is work
// being done twice, and a finished run does none.
func (s *Supercode) Collisions() []laserbrain.Collision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.collisionsLocked())
}

// collisionsLocked returns the cached collisions; callers must not modify
// the slice.
func (s *Supercode) collisionsLocked() []laserbrain.Collision {
	if s.colsFresh {
		return s.cols
	}
	gs := make([]Ground, 0, len(s.names))
	for _, name := range s.names {
		a := s.agents[name]
		g := Ground{Agent: name, Ground: a.Ground, SameAs: a.sameAs, Ended: a.ended,
			tokens: a.tokens, lensTokens: a.lens, normalised: true}
		if a.subject != nil {
			g.Subject, g.subjectTokens = &a.subjectText, a.subject
		}
		gs = append(gs, g)
	}
	s.cols, s.colsFresh = Collide(gs), true
	return s.cols
}

// Ground is one agent as the collision model compares it (Collide).
type Ground struct {
	Agent string
	// Ground is the agent's ground as spelled; an agent with none yet
	// collides with nobody.
	Ground string
	// Subject, when set, is what the agent collides on instead of its
	// whole ground — a ponder session's subject — and Lens its lens,
	// compared apart (SetSubject).
	Subject *string
	Lens    string
	// SameAs is the agent this one is another view of (SetSameAs): it is
	// not compared itself — the agent it names collides for both.
	SameAs string
	// Ended: the agent no longer runs, and collides with nobody.
	Ended bool

	// Normalised tokens a caller keeps between rounds (the Supercode);
	// computed here when not given.
	tokens, subjectTokens, lensTokens []string
	normalised                        bool
}

// Collide is the fleet's one collision model — laserbrain supervise's rounds,
// the fleet report and the MCP supervision tool all go through it: every
// pair of running agents whose grounds overlap at least
// laserbrain.CollisionMin(), highest overlap first. An agent with a
// subject (a ponder session) is compared by its subject, so that a lens
// never dilutes it; when both agents of a pair have a lens and the lenses
// overlap less than CollisionMin, the two split the work and do not collide
// (the lens is reported beside the collision, not folded into it). An
// agent that is another view of one compared itself (SameAs: a laserbrain
// run driving a ponder session) is not compared: the session collides for
// the worker, once, on its subject; an ended agent collides with nobody. The grounds a collision names are what was
// compared: the subjects, for sessions.
func Collide(gs []Ground) []laserbrain.Collision {
	sorted := slices.Clone(gs)
	slices.SortStableFunc(sorted, func(a, b Ground) int { return strings.Compare(a.Agent, b.Agent) })
	byName := make(map[string]*Ground, len(sorted))
	ags := make([]laserbrain.AgentGround, 0, len(sorted))
	for i := range sorted {
		g := &sorted[i]
		if !g.normalised {
			g.tokens, g.lensTokens = laserbrain.Norm(g.Ground), laserbrain.Norm(g.Lens)
			if g.Subject != nil {
				g.subjectTokens = laserbrain.Norm(*g.Subject)
			}
			g.normalised = true
		}
		switch {
		case g.Ended:
		case g.SameAs != "":
			// Another view of an agent that is compared itself: one
			// worker, one collision — it collides as that agent.
		case g.Subject != nil:
			if g.Ground != "" {
				ags = append(ags, laserbrain.AgentGround{Agent: g.Agent, Ground: *g.Subject, Tokens: g.subjectTokens})
			}
		default:
			ags = append(ags, laserbrain.AgentGround{Agent: g.Agent, Ground: g.Ground, Tokens: g.tokens})
		}
		byName[g.Agent] = g
	}
	return slices.DeleteFunc(laserbrain.CollisionsAmong(ags), func(c laserbrain.Collision) bool {
		a, b := byName[c.Agents[0]], byName[c.Agents[1]]
		// Two lenses on one subject that do not overlap split the work.
		return len(a.lensTokens) > 0 && len(b.lensTokens) > 0 && laserbrain.Overlap(a.lensTokens, b.lensTokens) < laserbrain.CollisionMin()
	})
}

// Route is the recommendation for one collision: which agent keeps the
// ground and which yields. It says who yields, never what the yielding
// agent should do instead.
type Route struct {
	Agents  [2]string `json:"agents"`
	Overlap float64   `json:"overlap"`
	// Ground is the first agent's ground.
	Ground string `json:"ground"`
	// Keep and Yield are empty when nothing observable favours either:
	// no recommendation rather than a coin flip.
	Keep  string `json:"keep"`
	Yield string `json:"yield"`
	Why   string `json:"why"`
}

// NoBasis is Route.Why when the two are tied.
const NoBasis = "no basis to choose — equal catches, steps and displacement"

// rank orders agents for routing: fewer catches, then more steps, then
// lower Φ (closer to its own ground).
type rank struct {
	catches, steps int
	phi            float64
}

func (r rank) less(o rank) bool {
	if r.catches != o.catches {
		return r.catches < o.catches
	}
	if r.steps != o.steps {
		return r.steps > o.steps
	}
	return r.phi < o.phi
}

func (a *agent) rankLocked() rank {
	r := rank{catches: len(a.catchesLocked()), steps: a.Steps}
	if a.Last != nil {
		r.phi = a.Last.Phi
	}
	return r
}

// Route recommends, for each collision, who keeps the ground and who
// yields — the one decision the Supercode may take, because which agents
// share a ground is a fact no single agent can observe. Ranked on what is
// observed: catches first, then steps invested, then Φ. Equal ranks give
// no recommendation.
func (s *Supercode) Route() []Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.routeLocked()
}

func (s *Supercode) routeLocked() []Route {
	cols := s.collisionsLocked()
	out := make([]Route, 0, len(cols))
	for _, c := range cols {
		a, b := s.agents[c.Agents[0]], s.agents[c.Agents[1]]
		ra, rb := a.rankLocked(), b.rankLocked()
		r := Route{Agents: c.Agents, Overlap: c.Overlap, Ground: c.Grounds[0]}
		switch {
		case ra == rb:
			r.Why = NoBasis
		default:
			keep, drop := a, b
			if rb.less(ra) {
				keep, drop = b, a
			}
			r.Keep, r.Yield = keep.Name, drop.Name
			r.Why = fmt.Sprintf("%s has %d catch(es) over %d step(s); %s has %d over %d",
				keep.Name, len(keep.catchesLocked()), keep.Steps, drop.Name, len(drop.catchesLocked()), drop.Steps)
		}
		out = append(out, r)
	}
	return out
}

// SelfCheck is the Supercode under its own instrument: its goal, at a
// distance of how many agents are drifting (at most 10), stuck when every
// agent is. Each call is a check of the self run.
func (s *Supercode) SelfCheck() (laserbrain.CheckResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.selfCheckLocked()
}

func (s *Supercode) selfCheckLocked() (laserbrain.CheckResult, error) {
	drifting := 0
	for _, a := range s.agents {
		if a.Last != nil && a.Last.Drifting {
			drifting++
		}
	}
	n := max(len(s.agents), 1)
	progress := laserbrain.ProgressAdvancing
	if drifting >= n {
		progress = laserbrain.ProgressStuck
	}
	v, err := s.self.Step(laserbrain.StepInput{Goal: s.goal, Progress: progress, Distance: laserbrain.Dist(min(10, drifting))})
	s.self.HistorySaved()
	s.self.ReleaseSavedHistory()
	return v, err
}

// Report is the whole picture as text, in the reference's words: a head
// line, the self-check, the collisions, the fleet catches and the
// findings. It takes a self-check. An agent seen only through events has
// no Φ; its row shows "Φ=-" (the reference's report raises there).
func (s *Supercode) Report() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := s.findingsLocked()
	me, err := s.selfCheckLocked()
	if err != nil {
		return "", err
	}
	cols := s.collisionsLocked()
	var b strings.Builder
	fmt.Fprintf(&b, "supercode · %d agent(s) · %d finding(s)\n  self: %s Φ=%s", len(s.agents), len(rows), me.Reason, f2(me.Phi))
	switch {
	case len(rows) == 0 && len(cols) == 0:
		b.WriteString("\n  every agent on its own ground")
	case len(rows) == 0:
		b.WriteString("\n  every agent on its own ground — and two of them share it")
	}
	for _, c := range cols {
		fmt.Fprintf(&b, "\n  %s + %s  same job (overlap %s)", c.Agents[0], c.Agents[1], f2(c.Overlap))
	}
	for _, f := range s.fleetCatchesLocked() {
		fmt.Fprintf(&b, "\n  %s  %s · %s", f.Signature, f.Subject, strings.Join(f.Agents, ", "))
	}
	for _, r := range rows {
		reason, phi := "-", "-"
		if r.Reason != nil && *r.Reason != "" {
			reason = *r.Reason
		}
		if r.Phi != nil {
			phi = f2(*r.Phi)
		}
		fmt.Fprintf(&b, "\n  %s %s Φ=%s step %d", pad(r.Agent, 12), pad(reason, 16), phi, r.Steps)
		if len(r.Catches) > 0 {
			b.WriteString(" · " + strings.Join(r.Catches, ", "))
		}
	}
	return b.String(), nil
}

// pad is Python's f"{s:n}" for a string: left-aligned, at least n
// characters.
func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

// f2 is Python's "%.2f".
func f2(x float64) string { return fmt.Sprintf("%.2f", x) }
