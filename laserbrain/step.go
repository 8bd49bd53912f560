package laserbrain

import (
	"fmt"
	"strconv"
	"strings"
)

// outcome is what the rules decided before the emitter runs.
type outcome struct {
	reason        string
	drifting      bool
	phi           float64 // unrounded; 0 where the verdict reports none
	advice        string
	why           string
	parentOverlap *float64
}

// Step checks one spelled state against the run's ground and returns the
// verdict. The rules are tested in the reference's order, first match wins:
// ungrammatical, grounded, self-report, reground / excursion / goal-drift,
// advancing (distance unknown), stalled (unless observed work vetoes it),
// advancing; then the cycle detector may report oscillating instead.
//
// The error reports a failure to record the step in the context store; the
// verdict is complete either way.
func (r *Run) Step(in StepInput) (CheckResult, error) {
	corroborated := r.anchor()
	s := &r.s
	// The warn-then-interrupt rule keys on the previous reason's class, not
	// on whether the previous check interrupted.
	prev := s.Trace.Len > 0 && isDriftClass(s.Trace.Last)

	goal := pyStrip(in.Goal)
	var toks []string
	var cid *string
	if goal != "" {
		toks, cid = r.goal(goal)
	}
	d := in.Distance
	if d.Known {
		d.Value = clampDist(d.Value)
	}
	grammatical := goal != "" && isProgress(in.Progress)
	var ls *string
	if grammatical {
		hasParent := pyStrip(in.ParentGoal) != ""
		var parent []string
		if hasParent {
			parent, _ = r.goal(in.ParentGoal)
		}
		l := laserscore(toks, in.Progress, d, hasParent, parent)
		ls = &l
	}

	var o outcome
	if grammatical {
		o = r.decide(in, goal, toks, d, prev, corroborated)
	} else {
		o = outcome{reason: reasonUngrammatical, drifting: true,
			advice: "You cannot spell a clear goal and a valid progress. Return to ground."}
		if goal == "" {
			o.why = "the goal is empty"
		} else {
			o.why = fmt.Sprintf("progress %q is not one of %s", in.Progress, strings.Join(progressEnum[:], ", "))
		}
	}
	return r.emit(in, toks, cid, d, ls, o, corroborated)
}

// decide applies the verdict rules to a grammatical state.
func (r *Run) decide(in StepInput, goal string, toks []string, d Distance, prev, corroborated bool) outcome {
	s := &r.s
	if s.Ground == nil {
		r.reground(goal, in.Progress, toks, d)
		return outcome{reason: reasonGrounded,
			advice: "Ground state set — continue, and check each step.",
			why:    fmt.Sprintf("the ground is now goal %q, progress %s, distance %s", goal, in.Progress, distanceWords(d))}
	}
	p := phi(toks, s.FirstGoal, in.Progress, d, s.Ground)

	// Self-report is tested before goal overlap: a brand-new goal reported
	// stuck is a self-report, not goal drift.
	if (in.Progress == ProgressStuck || in.Progress == ProgressCircling) && p > selfReportMin {
		reason := reasonSelfStuck
		if in.Progress == ProgressCircling {
			reason = reasonSelfCircling
		}
		o := outcome{reason: reason, drifting: prev, phi: p,
			why: "you reported " + in.Progress + " and Φ=" + f2(p) + " is above the self-report floor " + f2(selfReportMin)}
		if prev {
			o.advice = "You reported " + in.Progress + " and have moved from ground. Return to your goal."
			o.why += "; the previous check was already a drift, so this one interrupts"
		} else {
			o.advice = "You reported " + in.Progress + ". If it holds next step, return to ground."
		}
		return o
	}

	anchor := Overlap(toks, s.FirstGoal)
	if anchor < goalMin {
		if in.UserTurn {
			r.reground(goal, in.Progress, toks, d)
			return outcome{reason: reasonReground,
				advice: "New instruction — ground reset to the goal you just stated.",
				why:    fmt.Sprintf("overlap %.2f with the old ground is below %.2f and the user spoke since the last check, so this is a new instruction; the ground is now %q", anchor, goalMin, goal)}
		}
		var rejected *float64
		if pyStrip(in.ParentGoal) != "" {
			pAnchor := Overlap(Norm(in.ParentGoal), s.FirstGoal)
			if pAnchor >= goalMin {
				return outcome{reason: reasonExcursion, phi: p,
					advice: fmt.Sprintf("On a sub-task (overlap %.2f) that still serves your ground goal (parent overlap %.2f). Not drift — but the parent is what you owe.", anchor, pAnchor),
					why:    fmt.Sprintf("overlap %.2f with the ground is below %.2f, but the declared parent overlaps it %.2f, so this is a branch of the ground task", anchor, goalMin, pAnchor)}
			}
			po := round2(pAnchor)
			rejected = &po
		}
		o := outcome{reason: reasonGoalDrift, drifting: true, phi: p, parentOverlap: rejected,
			advice: "Your goal no longer matches the one you started with (overlap " + f2(anchor) + "). If the user redirected you, reset. If this is a sub-task, pass parent_goal. Otherwise return to the goal you started with.",
			why:    "overlap " + f2(anchor) + " with the first goal " + strconv.Quote(s.FirstGoalText) + " is below " + f2(goalMin)}
		if rejected != nil {
			o.advice += fmt.Sprintf(" The parent goal you declared was measured too (overlap %.2f) and does not serve the ground either.", *rejected)
			o.why += fmt.Sprintf("; the declared parent overlaps it only %.2f", *rejected)
		}
		return o
	}

	if !d.Known {
		return outcome{reason: reasonAdvancing, phi: p,
			advice: "On track (Φ=" + f2(p) + "; distance unknown, so Φ is a lower bound). Continue.",
			why:    "no distance given, so the stall detector is off and the distance term counts 0"}
	}
	s.Dist.push(d.Value)
	if s.Dist.stalled() {
		if vetoed(s.Backed) {
			return outcome{reason: reasonAdvancing, phi: p,
				advice: "On track (Φ=" + f2(p) + "). Continue.",
				why:    fmt.Sprintf("distance has not fallen for %d checks, but observed work backed each of them, so it is execution, not a stall", stallWindow)}
		}
		o := outcome{reason: reasonStalled, drifting: prev, phi: p,
			why: "distance has not fallen below " + strconv.Itoa(s.Dist.Tail[len(s.Dist.Tail)-stallWindow-1]) + " in the last " + strconv.Itoa(stallWindow) + " checks"}
		if prev {
			o.advice = "Distance stopped falling and you were already off ground — return."
		} else {
			o.advice = "Distance isn't falling. If it holds, return."
		}
		return o
	}
	// The common verdict: both texts from one buffer, one allocation.
	var buf [96]byte
	b := append(buf[:0], "On track (Φ="...)
	b = strconv.AppendFloat(b, p, 'f', 2, 64)
	b = append(b, "). Continue."...)
	cut := len(b)
	b = append(b, "goal overlap "...)
	b = strconv.AppendFloat(b, anchor, 'f', 2, 64)
	b = append(b, ", Φ="...)
	b = strconv.AppendFloat(b, p, 'f', 2, 64)
	texts := string(b)
	return outcome{reason: reasonAdvancing, phi: p, advice: texts[:cut], why: texts[cut:]}
}

// vetoed: observed work backed each of the W most recent stored checks
// (this one is stored after the decision, so it is not among them).
func vetoed(backed []bool) bool {
	if len(backed) < stallWindow {
		return false
	}
	for _, b := range backed[len(backed)-stallWindow:] {
		if !b {
			return false
		}
	}
	return true
}

// reground (re)sets the ground to this state.
func (r *Run) reground(goal, progress string, toks []string, d Distance) {
	s := &r.s
	s.Ground = &Ground{Goal: goal, Progress: progress, Dist: d}
	s.FirstGoal = toks
	s.FirstGoalText = goal
	s.Dist.reset()
	if d.Known {
		s.Dist.push(d.Value)
	}
	s.GroundAt = s.Trace.Len
	s.Trace.StallsSinceGround = 0
}

func distanceWords(d Distance) string {
	if !d.Known {
		return "unknown"
	}
	return d.String()
}

// emit is the one exit every check takes: remember the underlying verdict,
// extend the ground trail, record the context, run the cycle detector, and
// build the verdict.
func (r *Run) emit(in StepInput, toks []string, cid *string, d Distance, ls *string, o outcome, corroborated bool) (CheckResult, error) {
	s := &r.s
	now := r.now()
	s.Trace.add(o.reason)
	// The veto reads the last stallWindow flags and the cycle detector the
	// last trailKeep spellings: keep a little more than that, not the run.
	s.Backed = keepLast(append(s.Backed, corroborated), stallWindow)
	s.Trail = keepLast(append(s.Trail, spellingOf(toks, ls)), trailKeep)

	var recErr error
	if cid != nil {
		step := ContextStep{ID: *cid, Tokens: toks, At: now, Distance: d, Reason: o.reason, Run: s.ID, N: s.StepCount + 1}
		if ls != nil {
			step.Laserscore = *ls
		}
		recErr = r.contexts.RecordStep(step)
		s.LastContext = *cid
	}

	v := CheckResult{
		Drifting:      o.drifting,
		Reason:        o.reason,
		Phi:           round2(o.phi),
		Laserscore:    ls,
		Advice:        o.advice,
		Why:           o.why,
		Anchored:      anchoredUnanchored,
		GoalScore:     1,
		Ground:        s.FirstGoalText,
		ParentOverlap: o.parentOverlap,
		Run:           s.ID,
		phiExact:      o.phi,
	}
	if corroborated {
		v.Anchored = anchoredCorroborated
	}
	if len(s.FirstGoal) > 0 {
		v.GoalScore = round2(Overlap(toks, s.FirstGoal))
	}
	v.Context = cid

	underlying := ""
	if p := period(s.Trail); p == 0 {
		s.Latch = false
	} else if !s.Latch {
		// Fire once per contiguous stretch of repetition; the trace keeps
		// the underlying reason.
		s.Latch = true
		underlying = v.Reason
		v.Reason, v.Drifting, v.Period = reasonOscillating, true, p
		v.Advice = fmt.Sprintf("You have returned to the same goals in a repeating order with period %d — you have been told to return and have come back to the same place. Re-ground explicitly instead of returning again.", p)
		v.Why = fmt.Sprintf("the last %d ground spellings repeat with period %d (the check itself read %s)", max(cycleNeedFloor, cycleRepeats*p), p, underlying)
		v.GoalScore, v.Context = 1, nil
	}

	if in.Doing != "" || in.Next != "" || in.Blocked != "" {
		c := Mark(in.Doing, in.Next, in.Blocked)
		v.Claims = &c
	}
	v.GroundScore = GroundScore(v.Phi)
	v.Scores = Scores{Goal: v.GoalScore, Ground: v.GroundScore, Drift: v.Phi, Evidence: v.Anchored}
	if v.Claims != nil {
		v.Scores.Language = v.Claims.Grounded
	}

	s.StepCount++
	r.history = append(r.history, StepRecord{
		N: s.StepCount, At: now,
		Goal: in.Goal, Progress: in.Progress, Distance: d, ParentGoal: in.ParentGoal, UserTurn: in.UserTurn,
		Reason: v.Reason, Drifting: v.Drifting, Phi: v.Phi, Laserscore: ls, Anchored: v.Anchored,
		Underlying: underlying,
	})
	s.Last = r.history[len(r.history)-1]
	v.Step = s.StepCount
	if recErr != nil {
		recErr = fmt.Errorf("record context %s: %w", *cid, recErr)
	}
	return v, recErr
}

// f2 formats x as Python's "%.2f" does (correctly rounded, ties to even on
// the exact binary value).
func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// trailKeep is the longest tail the cycle detector reads.
const trailKeep = max(cycleNeedFloor, cycleRepeats*cycleMaxPeriod)

// keepLast drops all but the last n elements once the slice holds 4n, so
// the copy is paid once every 3n appends.
func keepLast[T any](s []T, n int) []T {
	if len(s) < 4*n {
		return s
	}
	return append(s[:0:0], s[len(s)-n:]...)
}

// spellingOf is Spelling(toks), taken from the laserscore when there is one
// (it starts "⟨spelling⟩") to save building the same string twice.
func spellingOf(toks []string, ls *string) string {
	if ls != nil {
		l := *ls
		if end := strings.Index(l, "⟩"); strings.HasPrefix(l, "⟨") && end > 0 {
			return l[len("⟨"):end]
		}
	}
	return Spelling(toks)
}
