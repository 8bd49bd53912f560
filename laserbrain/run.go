package laserbrain

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Ground is the state a run is measured against: the first grammatical
// state of the run, frozen until a reground.
type Ground struct {
	Goal     string   `json:"goal"`
	Progress string   `json:"progress"`
	Dist     Distance `json:"dist"`
}

// StepInput is one spelled state.
type StepInput struct {
	Goal     string
	Progress string
	Distance Distance
	// ParentGoal, when not blank, is the goal this step's goal serves: a
	// sub-task measured against it can be an excursion instead of drift.
	ParentGoal string
	// UserTurn says the user spoke since the last check: a goal that left
	// the ground is then a new instruction (reground), not drift.
	UserTurn bool
	// Doing, Next and Blocked are free text; when any is given the verdict
	// carries the ceiling marker's reading of them (claims).
	Doing, Next, Blocked string
	// Resumed is the ground goal of a set-aside task the caller went back
	// to for this check (a supervisor's resume); the step records it.
	Resumed string
}

// CheckResult is the verdict of one check, with its evidence.
type CheckResult struct {
	Drifting bool   `json:"drifting"`
	Reason   string `json:"reason"`
	// Phi is Φ rounded to 2 places; decisions used the unrounded value.
	Phi        float64 `json:"phi"`
	Laserscore *string `json:"laserscore"`
	Advice     string  `json:"advice"`
	Why        string  `json:"why"`
	// Anchored is 1.0 when observed work backs this check, 0.5 when not.
	Anchored float64 `json:"anchored"`
	// GoalScore is the goal's overlap with the first goal after the step.
	GoalScore   float64 `json:"goal_score"`
	GroundScore float64 `json:"ground_score"`
	Context     *string `json:"context"`
	// Ground is the text of the goal the run is grounded on ("" before one).
	Ground string `json:"ground"`
	// ParentOverlap is set when a declared parent goal was measured and
	// rejected.
	ParentOverlap *float64 `json:"parent_overlap,omitempty"`
	// Period is the cycle length of an oscillating verdict.
	Period int     `json:"period,omitempty"`
	Claims *Claims `json:"claims,omitempty"`
	Scores Scores  `json:"scores"`
	Run    string  `json:"run,omitempty"`
	Step   int     `json:"step,omitempty"`

	phiExact float64
}

// Scores gathers the verdict's bounded readings.
type Scores struct {
	Goal     float64  `json:"goal"`
	Ground   float64  `json:"ground"` // ground_score to 2 places, as the reference reports it
	Drift    float64  `json:"drift"`
	Evidence float64  `json:"evidence"`
	Language *float64 `json:"language,omitempty"` // the ceiling marker's grounded share
}

// PhiExact is the unrounded Φ the verdict was decided on.
func (v CheckResult) PhiExact() float64 { return v.phiExact }

// The verdict names, from the grammar's table, and the two self-report
// spellings the reference reports. Constants, so no init builds them.
const (
	reasonGrounded      = verdictNameGrounded
	reasonAdvancing     = verdictNameAdvancing
	reasonReground      = verdictNameReground
	reasonExcursion     = verdictNameExcursion
	reasonStalled       = verdictNameStalled
	reasonGoalDrift     = verdictNameGoalDrift
	reasonUngrammatical = verdictNameUngrammatical
	reasonOscillating   = verdictNameOscillating
	reasonSelfStuck     = verdictNameSelfReport + ":" + ProgressStuck
	reasonSelfCircling  = verdictNameSelfReport + ":" + ProgressCircling
)

// verdictOf maps a reported reason to its grammar verdict.
func verdictOf(reason string) (Verdict, bool) {
	for i, n := range verdictNames {
		if reason == n {
			return Verdict(i), true
		}
	}
	if reason == reasonSelfStuck || reason == reasonSelfCircling {
		return VerdictSelfReport, true
	}
	return 0, false
}

// ClassOf returns the grammar class of a reported reason ("self-report:stuck"
// is a self-report); ok is false for a reason that is not a verdict.
func ClassOf(reason string) (c VerdictClass, ok bool) {
	v, ok := verdictOf(reason)
	if !ok {
		return 0, false
	}
	return verdictClasses[v], true
}

// isDriftClass reports whether reason is in the drift class the
// warn-then-interrupt rule keys on: the interrupt and warn-then-interrupt
// verdicts of the grammar.
func isDriftClass(reason string) bool {
	c, ok := ClassOf(reason)
	return ok && (c == ClassInterrupt || c == ClassWarnThenInterrupt)
}

// traceSummary is what the rules read of the run's past verdicts: the
// reference keeps the whole list of underlying reasons; every use of it is
// a count or the last entry, so those are kept instead.
type traceSummary struct {
	Len        int    `json:"len"`
	Last       string `json:"last"` // the last underlying reason (never oscillating)
	GoalDrifts int    `json:"goal_drifts"`
	Regrounds  int    `json:"regrounds"`
	// StallsSinceGround counts stalled verdicts since the current ground.
	StallsSinceGround int `json:"stalls_since_ground"`
}

func (t *traceSummary) add(reason string) {
	t.Len++
	t.Last = reason
	switch reason {
	case reasonGoalDrift:
		t.GoalDrifts++
	case reasonReground:
		t.Regrounds++
	case reasonStalled:
		t.StallsSinceGround++
	}
}

// distHistory is what the rules read of the distances since the ground
// (the reference's dist_hist): the first, how many, the last stallWindow+1,
// and how many steps at the end did not decrease.
type distHistory struct {
	First int   `json:"first"`
	Len   int   `json:"len"`
	Tail  []int `json:"tail"`
	Flat  int   `json:"flat"`
	// FlatRun is the last Flat distances, run-length encoded as
	// [value, count] pairs: they never fall, so there are at most 11.
	FlatRun [][2]int `json:"flat_run,omitempty"`
}

func (h *distHistory) reset() { *h = distHistory{Tail: h.Tail[:0], FlatRun: h.FlatRun[:0]} }

func (h *distHistory) push(d int) {
	switch {
	case h.Len == 0:
		h.First = d
	case d >= h.Tail[len(h.Tail)-1]:
		h.Flat++
		if n := len(h.FlatRun); n > 0 && h.FlatRun[n-1][0] == d {
			h.FlatRun[n-1][1]++
		} else {
			h.FlatRun = append(h.FlatRun, [2]int{d, 1})
		}
	default:
		h.Flat = 0
		h.FlatRun = h.FlatRun[:0]
	}
	h.Len++
	h.Tail = append(h.Tail, d)
	if len(h.Tail) > stallWindow+1 {
		h.Tail = append(h.Tail[:0], h.Tail[1:]...)
	}
}

func (h *distHistory) last() int { return h.Tail[len(h.Tail)-1] }

// stalled: more than W distances and none of the last W improved on the
// one W checks ago.
func (h *distHistory) stalled() bool {
	w := stallWindow
	if h.Len <= w {
		return false
	}
	base := h.Tail[len(h.Tail)-w-1]
	for _, x := range h.Tail[len(h.Tail)-w:] {
		if x < base {
			return false
		}
	}
	return true
}

// StepRecord is one check as the run's history shows it.
type StepRecord struct {
	N          int       `json:"n"`
	At         time.Time `json:"at"`
	Goal       string    `json:"goal"`
	Progress   string    `json:"progress"`
	Distance   Distance  `json:"distance"`
	ParentGoal string    `json:"parent_goal,omitempty"`
	UserTurn   bool      `json:"user_turn,omitempty"`
	Reason     string    `json:"reason"`
	Drifting   bool      `json:"drifting"`
	Phi        float64   `json:"phi"`
	Laserscore *string   `json:"laserscore"`
	Anchored   float64   `json:"anchored"`
	// Advice is what the verdict told the agent.
	Advice string `json:"advice,omitempty"`
	// Underlying is the verdict an oscillating report replaced.
	Underlying string `json:"underlying,omitempty"`
	// Resumed is the set-aside ground this check went back to.
	Resumed string `json:"resumed_ground,omitempty"`
}

// GroundScore is the step's bounded reading of its reported Φ.
func (s StepRecord) GroundScore() float64 { return GroundScore(s.Phi) }

// evidenceMarks is the run's memory of the evidence counters.
type evidenceMarks struct {
	Base         int  `json:"base"`    // ok+fail when the run began: at or below it the machine is dark
	LastOK       int  `json:"last_ok"` // ok at the previous check
	SawAny       bool `json:"saw_any"`
	Checks       int  `json:"checks"`
	Corroborated int  `json:"corroborated"`
}

// runState is everything a run carries between checks, and what a store
// saves.
type runState struct {
	ID            string        `json:"id"`
	Created       time.Time     `json:"created"`
	MaxChecks     int           `json:"max_checks,omitempty"`
	Ground        *Ground       `json:"ground"`
	FirstGoal     []string      `json:"first_goal"`
	FirstGoalText string        `json:"first_goal_text"`
	Dist          distHistory   `json:"dist"`
	Trace         traceSummary  `json:"trace"`
	Trail         []string      `json:"trail"`
	Latch         bool          `json:"latch"`
	GroundAt      int           `json:"ground_at"`
	Backed        []bool        `json:"backed"`
	Evidence      evidenceMarks `json:"evidence"`
	Pending       []Event       `json:"pending,omitempty"`
	LastContext   string        `json:"last_context,omitempty"`
	StepCount     int           `json:"step_count"`
	Last          StepRecord    `json:"last"` // N is 0 before any check
}

// Run is one agent run: its ground, its history and the state the verdict
// rules read. It is not safe for concurrent use; a store serialises access
// across processes.
type Run struct {
	s runState
	// history holds the steps loaded with the run (LoadHistory) and those
	// taken since; the first saved of them are already in storage. It is
	// kept apart from the state so a store can append it instead of
	// rewriting it.
	history  []StepRecord
	saved    int
	contexts ContextStore
	evidence EvidenceSource
	now      func() time.Time
	// memo remembers goals already normalised in this process: agents
	// repeat their goal from check to check.
	memo map[string]goalMemo
}

// goalMemo is a goal's tokens and context id, both immutable once made.
type goalMemo struct {
	toks []string
	cid  *string
}

const memoMax = 256

// goal returns the tokens and context id of a (trimmed) goal.
func (r *Run) goal(text string) ([]string, *string) {
	if m, ok := r.memo[text]; ok {
		return m.toks, m.cid
	}
	toks := Norm(text)
	var cid *string
	if id, ok := contextID(toks); ok {
		cid = &id
	}
	if r.memo == nil || len(r.memo) >= memoMax {
		// No size hint: most runs check a few goals, and a fleet holds
		// thousands of runs.
		r.memo = map[string]goalMemo{}
	}
	r.memo[text] = goalMemo{toks, cid}
	return toks, cid
}

// RunOptions configures a new run.
type RunOptions struct {
	// ID names the run; empty means a fresh random 12-hex id.
	ID string
	// Contexts records every check by context id and feeds the judgment;
	// nil means a private in-memory store.
	Contexts ContextStore
	// Evidence is read at every check; nil means none (every check dark).
	Evidence EvidenceSource
	// MaxChecks is a check budget for the judgment (0: none).
	MaxChecks int
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// NewRun starts a run with no ground.
func NewRun(opts RunOptions) *Run {
	r := &Run{}
	r.attach(opts.Contexts, opts.Evidence, opts.Now)
	id := opts.ID
	if id == "" {
		id = NewRunID()
	}
	r.s = runState{ID: id, Created: r.now(), MaxChecks: opts.MaxChecks}
	if ev, ok := r.readEvidence(); ok {
		r.s.Evidence.Base = ev.OK + ev.Fail
		r.s.Evidence.LastOK = ev.OK
	}
	return r
}

// NewRunID returns 12 random hex digits.
func NewRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// DecodeRun reads the state a store saved of run id (its JSON) and
// attaches the run to contexts and evidence (as Attach): a state that does
// not read, or holds another run, is an error naming id.
func DecodeRun(id string, state []byte, contexts ContextStore, evidence EvidenceSource) (*Run, error) {
	r := &Run{}
	if err := json.Unmarshal(state, r); err != nil {
		return nil, fmt.Errorf("run %s: the saved state is damaged: %w", id, err)
	}
	if r.ID() != id {
		return nil, fmt.Errorf("run %s: the saved state holds run %q", id, r.ID())
	}
	r.attach(contexts, evidence, nil)
	return r, nil
}

// Attach connects a run decoded from storage to its context store, its
// evidence and a clock (nil values as in RunOptions).
func (r *Run) Attach(contexts ContextStore, evidence EvidenceSource, now func() time.Time) {
	r.attach(contexts, evidence, now)
}

func (r *Run) attach(contexts ContextStore, evidence EvidenceSource, now func() time.Time) {
	if contexts == nil {
		contexts = NewMemContexts()
	}
	if now == nil {
		now = time.Now
	}
	r.contexts, r.evidence, r.now = contexts, evidence, now
}

// MarshalJSON writes the run's state, without its history.
func (r *Run) MarshalJSON() ([]byte, error) { return json.Marshal(&r.s) }

// UnmarshalJSON reads a run's state; Attach it before stepping it.
func (r *Run) UnmarshalJSON(data []byte) error {
	var s runState
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	if s.ID == "" {
		return fmt.Errorf("run state without an id")
	}
	r.s = s
	r.history, r.saved = nil, 0
	if r.now == nil {
		r.attach(nil, nil, nil)
	}
	return nil
}

// ID is the run's id.
func (r *Run) ID() string { return r.s.ID }

// Steps is the run's history, oldest first: the steps loaded with it (see
// LoadHistory) and every step taken since.
func (r *Run) Steps() []StepRecord { return r.history }

// StepCount is how many checks the run has had.
func (r *Run) StepCount() int { return r.s.StepCount }

// LoadHistory attaches the saved history of a run read from storage.
func (r *Run) LoadHistory(steps []StepRecord) {
	r.history = append(steps[:len(steps):len(steps)], r.history[r.saved:]...)
	r.saved = len(steps)
}

// UnsavedHistory is the steps taken since the history was last saved.
func (r *Run) UnsavedHistory() []StepRecord { return r.history[r.saved:] }

// HistorySaved records that UnsavedHistory has been written.
func (r *Run) HistorySaved() { r.saved = len(r.history) }

// ReleaseSavedHistory forgets the saved steps, so a long stream of checks
// does not hold its whole history in memory; Steps then starts after them.
func (r *Run) ReleaseSavedHistory() {
	if r.saved == 0 {
		return
	}
	n := copy(r.history, r.history[r.saved:])
	clear(r.history[n:])
	r.history, r.saved = r.history[:n], 0
}

// GroundGoal is the text of the current ground goal ("" before a ground).
func (r *Run) GroundGoal() string { return r.s.FirstGoalText }

// LastVerdict reports the last check's verdict as it was returned (an
// oscillating report included); ok is false before any check.
func (r *Run) LastVerdict() (drifting bool, reason string, ok bool) {
	if r.s.Last.N == 0 {
		return false, "", false
	}
	return r.s.Last.Drifting, r.s.Last.Reason, true
}

// Saw hands in events observed since the last check. The next check is
// corroborated when at least one of them did not fail (an unknown outcome
// corroborates: something observable happened), and is then decided by
// these events instead of the machine's evidence counters. Seeing any
// event marks the run as observed at once, as the reference does, so the
// judgment can tell "never instrumented" from "observed and unbacked".
func (r *Run) Saw(events ...Event) {
	if len(events) == 0 {
		return
	}
	r.s.Pending = append(r.s.Pending, events...)
	r.s.Evidence.SawAny = true
}

// Corroboration is the share of checks that observed work backed, 3 places.
func (r *Run) Corroboration() float64 {
	if r.s.Evidence.Checks == 0 {
		return 0
	}
	return round3(float64(r.s.Evidence.Corroborated) / float64(r.s.Evidence.Checks))
}

func (r *Run) readEvidence() (Evidence, bool) {
	if r.evidence == nil {
		return Evidence{}, false
	}
	return r.evidence.Evidence()
}

// anchor decides whether observed work backs this check, and rolls the
// run's evidence marks forward.
func (r *Run) anchor() (corroborated bool) {
	m := &r.s.Evidence
	m.Checks++
	if len(r.s.Pending) > 0 {
		for _, ev := range r.s.Pending {
			if !ev.OK.Failed() {
				corroborated = true
				break
			}
		}
		clear(r.s.Pending)
		r.s.Pending = r.s.Pending[:0]
	} else if ev, ok := r.readEvidence(); ok && ev.OK+ev.Fail > m.Base {
		m.SawAny = true
		corroborated = ev.OK > m.LastOK
		m.LastOK = ev.OK
	}
	if corroborated {
		m.Corroborated++
	}
	return corroborated
}
