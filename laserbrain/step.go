package laserbrain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/firstuse"
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
		o = r.decide(in, goal, toks, d, prev)
	} else {
		o = outcome{reason: reasonUngrammatical, drifting: true,
			advice: "You cannot spell a clear goal and a valid progress. Return to ground."}
		if goal == "" {
			o.why = "the goal is empty"
		} else {
			o.why = PyRepr(in.Progress) + " is not one of " + progressList.Get()
		}
	}
	return r.emit(in, toks, cid, d, ls, o, corroborated)
}

// progressList is the grammar's progress values as the reference's
// sorted() list prints: ['advancing', 'circling', 'stuck']. Only an
// ungrammatical state needs it, so it is written on first use.
var progressList = firstuse.Value[string]{New: sortedProgressRepr}

func sortedProgressRepr() string {
	vals := progressEnum
	slices.Sort(vals[:])
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = PyRepr(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// The verdict texts are the reference's, word for word: an agent reads
// them, and the vectors hold them to it. Numbers are "%.2f".

// decide applies the verdict rules to a grammatical state.
func (r *Run) decide(in StepInput, goal string, toks []string, d Distance, prev bool) outcome {
	s := &r.s
	if s.Ground == nil {
		r.reground(goal, in.Progress, toks, d)
		return outcome{reason: reasonGrounded,
			advice: "Ground state set — continue, and check each step.",
			why:    "ground is goal=" + PyRepr(goal) + ", progress=" + PyRepr(in.Progress) + ", distance=" + distanceWords(d)}
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
			why: "you said " + PyRepr(in.Progress) + " and Φ=" + f2(p) + " is above the " + f2(selfReportMin) + " self-report floor (" + r.terms(toks, in.Progress, d) + ")"}
		if prev {
			o.advice = "You reported " + in.Progress + " and have moved from ground. Return to your goal."
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
				why:    "the goal moved (overlap " + f2(anchor) + ") on the first check after a user turn, so it was replaced, not drifted from"}
		}
		if pyStrip(in.ParentGoal) != "" {
			parent, _ := r.goal(pyStrip(in.ParentGoal))
			pAnchor := Overlap(parent, s.FirstGoal)
			if pAnchor >= goalMin {
				return outcome{reason: reasonExcursion, phi: p,
					advice: "On a sub-task (overlap " + f2(anchor) + ") that still serves your ground goal (parent overlap " + f2(pAnchor) + "). Not drift — but the parent is what you owe.",
					why:    "goal overlap " + f2(anchor) + " is below goal_min " + f2(goalMin) + ", but the declared parent overlaps " + f2(pAnchor) + ", so this is a branch and not a departure"}
			}
			// A declaration that falls short is named, and the agent is not
			// told to do what it just did.
			po := round2(pAnchor)
			return outcome{reason: reasonGoalDrift, drifting: true, phi: p, parentOverlap: &po,
				advice: "Your goal no longer matches the one you started with (overlap " + f2(anchor) + "). You DID declare a parent, and it was measured at " + f2(pAnchor) +
					" against your ground — below the " + f2(goalMin) + " floor, so this reads as drift rather than an excursion. Either the parent is not the goal this serves, or it shares too little wording with it to be recognised. If the user redirected you, reset.",
				why: "overlap with the first goal is " + f2(anchor) + " and the declared parent overlaps " + f2(pAnchor) + ", both below goal_min " + f2(goalMin) + "; first goal was " + PyRepr(s.FirstGoalText)}
		}
		return outcome{reason: reasonGoalDrift, drifting: true, phi: p,
			advice: "Your goal no longer matches the one you started with (overlap " + f2(anchor) + "). If the user redirected you, reset. If this is a sub-task, pass parent_goal. Otherwise return to the goal you started with.",
			why:    "overlap with the first goal is " + f2(anchor) + ", below goal_min " + f2(goalMin) + "; first goal was " + PyRepr(s.FirstGoalText)}
	}

	if !d.Known {
		return outcome{reason: reasonAdvancing, phi: p,
			advice: "On track (Φ=" + f2(p) + ", distance unknown — Φ is a lower bound).",
			why:    "Φ=" + f2(p) + " from " + r.terms(toks, in.Progress, d) + "; no distance, so no stall detector"}
	}
	s.Dist.push(d.Value)
	if s.Dist.stalled() {
		w := stallWindow
		last, base := strconv.Itoa(s.Dist.last()), strconv.Itoa(s.Dist.Tail[len(s.Dist.Tail)-w-1])
		if vetoed(s.Backed) {
			return outcome{reason: reasonAdvancing, phi: p,
				advice: "Distance is flat, but every check in the window is backed by observed work — this reads as execution, not a stall. (Φ=" + f2(p) + ")",
				why: fmt.Sprintf("distance %s no better than %s from %d steps ago, but %d of %d recent checks were corroborated, so the flat distance is execution rather than a stall",
					last, base, w, w, w)}
		}
		o := outcome{reason: reasonStalled, drifting: prev, phi: p,
			why: fmt.Sprintf("distance %s is no better than %s from %d steps ago (recent: %s)", last, base, w, intList(s.Dist.Tail[len(s.Dist.Tail)-w-1:]))}
		if prev {
			o.advice = "Distance stopped falling and you were already off ground — return."
		} else {
			o.advice = "Distance isn't falling. If it holds, return."
		}
		return o
	}
	// The common verdict: both texts from one buffer, one allocation.
	var buf [128]byte
	b := append(buf[:0], "On track (Φ="...)
	b = strconv.AppendFloat(b, p, 'f', 2, 64)
	b = append(b, "). Continue."...)
	cut := len(b)
	b = append(b, "Φ="...)
	b = strconv.AppendFloat(b, p, 'f', 2, 64)
	b = append(b, " from "...)
	b = r.appendTerms(b, toks, in.Progress, d)
	texts := string(b)
	return outcome{reason: reasonAdvancing, phi: p, advice: texts[:cut], why: texts[cut:]}
}

// terms is the reference's account of Φ's parts: "goal 0.00, distance
// 0.03, progress 0.00" (each term weighted; distance "unknown" when either
// side has none).
func (r *Run) terms(toks []string, progress string, d Distance) string {
	var buf [64]byte
	return string(r.appendTerms(buf[:0], toks, progress, d))
}

func (r *Run) appendTerms(b []byte, toks []string, progress string, d Distance) []byte {
	g := r.s.Ground
	b = append(b, "goal "...)
	b = strconv.AppendFloat(b, float64(weightGoal*jaccardDistance(toks, r.s.FirstGoal)), 'f', 2, 64)
	b = append(b, ", distance "...)
	if d.Known && g.Dist.Known {
		delta := d.Value - g.Dist.Value
		if delta < 0 {
			delta = -delta
		}
		b = strconv.AppendFloat(b, float64(weightDistance*float64(float64(delta)/10)), 'f', 2, 64)
	} else {
		b = append(b, "unknown"...)
	}
	b = append(b, ", progress "...)
	prog := 0.0
	if progress != g.Progress {
		prog = 1
	}
	return strconv.AppendFloat(b, float64(weightProgress*prog), 'f', 2, 64)
}

// intList writes ints as a Python list prints: [4, 4, 5].
func intList(xs []int) string {
	b := []byte{'['}
	for i, x := range xs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(append(b, ']'))
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
		// The reference keeps the underlying check's why (it always has
		// one) and drops what only the underlying verdict carries.
		if v.Why == "" {
			v.Why = fmt.Sprintf("period-%d ground cycle", p)
		}
		v.GoalScore, v.Context, v.ParentOverlap = 1, nil, nil
	}

	if in.Doing != "" || in.Next != "" || in.Blocked != "" {
		c := Mark(in.Doing, in.Next, in.Blocked)
		v.Claims = &c
	}
	v.GroundScore = GroundScore(v.Phi)
	v.Scores = Scores{Goal: v.GoalScore, Ground: round2(v.GroundScore), Drift: v.Phi, Evidence: v.Anchored}
	if v.Claims != nil {
		v.Scores.Language = v.Claims.Grounded
	}

	s.StepCount++
	r.history = append(r.history, StepRecord{
		N: s.StepCount, At: now,
		Goal: in.Goal, Progress: in.Progress, Distance: d, ParentGoal: in.ParentGoal, UserTurn: in.UserTurn,
		Reason: v.Reason, Drifting: v.Drifting, Phi: v.Phi, Laserscore: ls, Anchored: v.Anchored,
		Advice: v.Advice, Underlying: underlying, Resumed: in.Resumed,
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
