package coverage

import "encoding/json"

// Record is what the engine keeps per session (the reference keys it by
// the client's session id; our hooks by the run). It is plain data: the
// caller loads it, hands it in, and saves what comes back when Changed.
type Record struct {
	// Agent is who the session's hooks run as (LASERBRAIN_AGENT,
	// lowercased; "unknown" when unset).
	Agent string `json:"agent"`
	// Goal is the session's ground: the first groundable prompt, else the
	// first check's goal (not after a reset, whose next check grounds it).
	Goal string `json:"goal,omitempty"`
	// WasReset: null until a reset_task (true) or a check grounding the
	// record (false).
	WasReset *bool `json:"was_reset,omitempty"`
	// Steps counts the tool calls and checks since the last reset.
	Steps int `json:"steps"`
	// Checks are the checks since the last reset, oldest first (a kept
	// record lists the last ones; EarlierChecks counts the others).
	Checks []Check `json:"checks,omitempty"`
	// Catches are the failed calls since the last reset (a kept record
	// counts them in EarlierCatches).
	Catches []Catch `json:"catches,omitempty"`
	// Inferred counts the reference's inferred-progress rows (one per
	// tool step, at most 200). Each reads "advancing": the reference's
	// hook builds a fresh observer for every call, so it never sees two.
	Inferred int `json:"inferred,omitempty"`
	// Segments are the tasks reset_task closed, oldest first.
	Segments []Segment `json:"segments,omitempty"`
	// ArmLogged: the session's probe arm has been reported (Decision.Arm),
	// which the reference does once per session.
	ArmLogged bool `json:"arm_logged,omitempty"`
	// EarlierChecks and EarlierCatches count the checks and catches of the
	// task that Kept no longer lists (0 in a record kept whole).
	EarlierChecks  int `json:"earlier_checks,omitempty"`
	EarlierCatches int `json:"earlier_catches,omitempty"`
}

// keptChecks is how many of its last checks a kept record lists: all the
// engine reads of them (the last one's step, run and reading; the last
// two's distances).
const keptChecks = 2

// Kept is r as a run keeps it between hook calls: the engine decides on
// the counts and on the last keptChecks checks alone, so the rows before
// them, the catches and the closed tasks' rows are counted rather than
// listed, and a hook's cost does not grow with the run. (Every check and
// failed call is in the run's events as well.) r itself is not changed.
func (r *Record) Kept() *Record {
	if r == nil {
		return nil
	}
	k := *r
	drop := max(0, len(r.Checks)-keptChecks)
	k.EarlierChecks += drop
	k.Checks = append([]Check(nil), r.Checks[drop:]...) // not r's array: k is the caller's to change
	k.EarlierCatches += len(r.Catches)
	k.Catches = nil
	if len(r.Segments) > 0 {
		k.Segments = make([]Segment, len(r.Segments))
		for i, g := range r.Segments {
			k.Segments[i] = Segment{Goal: g.Goal, Steps: g.Steps,
				EarlierChecks: g.EarlierChecks + len(g.Checks), EarlierCatches: g.EarlierCatches + len(g.Catches)}
		}
	}
	return &k
}

// NumChecks counts the task's checks, listed or not.
func (r *Record) NumChecks() int {
	if r == nil {
		return 0
	}
	return r.EarlierChecks + len(r.Checks)
}

// Check is one check as the session recorded it: the step it was, what
// the agent spelled (the reference's str() of each argument; Distance as
// given) and what the reading said, when the response carried one.
type Check struct {
	Step     int             `json:"step"`
	Drifting bool            `json:"drifting"`
	Goal     string          `json:"goal"`
	Progress string          `json:"progress"`
	Distance json.RawMessage `json:"distance"`
	// Reason is the verdict's reason, "no-reading" when the response had
	// none (a check counts whether or not it was read).
	Reason    string          `json:"reason,omitempty"`
	Phi       json.RawMessage `json:"phi,omitempty"`
	Run       *string         `json:"run,omitempty"`
	RunStep   json.RawMessage `json:"run_step,omitempty"`
	Anchored  json.RawMessage `json:"anchored,omitempty"`
	GoalScore json.RawMessage `json:"goal_score,omitempty"`
	Judgment  json.RawMessage `json:"judgment,omitempty"`
	// Tokens is what the session had spent by then (its transcript).
	Tokens *int `json:"tokens,omitempty"`
}

// Catch is a failed call, joined to the reading that was live: the last
// check's run and step, and how many steps after it the call came.
type Catch struct {
	Step    int             `json:"step"`
	What    string          `json:"what"`
	Run     *string         `json:"run"`
	RunStep json.RawMessage `json:"run_step"`
	Since   *int            `json:"since"`
}

// Segment is a task reset_task closed.
type Segment struct {
	Goal    string  `json:"goal,omitempty"`
	Steps   int     `json:"steps"`
	Checks  []Check `json:"checks"`
	Catches []Catch `json:"catches"`
	// EarlierChecks and EarlierCatches count the rows a kept record no
	// longer lists (Record.Kept).
	EarlierChecks  int `json:"earlier_checks,omitempty"`
	EarlierCatches int `json:"earlier_catches,omitempty"`
}

// Since is how many steps passed since the last check (all of them when
// there was none).
func (r *Record) Since() int {
	if r == nil {
		return 0
	}
	last := 0
	if n := len(r.Checks); n > 0 {
		last = r.Checks[n-1].Step
	}
	return r.Steps - last
}

// Coverage is checks over steps (0 before the first step).
func (r *Record) Coverage() float64 {
	if r == nil || r.Steps == 0 {
		return 0
	}
	return float64(r.NumChecks()) / float64(r.Steps)
}

func (r *Record) clone() *Record {
	if r == nil {
		return nil
	}
	c := *r
	c.Checks = append([]Check(nil), r.Checks...)
	c.Catches = append([]Catch(nil), r.Catches...)
	c.Segments = append([]Segment(nil), r.Segments...)
	return &c
}
