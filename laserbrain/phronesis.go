package laserbrain

import "fmt"

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
			Because: "no grammatical check has set a ground yet, so there is nothing to judge the run against",
			Counsel: "spell the goal, progress and distance once to set a ground"}
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
	repetition, priorRuns := 0, 0
	var ceiling *int
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

	m := s.Evidence
	j := Judgment{}
	budgetSpent := s.MaxChecks > 0 && here >= s.MaxChecks
	switch {
	case budgetSpent:
		j.Verdict = JudgmentOverBudget
		j.Because = fmt.Sprintf("%d checks on this ground reached the budget of %d", here, s.MaxChecks)
		j.Counsel = "stop and report where the run stands"
	case judged && here >= abandonAfter && closed <= 0:
		j.Verdict = JudgmentAbandon
		j.Because = fmt.Sprintf("%d checks on this ground and the distance has not closed (%s)", here, closedWords(started, now))
		j.Counsel = "stop; this approach is not converging — report what you learned and ask how to proceed"
	case judged && priorRuns >= abandonPriorRuns && closed <= 0:
		j.Verdict = JudgmentAbandon
		j.Because = fmt.Sprintf("%d earlier runs worked this task and this one has not closed any distance either", priorRuns)
		j.Counsel = "stop; the same attempt is being repeated across runs — change the approach or ask"
	case judged && m.SawAny && m.Corroborated == 0 && here >= unbackedAfter && closed > 0:
		j.Verdict = JudgmentUnbacked
		j.Because = fmt.Sprintf("distance closed by %d over %d checks, but no check was backed by successful observed work", closed, here)
		j.Counsel = "verify the progress you reported: run something that shows it"
	case judged && goalDrifts >= wrongProblemAt && goalDrifts > regrounds && pace <= 0:
		j.Verdict = JudgmentWrongProblem
		j.Because = fmt.Sprintf("%d goal drifts against %d regrounds, and no distance closed", goalDrifts, regrounds)
		if m.Corroborated > 0 {
			j.Counsel = "you are not solving what you set out to solve — return to the ground goal or ask for a new one"
		} else {
			j.Counsel = "check the ground before acting: it may not be the task you were given"
		}
	case oscillations > 0 && pace <= 0:
		j.Verdict = JudgmentWrongProblem
		j.Because = "the run keeps cycling between goals and no distance closed"
		j.Counsel = "re-ground explicitly instead of returning again"
	case judged && repetition >= repeatingAt && pace <= 0:
		j.Verdict = JudgmentRepeating
		j.Because = fmt.Sprintf("the same state has been spelled %d times for this task and no distance closed", repetition)
		j.Counsel = "stop repeating the same step; try something different or ask"
	case now != nil && *now >= narrowFrom && flat >= stallWindow:
		j.Verdict = JudgmentNarrow
		j.Because = fmt.Sprintf("distance %d has not fallen for %d checks", *now, flat)
		j.Counsel = "narrow the task: pick the smallest piece that brings the distance down"
	case now != nil && *now <= finishWithin && closed > 0:
		j.Verdict = JudgmentFinish
		j.Because = fmt.Sprintf("distance closed from %d to %d", *started, *now)
		j.Counsel = "finish: verify the result and stop"
	case judged && stalls > 0 && pace <= 0 && now != nil && *now >= narrowStallsFrom:
		j.Verdict = JudgmentNarrow
		j.Because = fmt.Sprintf("%d stalls on this ground, no distance closed, distance still %d", stalls, *now)
		j.Counsel = "narrow the task: pick the smallest piece that brings the distance down"
	default:
		j.Verdict = JudgmentContinue
		j.Because = fmt.Sprintf("%d checks on this ground, %s", here, closedWords(started, now))
		j.Counsel = "continue"
	}

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

// control decides from evidence alone whether the run may go on.
func (r *Run) control(priorRuns, goalDrifts, regrounds, here int) Control {
	s := &r.s
	m := s.Evidence
	c := Control{Observed: m.SawAny, Reads: ControlReads{
		Checks: s.Trace.Len, ObservedAny: m.SawAny, Corroborated: m.Corroborated,
		PriorSessions: priorRuns, GoalDrifts: goalDrifts, Regrounds: regrounds,
	}}
	if s.MaxChecks > 0 {
		b := s.MaxChecks
		c.Reads.Budget = &b
	}
	switch {
	case s.MaxChecks > 0 && s.Trace.Len >= s.MaxChecks:
		c.Decision, c.Because = ControlStop, fmt.Sprintf("the budget of %d checks is spent", s.MaxChecks)
	case priorRuns >= stopPriorRuns:
		c.Decision, c.Because = ControlStop, fmt.Sprintf("%d earlier runs have worked this task", priorRuns)
	case goalDrifts >= wrongProblemAt && goalDrifts > regrounds:
		c.Decision, c.Because = ControlReground, fmt.Sprintf("%d goal drifts against %d regrounds", goalDrifts, regrounds)
	case m.SawAny && m.Corroborated == 0 && here >= unbackedAfter:
		c.Decision, c.Because = ControlVerify, fmt.Sprintf("work was observed but none of %d checks was backed by a success", here)
	case m.SawAny:
		c.Decision, c.Because = ControlProceed, "observed work backs the run"
	default:
		c.Decision, c.Because = ControlProceed, "no observed work to judge by; proceeding on the agent's own account"
	}
	return c
}

func closedWords(started, now *int) string {
	if started == nil || now == nil {
		return "no distance reported"
	}
	return fmt.Sprintf("distance %d → %d", *started, *now)
}
