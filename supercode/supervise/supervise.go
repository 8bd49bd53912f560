package supervise

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/link"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// DefaultEscalateAfter is the drift streak that goes to a person.
const DefaultEscalateAfter = 3

// Options configures a Supervisor.
type Options struct {
	// Repo is the repository: its .ponder sessions, and (unless FleetID is
	// given) its fleet.
	Repo string
	// FleetID is the fleet; "" = fleet.ID(Repo).
	FleetID string
	// Fleet is the fleet store: runs, events, halts and the journal.
	Fleet fleet.Store
	// Runs is laserbrain's run store, where agents' checks are kept (nil:
	// agent runs are seen through their events only).
	Runs laserbrain.Store
	// Goal is the supervisor's own goal (its self-check's ground).
	Goal string
	// EscalateAfter is the drift streak (verdicts in a row) that goes to a
	// person; 0 means DefaultEscalateAfter, a negative value never.
	EscalateAfter int
	// OnEscalate asks a person (nil: escalations are journaled and
	// reported, nobody is asked).
	OnEscalate func(ctx context.Context, e Escalation) Resolution
	// Publish, when set, gets the supervisor's reading after every round
	// in which anything changed (supercode.Publish).
	Publish *link.Link
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// ReadOnly reports without deciding: no halt, no question, nothing
	// journaled or published (what an agent reading its fleet gets).
	ReadOnly bool
	// EscalateWaiting sends each agent that starts waiting for a person
	// (a permission or idle prompt, as its client's Notification hook
	// recorded it) to a person, once per wait.
	EscalateWaiting bool
	// Budget is what the fleet may spend: once its agent runs' Usage adds
	// up past it, every live agent is halted, with the figures.
	Budget Budget
	// Usage reads what an agent run spent, as its client recorded it (nil:
	// nothing is read, and Budget holds nothing).
	Usage func(fleet.Run) (fleet.Usage, bool)
}

// Escalation is a question sent to a person: a drift that persisted, or
// two agents on one ground with no basis to choose who yields. It is what
// --on-escalate's command reads on its standard input.
type Escalation struct {
	// ID names the question; it is asked once (a supervisor that died
	// before the answer was journaled asks again, marked Redelivered).
	ID          string            `json:"id"`
	Round       int64             `json:"round"`
	Kind        string            `json:"kind"` // drift | collision | waiting
	Who         string            `json:"who"`
	Agents      []string          `json:"agents"`
	Why         string            `json:"why"`
	Question    string            `json:"question"`
	Verdict     *EscalatedVerdict `json:"verdict,omitempty"`
	Route       *supercode.Route  `json:"route,omitempty"`
	Repo        string            `json:"repo"`
	Fleet       string            `json:"fleet"`
	Redelivered bool              `json:"redelivered,omitempty"`
}

// EscalatedVerdict is the drifting agent's reading, for a drift escalation.
type EscalatedVerdict struct {
	Reason string  `json:"reason"`
	Phi    float64 `json:"phi"`
	Advice string  `json:"advice"`
	Streak int     `json:"streak"`
	Ground string  `json:"ground"`
}

// Escalation kinds.
const (
	EscalateDrift     = "drift"
	EscalateCollision = "collision"
	EscalateWaiting   = "waiting"
)

// Resolution is what became of an escalation.
type Resolution struct {
	// Exit is the command's exit status (nil when it could not run or was
	// killed by a signal; Error says).
	Exit *int `json:"exit"`
	// Decision is the first line the command printed. For a collision,
	// naming one of the two agents halts it; for a drift, it is delivered
	// to the agent instead of its own advice.
	Decision string `json:"decision,omitempty"`
	Error    string `json:"error,omitempty"`
	// By is the person who answered outside --on-escalate (laserbrain
	// ui: AnswerEscalation); "" for the command's answer.
	By string `json:"by,omitempty"`
}

// Delivered reports whether the question reached a person: the command
// exited 0, or a person answered it themselves. Any other status (a
// mistyped path's 127, a failure's 1, a signal, a timeout) leaves the
// question unanswered, to be asked again.
func (a Resolution) Delivered() bool { return a.Exit != nil && *a.Exit == 0 || a.By != "" }

// Supervisor watches one repository's ponder sessions and agent runs in
// rounds. Its three powers, and no more: it halts the yielding agent of a
// colliding pair, delivers each agent its own advice, and escalates to a
// person. It never regrounds, never sets a ground and never routes
// execution.
type Supervisor struct {
	o      Options
	fleet  string
	sc     *supercode.Supercode
	eng    *ponder.Engine
	agents map[string]*agent
	round  int64
	// What the journal says was already done: escalations asked and
	// answered, halts decided.
	asked    map[string]bool
	answered map[string]bool
	pending  []Escalation      // asked before a crash, never answered
	whom     map[string]string // who each question asked was about (its id: Who)
	logged   int64             // the last round the journal knows of
	self     *SelfRow          // the last self-check
	// fold is what the journal's records amount to, kept as records are
	// read and appended (what a checkpoint journals); started: this
	// supervisor journaled its start.
	fold    resumeState
	started bool
	// toNote are the halts put since this machine last noted them.
	toNote []fleet.Halt
}

type agent struct {
	name, kind string
	ground     string
	lens       string // a ponder session's lens, reported beside its collisions
	// a ponder session
	slug, stamp string
	passes      int // passes stepped
	damaged     string
	status      string
	// an agent run
	run    fleet.Run
	fed    map[int]int // steps fed per task
	checks int
	events int
	estamp string
	files  map[string]bool
	cov    coverage.Tally // its tool calls and checks, for coverage
	// waiting is the notification it waits on a person for (nil: none).
	waiting *fleet.RunEvent
	// losses are what its calls lost past the project policy's undo
	// threshold, as its hooks reported them (fleet.KindLoss), oldest first.
	losses []string
	// what its verdicts were
	finished    bool
	streak      int
	streakStart int
	distance    *int
	progress    string
	advice      string
	decision    string // a person's answer to its drift escalation
	newSteps    int
}

// Open starts a supervisor on a repository, resuming from the fleet's
// journal: the next round is numbered after the last one journaled,
// escalations already answered are not asked again, one asked and never
// answered (the supervisor died in between) is asked again, and a halt the
// journal decided but the store never got is put.
func Open(ctx context.Context, o Options) (*Supervisor, error) {
	if o.Fleet == nil {
		return nil, errors.New("supervise: no fleet store")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.EscalateAfter == 0 {
		o.EscalateAfter = DefaultEscalateAfter
	}
	fid := o.FleetID
	if fid == "" {
		var err error
		if fid, err = fleet.ID(ctx, o.Repo); err != nil {
			return nil, err
		}
	}
	sc, err := supercode.New(supercode.Options{Goal: o.Goal, Now: o.Now})
	if err != nil {
		return nil, err
	}
	eng := ponder.NewReader(o.Repo)
	s := &Supervisor{o: o, fleet: fid, sc: sc, eng: eng, agents: map[string]*agent{},
		asked: map[string]bool{}, answered: map[string]bool{}, whom: map[string]string{}}
	if err := s.resume(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// FleetID is the fleet the supervisor watches.
func (s *Supervisor) FleetID() string { return s.fleet }

// Supercode is the core the supervisor feeds (read it; do not feed it).
func (s *Supervisor) Supercode() *supercode.Supercode { return s.sc }

func (s *Supervisor) now() time.Time { return s.o.Now().UTC() }

// resume reads the journal back: from its last checkpoint on (see
// checkpoint.go), or whole when it has none.
func (s *Supervisor) resume(ctx context.Context) error {
	st, problem, err := s.loadJournal(ctx)
	if err == nil && problem == nil {
		// The journal must still hold what this machine verified of it:
		// one deleted or emptied with its head and counter starts no new
		// chain over the loss.
		problem, err = fleet.MachineProblem(ctx, s.o.Fleet, s.fleet)
	}
	if err != nil {
		return err
	}
	if problem != nil && !s.o.ReadOnly {
		// Nothing is appended to a chain that does not hold: a record
		// after the break would read as vouching for it, and the round
		// counter would move its mark over the evidence.
		return s.broken(problem)
	}
	s.fold = st
	s.round, s.logged = st.Round, st.Round
	for _, id := range st.Asked {
		s.asked[id] = true
	}
	for _, id := range st.Answered {
		s.answered[id] = true
	}
	for _, e := range st.Questions {
		s.whom[e.ID] = e.Who
		e.Redelivered = true
		s.pending = append(s.pending, e)
	}
	if s.o.OnEscalate == nil {
		// Nobody to ask: the questions stand journaled as they were
		// asked, and are not journaled again at every start.
		s.pending = nil
	}
	if s.o.ReadOnly {
		return nil
	}
	for _, h := range st.Halts {
		// Put is idempotent on the id: a halt already stored (released
		// since, or in force) is left as it is.
		if err := s.o.Fleet.PutHalt(ctx, h); err != nil && !errors.Is(err, fleet.ErrExists) {
			return fmt.Errorf("re-putting halt %s from the journal: %w", h.ID, err)
		}
	}
	return nil
}

// journal appends rec to the fleet's journal, after this supervisor's
// start record when it is its first, and folds it in.
func (s *Supervisor) journal(ctx context.Context, rec fleet.JournalRecord) (fleet.JournalRecord, error) {
	if !s.started {
		s.started = true
		data, _ := json.Marshal(map[string]any{"after_round": s.fold.Round, "unanswered": len(s.fold.Questions), "repo": s.o.Repo})
		start, err := s.o.Fleet.AppendJournal(ctx, fleet.JournalRecord{At: fleet.JournalTime(s.now()), Fleet: s.fleet, Kind: fleet.JournalStart,
			Round: s.fold.Round, Text: fmt.Sprintf("supervisor started after round %d", s.fold.Round), Data: data})
		if err != nil {
			return fleet.JournalRecord{}, err
		}
		s.fold.apply(start)
	}
	out, err := s.o.Fleet.AppendJournal(ctx, rec)
	if err != nil {
		return fleet.JournalRecord{}, err
	}
	s.fold.apply(out)
	return out, nil
}

// Close journals where the supervisor stopped, so the next one numbers its
// rounds after the last one run even when the last rounds changed nothing
// (and so were not journaled) — unless the store keeps a round counter
// (fleet.Rounds), which numbers them already. A supervisor that dies
// without Close is numbered on from its last journaled round.
func (s *Supervisor) Close(ctx context.Context) error {
	if s.o.ReadOnly || s.round == s.logged {
		return nil
	}
	if _, ok := s.o.Fleet.(fleet.Rounds); ok {
		return nil
	}
	err := witnessed(ctx, s.o.Fleet, s.fleet, false, func() error {
		_, err := s.journal(ctx, fleet.JournalRecord{At: fleet.JournalTime(s.now()), Fleet: s.fleet, Kind: fleet.JournalStop,
			Round: s.round, Text: fmt.Sprintf("supervisor stopped after round %d", s.round)})
		return err
	})
	if err == nil {
		s.logged = s.round
	}
	return err
}

// broken is the refusal to append to fleet's journal: problem, where the
// journal is.
func (s *Supervisor) broken(problem *fleet.JournalProblem) error {
	return &fleet.JournalBrokenError{Fleet: s.fleet, Problem: problem, Location: fleet.JournalLocation(s.o.Fleet, s.fleet)}
}

// witnessed appends outside a round: under the fleet's round lock (when
// the store keeps one), after checking the journal (whole, or its tail for
// a supervisor that checked it whole when it opened), so that the
// round counter's mark moves over the record appended (fleet.Rounds). A
// journal whose tail does not hold gets nothing: the error is a
// *fleet.JournalBrokenError.
func witnessed(ctx context.Context, st fleet.Store, fleetID string, whole bool, appendRec func() error) (err error) {
	if rl, ok := st.(fleet.Rounds); ok {
		_, end, serr := rl.StartRound(ctx, fleetID)
		if serr != nil {
			return fmt.Errorf("waiting for the fleet's round: %w", serr)
		}
		next := int64(0) // no new round: the mark only
		defer func() {
			if eerr := end(next); eerr != nil && err == nil {
				err = eerr
			}
		}()
		var problem *fleet.JournalProblem
		var cerr error
		if whole {
			var c fleet.JournalCheck
			c, cerr = fleet.CheckJournal(ctx, st, fleetID)
			problem = c.Problem
		} else {
			problem, cerr = fleet.CheckJournalTail(ctx, st, fleetID)
		}
		if cerr != nil {
			next = -1
			return fmt.Errorf("checking the journal: %w", cerr)
		}
		if problem == nil {
			problem, cerr = fleet.MachineProblem(ctx, st, fleetID)
		}
		if cerr != nil {
			next = -1
			return fmt.Errorf("checking the journal: %w", cerr)
		}
		if problem != nil {
			next = -1
			return &fleet.JournalBrokenError{Fleet: fleetID, Problem: problem, Location: fleet.JournalLocation(st, fleetID)}
		}
	}
	if err := appendRec(); err != nil {
		return err
	}
	// What this machine verified moves on with it (best effort: the
	// journal has the record).
	_ = fleet.NoteJournal(ctx, st, fleetID, time.Now())
	return nil
}

// Journal appends a person's record (an authorization, a revocation) to the
// fleet's journal as a release is: under the fleet's round lock, after
// checking the journal's tail, witnessed by the round counter. A journal
// whose tail does not hold gets nothing (a *fleet.JournalBrokenError).
func Journal(ctx context.Context, st fleet.Store, fleetID string, rec fleet.JournalRecord) error {
	rec.Fleet = fleetID
	return witnessed(ctx, st, fleetID, false, func() error {
		_, err := st.AppendJournal(ctx, rec)
		return err
	})
}

// Round observes what is new, takes the decisions the supervisor may take,
// journals them and reports. When the fleet store numbers rounds across
// supervisors (fleet.Rounds), the round waits for any other supervisor's
// round on the fleet to end and is numbered after every round journaled or
// taken by any of them: several supervisors on one fleet, on one machine or
// many, take turns and never number a round twice.
func (s *Supervisor) Round(ctx context.Context) (r *Round, err error) {
	defer s.noteHalts()
	if rl, ok := s.o.Fleet.(fleet.Rounds); ok && !s.o.ReadOnly {
		last, end, serr := rl.StartRound(ctx, s.fleet)
		if serr != nil {
			return nil, fmt.Errorf("waiting for the fleet's round: %w", serr)
		}
		ended := int64(-1) // until the journal is checked, the round ends writing nothing
		defer func() {
			if ended >= 0 {
				ended = s.round
			}
			if eerr := end(ended); eerr != nil && err == nil {
				r, err = nil, fmt.Errorf("ending round %d: %w", s.round, eerr)
			}
		}()
		problem, cerr := fleet.CheckJournalTail(ctx, s.o.Fleet, s.fleet)
		if cerr == nil && problem == nil {
			problem, cerr = fleet.MachineProblem(ctx, s.o.Fleet, s.fleet)
		}
		if cerr != nil {
			return nil, fmt.Errorf("checking the journal: %w", cerr)
		}
		if problem != nil {
			return nil, s.broken(problem)
		}
		ended = 0
		if err := s.catchUp(ctx); err != nil {
			return nil, err
		}
		s.round = max(s.round, last)
		seen := s.fold.lastCheckpoint // the round counter's mark is past it
		if r, err = s.runRound(ctx); err != nil {
			return nil, err
		}
		if err := s.checkpoint(ctx); err != nil {
			return r, err
		}
		if err := s.rotate(ctx, seen); err != nil {
			return r, err
		}
		_ = fleet.NoteJournal(ctx, s.o.Fleet, s.fleet, s.now())
		return r, nil
	}
	if r, err = s.runRound(ctx); err != nil {
		return nil, err
	}
	return r, s.checkpoint(ctx)
}

// RotateBytes is how much of the journal a rotation archives at least:
// the journal is rotated at a checkpoint once the records before it take
// this much.
var RotateBytes int64 = 1 << 20

// rotate archives the journal's records before checkpoint seq cp, one the
// round counter has seen, when they take RotateBytes (a store that keeps
// no archive keeps its journal whole).
func (s *Supervisor) rotate(ctx context.Context, cp int64) error {
	a, ok := s.o.Fleet.(fleet.JournalArchive)
	if !ok || cp <= 1 {
		return nil
	}
	if _, err := a.RotateJournal(ctx, s.fleet, cp, RotateBytes); err != nil {
		return fmt.Errorf("rotating the journal: %w", err)
	}
	return nil
}

// noteHalts has this machine's gate hold the halts this supervisor put
// since it last noted them, from now on, even if the store goes out of
// reach or loses its records before a hook reads them (best effort: the
// store has them).
func (s *Supervisor) noteHalts() {
	if len(s.toNote) > 0 {
		_ = fleet.NoteMachineHalts(s.toNote)
		s.toNote = nil
	}
}

// catchUp reads what others journaled since this supervisor last looked
// (other supervisors' rounds, a person's release), for the round numbers
// they took and to keep the fold whole.
func (s *Supervisor) catchUp(ctx context.Context) error {
	recs, err := s.o.Fleet.JournalRecords(ctx, s.fleet, s.fold.Seen)
	if err != nil {
		return fmt.Errorf("reading the journal: %w", err)
	}
	for _, r := range recs {
		if r.Seq > s.fold.Seen {
			s.fold.apply(r)
		}
		s.round = max(s.round, r.Round)
		if r.Kind == fleet.JournalAnswer {
			s.answeredElsewhere(r)
		}
	}
	return nil
}

// answeredElsewhere takes in an answer another process journaled (a
// person in laserbrain ui): the question is not asked again, and a drift's
// answer replaces the agent's advice, as if --on-escalate had given it.
func (s *Supervisor) answeredElsewhere(r fleet.JournalRecord) {
	var a struct {
		ID string `json:"id"`
		Resolution
	}
	if json.Unmarshal(r.Data, &a) != nil || !a.Delivered() || s.answered[a.ID] {
		return
	}
	s.answered[a.ID] = true
	s.pending = slices.DeleteFunc(s.pending, func(e Escalation) bool { return e.ID == a.ID })
	if strings.HasPrefix(a.ID, EscalateDrift+":") && a.Decision != "" {
		if ag := s.agents[s.whom[a.ID]]; ag != nil && ag.streak > 0 {
			ag.decision = a.Decision
		}
	}
}

func (s *Supervisor) runRound(ctx context.Context) (*Round, error) {
	s.round++
	r := &Round{Round: s.round, Agents: []AgentRow{}, Collisions: []CollisionRow{}, Halts: []HaltRow{}, Escalations: []EscalationRow{}}
	changed, err := s.observe(ctx)
	if err != nil {
		return nil, err
	}
	// Only agents that still run collide: a finished run or a closed
	// session does no duplicate work.
	for name, a := range s.agents {
		s.sc.SetEnded(name, a.finished)
	}
	inForce, released, err := s.halts(ctx)
	if err != nil {
		return nil, err
	}
	findings := map[string]supercode.Finding{}
	for _, f := range s.sc.Findings() {
		findings[f.Agent] = f
	}
	cols := s.sc.Collisions()
	r.Route = s.sc.Route()
	r.FleetCatches = s.sc.FleetCatches()
	// The self-check is a check of the supervisor's own run: taken when the
	// round saw something new, not on every idle poll (which would read a
	// fleet at rest as the supervisor stalling).
	if changed || s.self == nil {
		v, err := s.sc.SelfCheck()
		if err != nil {
			return nil, err
		}
		s.self = &SelfRow{Reason: v.Reason, Phi: v.Phi, Drifting: v.Drifting, Laserscore: v.Laserscore}
	}
	live := func(name string) bool {
		a := s.agents[name]
		_, halted := inForce[name]
		return a != nil && !a.finished && !halted
	}

	if !s.o.ReadOnly {
		if err := s.decide(ctx, r, live, inForce, released, groups(cols)); err != nil {
			return nil, err
		}
	}

	// The report.
	for _, c := range cols {
		a, b := s.agents[c.Agents[0]], s.agents[c.Agents[1]]
		shared, overlap := sharedFiles(a, b)
		row := CollisionRow{Agents: c.Agents, Overlap: c.Overlap, Grounds: c.Grounds, SharedFiles: shared, FileOverlap: overlap}
		if a != nil && b != nil {
			row.Lenses = [2]string{a.lens, b.lens}
		}
		r.Collisions = append(r.Collisions, row)
	}
	for _, name := range s.names() {
		r.Agents = append(r.Agents, s.row(name, findings, inForce))
	}
	if c, ok := unmeasuredCatch(r.Agents); ok {
		r.FleetCatches = append(r.FleetCatches, c)
	}
	if c, ok := lossCatch(r.Agents); ok {
		r.FleetCatches = append(r.FleetCatches, c)
	}
	s.fileShares(r, cols, live)
	r.Self = *s.self
	if r.Route == nil {
		r.Route = []supercode.Route{}
	}
	if r.FleetCatches == nil {
		r.FleetCatches = []supercode.FleetCatch{}
	}
	for _, a := range s.agents {
		a.newSteps = 0
	}

	if !s.o.ReadOnly {
		journaled, err := s.journalRound(ctx, r)
		if err != nil {
			return nil, err
		}
		if journaled || changed {
			// What the round decided about each agent, said once (the
			// messages' ids make a repeat a no-op).
			if err := s.tell(ctx, r, live); err != nil {
				return nil, err
			}
		}
		if journaled {
			s.logged = r.Round
			if s.o.Publish != nil {
				if _, err := s.sc.Publish(s.o.Publish, ""); err != nil {
					return nil, err
				}
			}
		}
	}
	return r, nil
}

// decide takes the round's decisions: first any question a crash left
// unanswered, then a halt for each route naming a live agent that yields
// (unless a person released the pair: see Released), a question for each
// collision with no basis to choose (the same), and one for each drift
// streak. groups are the round's collision groups, by agent.
func (s *Supervisor) decide(ctx context.Context, r *Round, live func(string) bool, inForce map[string]fleet.Halt, released Released, groups map[string][]string) error {
	pending := s.pending
	s.pending = nil // a question not delivered again goes back on it
	for _, e := range pending {
		if e.Kind == EscalateWaiting {
			// A wait that ended (someone answered at the terminal) is
			// not asked about again.
			if a := s.agents[e.Who]; a == nil || a.waiting == nil || waitingEscalation(0, e.Who, *a.waiting).ID != e.ID {
				continue
			}
		}
		if err := s.escalateInto(ctx, r, e, inForce, groups); err != nil {
			return err
		}
	}
	for _, rt := range r.Route {
		switch {
		case rt.Yield != "" && live(rt.Yield) && !released.Pair(rt.Yield, rt.Keep):
			why := fmt.Sprintf("shares a ground with %s (overlap %.2f) — halted to stop duplicate work. Choosing what %s does next is not the supervisor's call", rt.Keep, rt.Overlap, rt.Yield)
			h, err := s.halt(ctx, rt.Yield, why, "supervisor", CollisionCause(rt.Keep, groups[rt.Yield]), &rt, inForce)
			if err != nil {
				return err
			}
			r.Halts = append(r.Halts, h)
		case rt.Keep == "" && live(rt.Agents[0]) && live(rt.Agents[1]) && !released.Pair(rt.Agents[0], rt.Agents[1]):
			// Every pair with no basis to choose goes to a person, once
			// per collision: its question's id is the pair's, so a
			// collision that stands round after round is asked once.
			e := collisionEscalation(s.round, rt)
			if s.asked[e.ID] {
				continue
			}
			if err := s.escalateInto(ctx, r, e, inForce, groups); err != nil {
				return err
			}
		}
	}
	for _, name := range s.names() {
		a := s.agents[name]
		if a.newSteps == 0 || s.o.EscalateAfter < 0 || a.streak < s.o.EscalateAfter || !live(name) {
			continue
		}
		v, _ := s.sc.View(name)
		e := Escalation{ID: fmt.Sprintf("drift:%s:%d", name, a.streakStart), Round: s.round, Kind: EscalateDrift, Who: name,
			Agents: []string{name}, Why: fmt.Sprintf("%d drifting verdicts in a row", a.streak),
			Question: fmt.Sprintf("%s has drifted %d checks in a row and its own advice has not brought it back. What should it do?", name, a.streak)}
		if v.Last != nil {
			e.Verdict = &EscalatedVerdict{Reason: v.Last.Reason, Phi: v.Last.Phi, Advice: v.Last.Advice, Streak: a.streak, Ground: v.Ground}
		}
		if s.asked[e.ID] {
			continue
		}
		if err := s.escalateInto(ctx, r, e, inForce, groups); err != nil {
			return err
		}
	}
	if err := s.holdBudget(ctx, r, live, inForce); err != nil {
		return err
	}
	for _, name := range s.names() {
		a := s.agents[name]
		if !s.o.EscalateWaiting || a.waiting == nil || !live(name) {
			continue
		}
		e := waitingEscalation(s.round, name, *a.waiting)
		if s.asked[e.ID] {
			continue
		}
		if err := s.escalateInto(ctx, r, e, inForce, groups); err != nil {
			return err
		}
	}
	return nil
}

// collisionEscalation is the question for a collision with no basis to
// choose: its id names the pair, which is the collision's identity.
func collisionEscalation(round int64, rt supercode.Route) Escalation {
	return Escalation{ID: CollisionQuestionID(rt.Agents[0], rt.Agents[1]), Round: round, Kind: EscalateCollision,
		Who: rt.Agents[0] + "+" + rt.Agents[1], Agents: rt.Agents[:], Why: rt.Why, Route: &rt,
		Question: fmt.Sprintf("%s and %s are doing the same job (overlap %.2f) and nothing observable favours either: which one yields? Answer with its name, or nothing to let both go on.", rt.Agents[0], rt.Agents[1], rt.Overlap)}
}

// CollisionQuestionID is the id of the question about the collision of a
// and b: one per pair, whichever order they are named in.
func CollisionQuestionID(a, b string) string {
	k := pairKey(a, b)
	return "collision:" + k[0] + "+" + k[1]
}

// waitingEscalation is the question for an agent waiting on a person:
// asked once per wait (the waiting event's id).
func waitingEscalation(round int64, name string, w fleet.RunEvent) Escalation {
	key := w.ID
	if key == "" {
		key = w.At.UTC().Format(time.RFC3339Nano)
	}
	return Escalation{ID: "waiting:" + name + ":" + key, Round: round, Kind: EscalateWaiting, Who: name, Agents: []string{name},
		Why:      "waiting for a person (" + w.Name + "): " + w.Text,
		Question: fmt.Sprintf("%s is waiting for a person: %s. Answer it where it runs; a line answered here is told to the agent at its next event.", name, w.Text)}
}

func (s *Supervisor) names() []string {
	out := make([]string, 0, len(s.agents))
	for n := range s.agents {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// halts reads the fleet's halts: those in force by agent, and the pairs a
// person released (Released) — a released pair halts neither of its two
// again (the person's decision outranks the route).
func (s *Supervisor) halts(ctx context.Context) (inForce map[string]fleet.Halt, released Released, err error) {
	inForce, released = map[string]fleet.Halt{}, Released{}
	all, err := s.o.Fleet.ListHalts(ctx, s.fleet)
	if err != nil {
		return nil, nil, err
	}
	for _, h := range all {
		switch {
		case h.InForce():
			inForce[h.Agent] = h
		default:
			released.add(h)
		}
	}
	return inForce, released, nil
}

// Released are the pairs of agents a person released from a collision: a
// collision halt names, in its cause, every partner of the collision group
// it was put in (CollisionCause) — the agent kept, and every other agent
// colliding with the yielding one directly or through others — and its
// release lifts the halt for the agent against each of them, in both
// directions, for as long as they collide: neither of a released pair is
// halted for the pair again, and no question is asked about it. The
// grounds changing — an agent joining the group that was not in it — is a
// new collision, decided as any other.
type Released map[[2]string]bool

func pairKey(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// Pair reports whether a person released a and b from their collision.
func (r Released) Pair(a, b string) bool { return r[pairKey(a, b)] }

func (r Released) add(h fleet.Halt) {
	for _, p := range CausePartners(h.Cause) {
		r[pairKey(h.Agent, p)] = true
	}
}

// collisionPrefix starts a collision halt's cause.
const collisionPrefix = "collision:"

// CollisionCause is the cause of a halt put for a collision: the agent
// kept first, then the rest of the yielding agent's collision group,
// "collision:" and a JSON array of their names.
func CollisionCause(keep string, group []string) string {
	partners := []string{keep}
	for _, g := range group {
		if g != keep {
			partners = append(partners, g)
		}
	}
	b, _ := json.Marshal(partners)
	return collisionPrefix + string(b)
}

// CausePartners are the agents a collision halt's cause names: the JSON
// array CollisionCause writes, or the one agent of the earlier form
// "collision:<agent kept>". Nil for any other cause.
func CausePartners(cause string) []string {
	rest, ok := strings.CutPrefix(cause, collisionPrefix)
	if !ok || rest == "" {
		return nil
	}
	var partners []string
	if strings.HasPrefix(rest, "[") {
		if json.Unmarshal([]byte(rest), &partners) != nil {
			return nil
		}
		return partners
	}
	return []string{rest}
}

// groups are the collision groups of a round's collisions, by agent: every
// other agent it collides with, directly or through others, sorted.
func groups(cols []laserbrain.Collision) map[string][]string {
	adj := map[string][]string{}
	for _, c := range cols {
		adj[c.Agents[0]] = append(adj[c.Agents[0]], c.Agents[1])
		adj[c.Agents[1]] = append(adj[c.Agents[1]], c.Agents[0])
	}
	out := map[string][]string{}
	for start := range adj {
		if _, done := out[start]; done {
			continue
		}
		seen := map[string]bool{start: true}
		queue := []string{start}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			for _, m := range adj[n] {
				if !seen[m] {
					seen[m] = true
					queue = append(queue, m)
				}
			}
		}
		members := make([]string, 0, len(seen))
		for m := range seen {
			members = append(members, m)
		}
		sort.Strings(members)
		for _, m := range members {
			out[m] = slices.DeleteFunc(slices.Clone(members), func(x string) bool { return x == m })
		}
	}
	return out
}

// haltID names the halt one round puts on one agent, so a round re-run
// after a crash puts the same one.
func haltID(fleetID, agent string, round int64) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", fleetID, agent, round)))
	return fmt.Sprintf("h%d-%s", round, hex.EncodeToString(sum[:6]))
}

// halt journals, then puts, a halt on agent.
func (s *Supervisor) halt(ctx context.Context, name, why, by, cause string, route *supercode.Route, inForce map[string]fleet.Halt) (HaltRow, error) {
	a := s.agents[name]
	h := fleet.Halt{ID: haltID(s.fleet, name, s.round), Fleet: s.fleet, Agent: name, Reason: why, By: by, Round: s.round, Cause: cause, At: s.now()}
	if a != nil && a.kind == KindRun {
		h.Run = a.run.ID
	}
	if err := putHaltVia(ctx, s.o.Fleet, h, func(rec fleet.JournalRecord) error { _, err := s.journal(ctx, rec); return err }, false); err != nil {
		return HaltRow{}, err
	}
	s.toNote = append(s.toNote, h)
	inForce[name] = h
	return HaltRow{ID: h.ID, Agent: name, Reason: why, By: by, Route: route}, nil
}

// putHalt journals a halt, puts it in force (a halt put already stands)
// and tells the agent why.
func putHalt(ctx context.Context, st fleet.Store, h fleet.Halt) error {
	return putHaltVia(ctx, st, h, func(rec fleet.JournalRecord) error { _, err := st.AppendJournal(ctx, rec); return err }, true)
}

// putHaltVia is putHalt journaling through journal (a supervisor's own
// halts go through its journal, which keeps what a checkpoint sums up);
// note: this machine notes the halt now (a supervisor notes its round's
// halts together at the round's end: noteHalts).
func putHaltVia(ctx context.Context, st fleet.Store, h fleet.Halt, journal func(fleet.JournalRecord) error, note bool) error {
	return fleet.PutJournaledHalt(ctx, st, h, journal, note)
}

// escalateInto escalates e and adds its row to the round.
func (s *Supervisor) escalateInto(ctx context.Context, r *Round, e Escalation, inForce map[string]fleet.Halt, groups map[string][]string) error {
	row, err := s.escalate(ctx, r, e, inForce, groups)
	if err != nil {
		return err
	}
	r.Escalations = append(r.Escalations, row)
	return nil
}

// escalate journals the question, asks, and journals the answer; a
// collision answer naming one of the two halts it.
func (s *Supervisor) escalate(ctx context.Context, r *Round, e Escalation, inForce map[string]fleet.Halt, groups map[string][]string) (EscalationRow, error) {
	e.Repo, e.Fleet = s.o.Repo, s.fleet
	data, err := json.Marshal(e)
	if err != nil {
		return EscalationRow{}, err
	}
	if _, err := s.journal(ctx, fleet.JournalRecord{At: fleet.JournalTime(s.now()), Fleet: s.fleet, Kind: fleet.JournalEscalation,
		Round: s.round, Agent: e.Who, Text: e.Why, Data: data}); err != nil {
		return EscalationRow{}, err
	}
	s.asked[e.ID] = true
	s.whom[e.ID] = e.Who
	row := EscalationRow{ID: e.ID, Kind: e.Kind, Who: e.Who, Why: e.Why, Redelivered: e.Redelivered}
	if s.o.OnEscalate == nil {
		return row, nil
	}
	ans := s.o.OnEscalate(ctx, e)
	row.Exit, row.Decision, row.Error, row.Asked = ans.Exit, ans.Decision, ans.Error, true
	adata, err := json.Marshal(struct {
		ID string `json:"id"`
		Resolution
	}{e.ID, ans})
	if err != nil {
		return EscalationRow{}, err
	}
	text := "no exit status: " + ans.Error
	if ans.Exit != nil {
		text = fmt.Sprintf("exit status %d", *ans.Exit)
	}
	if !ans.Delivered() {
		text += ": not delivered, asked again next round"
	}
	if _, err := s.journal(ctx, fleet.JournalRecord{At: fleet.JournalTime(s.now()), Fleet: s.fleet, Kind: fleet.JournalAnswer,
		Round: s.round, Agent: e.Who, Text: text, Data: adata}); err != nil {
		return EscalationRow{}, err
	}
	if !ans.Delivered() {
		// Only exit 0 answers: the question goes again next round, and
		// what the command printed decides nothing.
		row.Undelivered = true
		e.Redelivered = true
		s.pending = append(s.pending, e)
		return row, nil
	}
	s.answered[e.ID] = true
	switch e.Kind {
	case EscalateCollision:
		if d := ans.Decision; len(e.Agents) == 2 && (d == e.Agents[0] || d == e.Agents[1]) {
			other := e.Agents[0]
			if d == other {
				other = e.Agents[1]
			}
			if a := s.agents[d]; a != nil && !a.finished {
				if _, halted := inForce[d]; !halted {
					h, err := s.halt(ctx, d, "human decision: yield to "+other, "a person (--on-escalate)", CollisionCause(other, groups[d]), e.Route, inForce)
					if err != nil {
						return EscalationRow{}, err
					}
					row.Halted = d
					r.Halts = append(r.Halts, h)
				}
			}
		}
	case EscalateDrift:
		if a := s.agents[e.Who]; a != nil && ans.Decision != "" {
			a.decision = ans.Decision
		}
	}
	if ans.Decision != "" {
		for _, who := range e.Agents {
			if err := s.say(ctx, who, "answer:"+e.ID, fleet.MessageAnswer, answerText(e, ans.Decision)); err != nil {
				return EscalationRow{}, err
			}
		}
	}
	return row, nil
}

// answerText is what an agent is told of a person's answer.
func answerText(e Escalation, decision string) string {
	return "a person answered the supervisor's question (" + e.Why + "): " + decision
}

// say queues a message for an agent from this round: the agent is told
// on its next event that can carry text (the hooks, ponder's next
// command). The id says what it is about, so a round re-run says it once.
func (s *Supervisor) say(ctx context.Context, agent, id, kind, text string) error {
	_, err := s.o.Fleet.Say(ctx, fleet.Message{ID: id, Fleet: s.fleet, Agent: agent, Kind: kind, Round: s.round, Text: text, At: s.now()})
	if err != nil {
		return fmt.Errorf("telling %s: %w", agent, err)
	}
	return nil
}

// tell queues what the round decided about each agent that the agent has
// not been told yet: a drifting verdict's advice (once per drifting
// step), and a route naming it to yield (once per agent it yields to).
func (s *Supervisor) tell(ctx context.Context, r *Round, live func(string) bool) error {
	for _, row := range r.Agents {
		a := s.agents[row.Agent]
		if a == nil || row.Advice == "" || a.decision != "" || !live(row.Agent) {
			continue // a person's answer was said when it came
		}
		if err := s.say(ctx, row.Agent, fmt.Sprintf("advice:%s:%d", row.Agent, row.Steps), fleet.MessageAdvice, row.Advice); err != nil {
			return err
		}
	}
	haltedNow := map[string]bool{}
	for _, h := range r.Halts {
		haltedNow[h.Agent] = true
	}
	for _, rt := range r.Route {
		// An agent halted in an earlier round was told why then; a
		// fleet of many on one job would otherwise be told every yield
		// again every round (the message's id makes it a no-op, but
		// each is a read of the agent's queue).
		if rt.Yield == "" || !live(rt.Yield) && !haltedNow[rt.Yield] {
			continue
		}
		text := fmt.Sprintf("you and %s are doing the same job (overlap %.2f): the supervisor's route says you yield to %s — %s", rt.Keep, rt.Overlap, rt.Keep, rt.Why)
		if err := s.say(ctx, rt.Yield, "yield:"+rt.Yield+":"+rt.Keep, fleet.MessageYield, text); err != nil {
			return err
		}
	}
	return nil
}

// Release lifts the halt in force on an agent — named as the supervisor
// names it, or by its run id or session slug — journaled first: the gate
// lifts only a halt the journal witnesses released, so when the journal
// cannot take the record (its chain does not hold: a
// *fleet.JournalBrokenError) nothing is released, and the halt in force is
// returned beside the error.
func Release(ctx context.Context, st fleet.Store, fleetID, name, by, reason string, now time.Time) (fleet.Halt, error) {
	agentName := name
	if _, ok, err := st.ActiveHalt(ctx, fleetID, name); err != nil {
		return fleet.Halt{}, err
	} else if !ok {
		all, err := st.ListHalts(ctx, fleetID)
		if err != nil {
			return fleet.Halt{}, err
		}
		var match []string
		for _, h := range all {
			if h.InForce() && (h.Run == name || h.Agent == fleet.PonderAgent(name) || strings.HasPrefix(h.Agent, name+":")) {
				match = append(match, h.Agent)
			}
		}
		match = slices.Compact(match)
		switch len(match) {
		case 0:
			return fleet.Halt{}, fmt.Errorf("%s is not halted in fleet %s: %w", name, fleetID, fleet.ErrNotFound)
		case 1:
			agentName = match[0]
		default:
			return fleet.Halt{}, fmt.Errorf("%s names several halted agents (%s): give one of them", name, strings.Join(match, ", "))
		}
	}
	cur, ok, err := st.ActiveHalt(ctx, fleetID, agentName)
	if err != nil {
		return fleet.Halt{}, err
	}
	if !ok {
		return fleet.Halt{}, fmt.Errorf("%s is not halted in fleet %s: %w", agentName, fleetID, fleet.ErrNotFound)
	}
	rel := fleet.Release{At: now.UTC(), By: by, Reason: reason}
	text := "released by " + by
	if reason != "" {
		text += ": " + reason
	}
	// The journal witnesses the release first: the gate lifts no halt the
	// journal does not, so a release it cannot take changes nothing.
	released := cur
	released.Released = &rel
	data, _ := json.Marshal(released)
	if err := witnessed(ctx, st, fleetID, true, func() error {
		_, err := st.AppendJournal(ctx, fleet.JournalRecord{At: fleet.JournalTime(now), Fleet: fleetID, Kind: fleet.JournalRelease,
			Round: cur.Round, Agent: agentName, Text: text, Data: data})
		return err
	}); err != nil {
		return cur, err
	}
	h, err := st.ReleaseHalt(ctx, fleetID, agentName, rel)
	if err != nil {
		return fleet.Halt{}, err
	}
	told := fmt.Sprintf("the halt on %s (%s) was released by %s", agentName, h.Reason, by)
	if reason != "" {
		told += ": " + reason
	}
	if _, serr := st.Say(ctx, fleet.Message{ID: "release:" + h.ID, Fleet: fleetID, Agent: agentName, Kind: fleet.MessageRelease, Round: h.Round,
		Text: told + ". You may go on.", At: now.UTC()}); serr != nil {
		return h, fmt.Errorf("the halt is released, but %s could not be told: %w", agentName, serr)
	}
	return h, nil
}

// fileShares fills the agents' SharesFilesWith: two live agents whose
// grounds do not collide, with footprints overlapping at least
// SharedFilesMin.
func (s *Supervisor) fileShares(r *Round, cols []laserbrain.Collision, live func(string) bool) {
	colliding := map[[2]string]bool{}
	for _, c := range cols {
		colliding[c.Agents] = true
	}
	for i := range r.Agents {
		for j := i + 1; j < len(r.Agents); j++ {
			x, y := &r.Agents[i], &r.Agents[j]
			if !live(x.Agent) || !live(y.Agent) || colliding[[2]string{x.Agent, y.Agent}] {
				continue
			}
			shared, overlap := sharedFiles(s.agents[x.Agent], s.agents[y.Agent])
			if len(shared) == 0 || overlap < SharedFilesMin {
				continue
			}
			overlap = math.Round(overlap*100) / 100
			x.SharesFilesWith = append(x.SharesFilesWith, FileShare{Agent: y.Agent, SharedFiles: shared, FileOverlap: overlap})
			y.SharesFilesWith = append(y.SharesFilesWith, FileShare{Agent: x.Agent, SharedFiles: shared, FileOverlap: overlap})
		}
	}
}

func sharedFiles(a, b *agent) ([]string, float64) {
	shared := []string{}
	if a == nil || b == nil {
		return shared, 0
	}
	union := len(a.files)
	for f := range b.files {
		if a.files[f] {
			shared = append(shared, f)
		} else {
			union++
		}
	}
	sort.Strings(shared)
	if union == 0 {
		return shared, 0
	}
	return shared, float64(len(shared)) / float64(union)
}

// Undelivered counts the questions waiting to be asked again: their
// command did not exit 0 (or a supervisor died before the answer).
func (s *Supervisor) Undelivered() int { return len(s.pending) }
