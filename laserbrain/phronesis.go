package laserbrain

import (
	"fmt"
	"strconv"
	"strings"
)

// The whole-run judgment's verdicts.
const (
	JudgmentUngrounded   = "ungrounded"
	JudgmentOverBudget   = "over-budget"
	JudgmentAbandon      = "abandon"
	JudgmentUnbacked     = "unbacked"
	JudgmentWrongProblem = "wrong-problem"
	JudgmentRepeating    = "repeating"
	JudgmentNarrow       = "narrow"
	JudgmentFinish       = "finish"
	JudgmentContinue     = "continue"
)

// The control decisions.
const (
	ControlStop     = "stop"
	ControlReground = "reground"
	ControlVerify   = "verify"
	ControlProceed  = "proceed"
)

// The judgment's thresholds (the reference's phronesis; not grammar values).
const (
	judgedAfter      = 3  // checks on the current ground before the run is judged at all
	abandonAfter     = 12 // checks without closing any distance
	abandonPriorRuns = 2  // earlier runs on the same task, none closer
	unbackedAfter    = 5  // checks with evidence but no corroboration
	wrongProblemAt   = 3  // goal drifts (more than regrounds)
	repeatingAt      = 3  // one spelling of the task this many times
	narrowFrom       = 6  // distance at or above which a flat run should narrow
	finishWithin     = 2  // distance at or below which a closing run should finish
	narrowStallsFrom = 4  // distance at or above which stalls call for narrowing
	stopPriorRuns    = 3  // earlier runs on the same task before control says stop
)

// Judgment is the whole-run judgment (phronesis): not whether this step
// drifted, but whether the run as a whole should go on.
type Judgment struct {
	Verdict string          `json:"verdict"`
	Scores  *JudgmentScores `json:"scores,omitempty"`
	Because string          `json:"because"`
	Counsel string          `json:"counsel"`
	Control *Control        `json:"control,omitempty"`
	Context *string         `json:"context,omitempty"`
}

// JudgmentScores are the readings the judgment was made from.
type JudgmentScores struct {
	Goal       float64 `json:"goal"`
	Closure    float64 `json:"closure"`
	Pace       float64 `json:"pace"`
	Evidence   float64 `json:"evidence"`
	Recurrence int     `json:"recurrence"`
	Repetition int     `json:"repetition"`
	Ceiling    *int    `json:"ceiling"`
}

// Control is the decision taken from evidence alone.
type Control struct {
	Decision string       `json:"decision"`
	Because  string       `json:"because"`
	Observed bool         `json:"observed"`
	Reads    ControlReads `json:"reads"`
}

// ControlReads are the numbers the control decision read.
type ControlReads struct {
	Checks        int  `json:"checks"`
	Budget        *int `json:"budget"`
	ObservedAny   bool `json:"observed_any"`
	Corroborated  int  `json:"corroborated"`
	PriorSessions int  `json:"prior_sessions"`
	GoalDrifts    int  `json:"goal_drifts"`
	Regrounds     int  `json:"regrounds"`
}

// Judgment returns the whole-run verdict, e.g. "continue", "abandon",
// "wrong-problem", "repeating" or "ungrounded".
func (r *Run) Judgment() string { return r.Phronesis().Verdict }

// Phronesis judges the run as a whole. The first matching rule wins.
func (r *Run) Phronesis() Judgment {
	s := &r.s
	if s.Ground == nil || s.Trace.Len == 0 {
		return Judgment{Verdict: JudgmentUngrounded,
			Because: "No ground state — nothing has been measured yet.",
			Counsel: "Ground a goal first; judgment needs a trace to judge."}
	}
	here := max(1, s.Trace.Len-s.GroundAt)
	var started, now *int
	if s.Dist.Len > 0 {
		first, last := s.Dist.First, s.Dist.last()
		started, now = &first, &last
	}
	closed := 0
	if started != nil && now != nil {
		closed = *started - *now
	}
	pace := float64(closed) / float64(here)
	judged := here >= judgedAfter

	goalDrifts, regrounds, stalls := s.Trace.GoalDrifts, s.Trace.Regrounds, s.Trace.StallsSinceGround
	// The reference also counts oscillating verdicts in its trace, but the
	// trace holds underlying reasons, so the count is always 0 (rule 6
	// below can never fire, in the reference as here).
	oscillations := 0
	flat := s.Dist.Flat

	// The context of the most recent goal spelled, else the ground's.
	groundCID, hasGroundCID := contextID(s.FirstGoal)
	cid := s.LastContext
	if cid == "" && hasGroundCID {
		cid = groundCID
	}
	repetition, priorRuns, ceiling := r.contextHistory(cid)
	m := s.Evidence
	j := phronesisFacts{here: here, started: started, now: now, closed: closed, pace: pace, judged: judged,
		goalDrifts: goalDrifts, regrounds: regrounds, stalls: stalls, oscillations: oscillations, flat: flat,
		repetition: repetition, priorRuns: priorRuns, ceiling: ceiling, evidence: m, maxChecks: s.MaxChecks, flatRun: s.Dist.FlatRun}.verdict()
	closure := 0.0
	switch {
	case started != nil && *started != 0:
		closure = round2(float64(closed) / float64(*started))
	case now != nil && *now == 0:
		closure = 1
	}
	evidence := 0.0
	if m.Checks > 0 {
		evidence = round2(float64(m.Corroborated) / float64(m.Checks))
	}
	j.Scores = &JudgmentScores{Goal: 1, Closure: closure, Pace: round2(pace), Evidence: evidence,
		Recurrence: priorRuns, Repetition: repetition, Ceiling: ceiling}
	c := r.control(priorRuns, goalDrifts, regrounds, here)
	j.Control = &c
	if hasGroundCID {
		j.Context = &groundCID
	}
	return j
}

// contextHistory is what earlier spellings of context cid say: the most
// times one state was written in it, how many other sessions opened it,
// and the best distance ever reached in it (nil when unknown).
func (r *Run) contextHistory(cid string) (repetition, priorRuns int, ceiling *int) {
	s := &r.s
	if cid != "" {
		if e, ok, err := r.contexts.Context(cid); err == nil && ok {
			for _, n := range e.Spellings {
				repetition = max(repetition, n)
			}
			c := e.BestDistance
			ceiling = &c
			priorRuns = e.SessionCount
			for _, id := range e.Sessions {
				if id == s.ID {
					priorRuns--
					break
				}
			}
		}
	}
	return repetition, priorRuns, ceiling
}

// phronesisFacts are the numbers the whole-run verdict is decided on.
type phronesisFacts struct {
	here                          int  // checks on this ground
	started, now                  *int // the first and last distance, nil without one
	closed                        int
	pace                          float64
	judged                        bool
	goalDrifts, regrounds, stalls int
	oscillations, flat            int
	repetition, priorRuns         int
	ceiling                       *int
	evidence                      evidenceMarks
	maxChecks                     int
	flatRun                       [][2]int
}

// verdict is the first rule that matches, with the reference's words.
func (f phronesisFacts) verdict() Judgment {
	j := Judgment{}
	m := f.evidence
	here, started, now, closed, pace, judged := f.here, f.started, f.now, f.closed, f.pace, f.judged
	goalDrifts, regrounds, stalls := f.goalDrifts, f.regrounds, f.stalls
	// The texts are the reference's, word for word; None prints as None.
	startedW, nowW, ceilingW := optInt(started), optInt(now), optInt(f.ceiling)
	switch {
	case f.maxChecks > 0 && here >= f.maxChecks:
		j.Verdict = JudgmentOverBudget
		j.Because = fmt.Sprintf("%d checks against a budget of %d. This is a count, not an assessment of the work.", here, f.maxChecks)
		j.Counsel = "The budget you set is spent. Stop, or raise it deliberately — but decide that rather than drifting past it."
	case judged && here >= abandonAfter && closed <= 0:
		j.Verdict = JudgmentAbandon
		j.Because = fmt.Sprintf("%d checks. Distance began at %s and stands at %s — it has never once improved. Nothing tried so far has moved this.", here, startedW, nowW)
		j.Counsel = "Stop. Either the approach is wrong or the goal is not reachable as stated. Say plainly what is blocking it rather than taking a thirteenth run at it."
	case judged && f.priorRuns >= abandonPriorRuns && closed <= 0:
		j.Verdict = JudgmentAbandon
		j.Because = fmt.Sprintf("This context has been opened in %d earlier sessions and closed in none. Best distance ever reached is %s; this run has closed %d.", f.priorRuns, ceilingW, closed)
		j.Counsel = "A problem that resists three separate attempts is usually the wrong problem. Change the approach or hand it back before spending another session."
	case judged && m.SawAny && m.Corroborated == 0 && here >= unbackedAfter && closed > 0:
		j.Verdict = JudgmentUnbacked
		j.Because = fmt.Sprintf("Distance is reported down %d over %d checks, and not one of them was backed by observed work — %d corroborated of %d.", closed, here, m.Corroborated, here)
		j.Counsel = "Run something and read the output before reporting progress again. Half of this score is your own account of yourself, and nothing has agreed with it yet."
	case judged && goalDrifts >= wrongProblemAt && goalDrifts > regrounds && pace <= 0:
		// Hard counsel only with corroboration: without it the pattern is
		// as consistent with the ground having moved under the agent.
		j.Verdict = JudgmentWrongProblem
		j.Because = fmt.Sprintf("The goal has failed its overlap check %d times against only %d legitimate re-grounds. The subject keeps moving while the ground stays put.", goalDrifts, regrounds)
		if m.Corroborated > 0 {
			j.Counsel = "You are not solving what you set out to solve. Either re-ground to the goal you actually have now, or return to the original and finish it."
		} else {
			j.Because += fmt.Sprintf(" Nothing independent has agreed with any check in this run (%d corroborated), so this pattern is equally consistent with the ground having moved underneath you.", m.Corroborated)
			j.Counsel = "Check the ground before acting on this. Compare the goal you are passing against the one this run started with — if they are the same, this reading is the thing that is wrong, not your work. If they differ, re-ground to the goal you actually have."
		}
	case f.oscillations > 0 && pace <= 0:
		j.Verdict = JudgmentWrongProblem
		j.Because = "A repeating cycle was detected and the distance is not falling — you have returned to the same place after being told to return."
		j.Counsel = "Returning again will land you here a third time. Change the approach, not the position."
	case judged && f.repetition >= repeatingAt && pace <= 0:
		j.Verdict = JudgmentRepeating
		j.Because = fmt.Sprintf("The identical state has been written %d times in this context. Goal, progress and distance are all unchanged.", f.repetition)
		j.Counsel = "Not a slow patch — the same patch. Change what you are doing, or say plainly what is blocking it. Restating the position will not move it."
	case now != nil && *now >= narrowFrom && f.flat >= stallWindow:
		j.Verdict = JudgmentNarrow
		j.Because = fmt.Sprintf("Distance has sat at %s for %d checks without falling, and %d is still far from done.", flatWords(f.flatRun), f.flat, *now)
		j.Counsel = "The goal is too large to close in one move. Name the smallest piece that would genuinely reduce the distance and make that the goal — and pass the goal you have now as parent_goal, so narrowing reads as a sub-task rather than as drift."
	case now != nil && *now <= finishWithin && closed > 0:
		j.Verdict = JudgmentFinish
		j.Because = fmt.Sprintf("Distance is %d, down from %s over %d checks.", *now, startedW, here)
		j.Counsel = "Close it out. Do not add scope, refactor, or polish — finish what was asked and stop."
	case judged && stalls > 0 && pace <= 0 && now != nil && *now >= narrowStallsFrom:
		j.Verdict = JudgmentNarrow
		plural := ""
		if stalls > 1 {
			plural = "s"
		}
		j.Because = fmt.Sprintf("%d stall%s recorded and net distance closed is %d over %d checks, still at %d.", stalls, plural, closed, here, *now)
		j.Counsel = "Motion without progress. Pick one concrete sub-result you can actually finish, and make that the goal."
	default:
		j.Verdict = JudgmentContinue
		// The goal score of the ground against itself: 1.0.
		j.Because = fmt.Sprintf("Distance %s → %s over %d checks (%s/check), goal held at 1.0.", startedW, nowW, here, f2(pace))
		if pace > 0 {
			j.Counsel = "Working. Keep the goal fixed and keep going."
		} else {
			j.Counsel = "Holding ground but not closing yet. If the next two checks do not move the distance, narrow the goal."
		}
	}
	return j
}

// control decides from evidence alone whether the run may go on: only
// what the agent cannot type its way out of (counts, observed work,
// earlier sessions, the frozen ground), over the checks on this ground.
func (r *Run) control(priorRuns, goalDrifts, regrounds, here int) Control {
	s := &r.s
	m := s.Evidence
	c := Control{Observed: m.SawAny, Reads: ControlReads{
		Checks: here, ObservedAny: m.SawAny, Corroborated: m.Corroborated,
		PriorSessions: priorRuns, GoalDrifts: goalDrifts, Regrounds: regrounds,
	}}
	if s.MaxChecks > 0 {
		b := s.MaxChecks
		c.Reads.Budget = &b
	}
	switch {
	case s.MaxChecks > 0 && here >= s.MaxChecks:
		c.Decision = ControlStop
		c.Because = fmt.Sprintf("%d checks against a budget of %d. A count, not an assessment.", here, s.MaxChecks)
	case priorRuns >= stopPriorRuns:
		c.Decision = ControlStop
		c.Because = fmt.Sprintf("This context has been opened in %d earlier sessions and finished in none. The current run's own account of itself was not consulted.", priorRuns)
	case goalDrifts >= wrongProblemAt && goalDrifts > regrounds:
		c.Decision = ControlReground
		c.Because = fmt.Sprintf("The goal failed its overlap check %d times against %d declared re-grounds, measured against the frozen ground. This is not a judgement that the work is worthless — it is that nobody has said what the work now is.", goalDrifts, regrounds)
	case m.SawAny && m.Corroborated == 0 && here >= unbackedAfter:
		c.Decision = ControlVerify
		c.Because = fmt.Sprintf("%d checks, work was observed, and not one check was corroborated by it.", here)
	case !m.SawAny:
		c.Decision = ControlProceed
		c.Because = fmt.Sprintf("%d checks and no reason to stop — but nothing has been recorded through saw(), so this read the count and nothing else. Treat it as the absence of a signal, not as an all-clear.", here)
	default:
		c.Decision = ControlProceed
		c.Because = fmt.Sprintf("%d checks, %d corroborated by observed work. No count or record says stop.", here, m.Corroborated)
	}
	return c
}

// optInt prints a number the reference may hold as None.
func optInt(p *int) string {
	if p == nil {
		return "None"
	}
	return strconv.Itoa(*p)
}

// flatWords lists the flat distances, "5, 5, 6".
func flatWords(run [][2]int) string {
	var b strings.Builder
	for _, vc := range run {
		for k := 0; k < vc[1]; k++ {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(vc[0]))
		}
	}
	return b.String()
}
