package laserbrain

import (
	"slices"
	"testing"
	"time"
)

// Each test here guards one place where a port of the Python reference
// commonly reads it wrong, and would fail on that wrong reading. Expected
// values are derived by hand from the reference's rules; float literals
// were computed with Python 3 as the reference computes them (noted where
// it matters).

// step is one input of a scripted run and the reason/drifting/phi expected.
type step struct {
	in       StepInput
	reason   string
	drifting bool
	phi      float64
}

func in(goal, progress string, d Distance) StepInput {
	return StepInput{Goal: goal, Progress: progress, Distance: d}
}

// play runs steps on a fresh run and checks each verdict.
func play(t *testing.T, steps []step) *Run {
	t.Helper()
	r := NewRun(RunOptions{ID: "test"})
	for i, s := range steps {
		v, err := r.Step(s.in)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if v.Reason != s.reason || v.Drifting != s.drifting || v.Phi != s.phi {
			t.Fatalf("step %d (%q %s %v): got %s drifting=%v phi=%v, want %s drifting=%v phi=%v",
				i+1, s.in.Goal, s.in.Progress, s.in.Distance, v.Reason, v.Drifting, v.Phi, s.reason, s.drifting, s.phi)
		}
	}
	return r
}

const adv, stuck = ProgressAdvancing, ProgressStuck

// Full-Unicode lowercasing incl. U+0130; ASCII token pattern.
func TestParity01UnicodeLowercasing(t *testing.T) {
	// Python: "İstanbul".lower() == "i̇stanbul"; the combining dot ends the
	// token, so "i" (a stopword) and "stanbul". strings.ToLower gives
	// "istanbul".
	if got := Norm("İstanbul trip"); !slices.Equal(got, []string{"stanbul", "trip"}) {
		t.Errorf("Norm(İstanbul trip) = %q, want [stanbul trip]", got)
	}
	// The Kelvin sign lowercases to ASCII k; ï is not a token character.
	if got := Norm("\u212Aelvin naïve"); !slices.Equal(got, []string{"kelvin", "na", "ve"}) {
		t.Errorf("Norm = %q, want [kelvin na ve]", got)
	}
	// Through a run: the two spellings are different goals (overlap 1/3).
	play(t, []step{
		{in("İstanbul trip", adv, Dist(5)), "grounded", false, 0},
		{in("istanbul trip", adv, Dist(5)), "advancing", false, 0.33},
	})
}

// Leftmost, single stem replacement; length test > 4.
func TestParity02LeftmostSingleStem(t *testing.T) {
	for word, want := range map[string]string{
		"classes": "class", // longest-then-again would give "clas"
		"things":  "th",    // leftmost match of (ings?|...)$ is "ings"
		"status":  "statu",
		"runs":    "runs", // four characters: never stemmed
		"tions":   "tion", // once: not "" after a second pass
	} {
		if got := Norm(word); len(got) != 1 || got[0] != want {
			t.Errorf("Norm(%q) = %q, want %q", word, got, want)
		}
	}
}

// Φ with Python grouping, runtime float64, left-to-right sum.
func TestParity03PhiFloatGrouping(t *testing.T) {
	g := Ground{Goal: "alpha beta gamma delta", Progress: adv, Dist: Dist(0)}
	// Python: 0.5*0.25 + 0.3*(7/10) == 0.33499999999999996 (→ 0.33);
	// JS grouping (0.3*7)/10 gives 0.335 (→ 0.34).
	p := Phi("alpha beta gamma", adv, Dist(7), g)
	if p != 0.33499999999999996 {
		t.Errorf("Φ = %.17g, want 0.33499999999999996 (Python's value)", p)
	}
	if Round2(p) != 0.33 {
		t.Errorf("reported Φ = %v, want 0.33", Round2(p))
	}
	// Left to right: (0.5·1 + 0.3·0.5) + 0.2 == 0.8500000000000001 in Python.
	g2 := Ground{Goal: "ship the billboard", Progress: adv, Dist: Dist(5)}
	if p := Phi("paint the shed", stuck, Dist(0), g2); p != 0.8500000000000001 {
		t.Errorf("Φ = %.17g, want 0.8500000000000001", p)
	}
}

// Ties-to-even 2-dp rounding on the exact binary value;
// thresholds on unrounded values.
func TestParity04Rounding(t *testing.T) {
	for x, want := range map[float64]float64{
		0.125: 0.12, 0.375: 0.38, 0.625: 0.62, 0.46499999999999997: 0.46,
		2.675: 2.67, // 2.67499999999999982236431605997495353221893310546875
		0.335: 0.34, // 0.33500000000000001998...
	} {
		if got := Round2(x); got != want {
			t.Errorf("Round2(%.17g) = %v, want %v", x, got, want)
		}
	}
	// ground_score = round(1/(1+4·Φ), 3): Φ 0.5 → 1/3 → 0.333; Φ 0 → 1.
	if GroundScore(0.5) != 0.333 || GroundScore(0) != 1 || GroundScore(-1) != 1 {
		t.Errorf("GroundScore: %v %v %v", GroundScore(0.5), GroundScore(0), GroundScore(-1))
	}
	// The decision uses the unrounded Φ: 0.14999999999999999 (which reports
	// as 0.15) is not above the 0.15 floor, and 0.15000000000000002 is.
	r := play(t, []step{{in("hold the line", stuck, Dist(5)), "grounded", false, 0}})
	v, _ := r.Step(in("hold the line", stuck, Dist(0))) // Φ = 0.3·0.5 = 0.15 exactly
	if v.Reason != "advancing" {
		t.Errorf("Φ = 0.15: got %s, want advancing", v.Reason)
	}
}

// Strict > for self_report_min, strict < for goal_min, ≥ for
// the excursion parent and for collisions.
func TestParity05Thresholds(t *testing.T) {
	six := "alpha beta gamma delta epsilon zeta"
	overlap3of10 := "alpha beta gamma eta theta iota kappa" // 3 shared, 10 in the union
	// self_report_min: Φ exactly 0.15 with stuck → not a self-report.
	play(t, []step{
		{in("hold the line", stuck, Dist(5)), "grounded", false, 0},
		{in("hold the line", stuck, Dist(0)), "advancing", false, 0.15},
	})
	// goal_min: overlap exactly 0.30 is not below it.
	play(t, []step{
		{in(six, adv, Dist(5)), "grounded", false, 0},
		{in(overlap3of10, adv, Dist(5)), "advancing", false, 0.35},
	})
	// excursion: parent overlap exactly 0.30 is accepted.
	r := play(t, []step{{in(six, adv, Dist(5)), "grounded", false, 0}})
	v, _ := r.Step(StepInput{Goal: "paint the shed", Progress: adv, Distance: Dist(5), ParentGoal: overlap3of10})
	if v.Reason != "excursion" || v.Drifting || v.ParentOverlap != nil {
		t.Errorf("parent overlap 0.30: got %s drifting=%v parent_overlap=%v, want excursion", v.Reason, v.Drifting, v.ParentOverlap)
	}
	// collisions: 3/5 = 0.60 is reported.
	if c := Collisions(map[string]string{"a": "alpha beta gamma delta", "b": "alpha beta gamma omega"}); len(c) != 1 || c[0].Overlap != 0.6 {
		t.Errorf("collision at 0.60 = %+v, want one row at 0.6", c)
	}
}

// prev is the previous reason's class; the trace stores the
// underlying reason under oscillating.
func TestParity06PrevIsReasonClass(t *testing.T) {
	// A stall that only warned (drifting false) still makes the next
	// self-report interrupt: reading the drifting flag would give false.
	h := "hold the line"
	play(t, []step{
		{in(h, adv, Dist(4)), "grounded", false, 0},
		{in(h, adv, Dist(4)), "advancing", false, 0},
		{in(h, adv, Dist(4)), "advancing", false, 0},
		{in(h, adv, Dist(4)), "advancing", false, 0},
		{in(h, adv, Dist(4)), "stalled", false, 0},
		{in(h, stuck, Dist(4)), "self-report:stuck", true, 0.2},
	})
	// Oscillating is reported over an underlying goal-drift; the next
	// self-report keys on goal-drift (drifting true), not on "oscillating".
	r := play(t, []step{
		{in("survey the corpus", adv, Dist(6)), "grounded", false, 0},
		{in("narrow to physics", adv, Dist(4)), "goal-drift", true, 0.56},
		{in("read one paper", adv, Dist(2)), "goal-drift", true, 0.62},
		{in("survey the corpus", adv, Dist(6)), "advancing", false, 0},
		{in("narrow to physics", adv, Dist(4)), "goal-drift", true, 0.56},
		{in("read one paper", adv, Dist(2)), "oscillating", true, 0.62},
		{in("read one paper", stuck, Dist(2)), "self-report:stuck", true, 0.82},
	})
	if got := r.Steps()[5].Underlying; got != "goal-drift" {
		t.Errorf("trace stores %q under the oscillating report, want the underlying goal-drift", got)
	}
	for reason, want := range map[string]bool{
		"ungrammatical": true, "goal-drift": true, "stalled": true, "self-report:stuck": true, "self-report:circling": true,
		"grounded": false, "advancing": false, "reground": false, "excursion": false, "oscillating": false,
	} {
		if isDriftClass(reason) != want {
			t.Errorf("isDriftClass(%q) = %v, want %v", reason, !want, want)
		}
	}
}

// The latch fires once per contiguous p > 0 stretch and clears
// on p = 0.
func TestParity07Latch(t *testing.T) {
	a := in("read auth.py", adv, NoDistance)
	b := in("read session.py", adv, NoDistance)
	c := in("read auth.py tests", adv, NoDistance)
	A := step{a, "advancing", false, 0}
	B := step{b, "advancing", false, 0.25}
	osc := step{b, "oscillating", true, 0.25}
	play(t, []step{
		{a, "grounded", false, 0}, B, A, B, A, osc, // fires at step 6
		A,                             // period 2 goes on: the latch holds
		{c, "advancing", false, 0.12}, // period broken: the latch clears
		A, B, A, B, A, osc,            // six alternating again: fires again
		A, B, A, B, // and holds
	})
}

// A stopword-only ground makes every later step goal-drift
// (anchor 0.0) while goal_score stays 1.0.
func TestParity08StopwordGround(t *testing.T) {
	r := NewRun(RunOptions{})
	for i, s := range []StepInput{in("the", adv, Dist(5)), in("the", adv, Dist(5)), in("ship it", adv, Dist(5))} {
		v, _ := r.Step(s)
		if i > 0 && (v.Reason != "goal-drift" || !v.Drifting) {
			t.Errorf("step %d: %s, want goal-drift", i+1, v.Reason)
		}
		if v.GoalScore != 1 {
			t.Errorf("step %d: goal_score %v, want 1.0 (the first goal is empty)", i+1, v.GoalScore)
		}
		if i == 1 && (v.Context != nil || *v.Laserscore != "⟨⟩ advancing d5" || v.Phi != 0) {
			t.Errorf("step 2: context %v, laserscore %q, phi %v; want null, ⟨⟩ advancing d5, 0", v.Context, *v.Laserscore, v.Phi)
		}
	}
}

// Reground, excursion and goal-drift skip dist_hist; a
// none-distance ground zeroes the distance term all run.
func TestParity09DistanceHistory(t *testing.T) {
	h, p := "hold the line", "paint the shed"
	play(t, []step{
		{in(h, adv, Dist(4)), "grounded", false, 0},
		{in(h, adv, Dist(4)), "advancing", false, 0},
		{in(p, adv, Dist(4)), "goal-drift", true, 0.5},
		{in(h, adv, Dist(4)), "advancing", false, 0},
		{StepInput{Goal: p, Progress: adv, Distance: Dist(4), ParentGoal: h}, "excursion", false, 0.5},
		{in(h, adv, Dist(4)), "advancing", false, 0},
		{in(h, adv, Dist(4)), "stalled", false, 0}, // the fifth distance, not the seventh step
	})
	r := play(t, []step{
		{in(h, adv, Dist(4)), "grounded", false, 0},
		{in(h, adv, Dist(4)), "advancing", false, 0},
		{in(h, adv, Dist(4)), "advancing", false, 0},
		{StepInput{Goal: p, Progress: adv, Distance: Dist(4), UserTurn: true}, "reground", false, 0},
		{in(p, adv, Dist(4)), "advancing", false, 0},
		{in(p, adv, Dist(4)), "advancing", false, 0},
		{in(p, adv, Dist(4)), "advancing", false, 0},
		{in(p, adv, Dist(4)), "stalled", false, 0},
	})
	if d := r.s.Dist; d.Len != 5 || d.First != 4 || d.Flat != 4 || !slices.Equal(d.Tail, []int{4, 4, 4, 4, 4}) {
		t.Errorf("dist_hist after reground = %+v, want five 4s", d)
	}
	sb := "ship the sky billboard"
	play(t, []step{
		{in(sb, adv, NoDistance), "grounded", false, 0},
		{in(sb, adv, Dist(0)), "advancing", false, 0},
		{in(sb, adv, Dist(10)), "advancing", false, 0},
		{in(sb, stuck, Dist(10)), "self-report:stuck", false, 0.2},
	})
}

// The ceiling regex runs on regexp2, whose \b is Unicode-aware
// like Python's, with a match timeout.
func TestParity10CeilingRegexp(t *testing.T) {
	if c := Mark("ésince", "", ""); c.Grounded != nil || c.Cause != 0 {
		t.Errorf(`Mark("ésince") = %+v: an ASCII \b would find "since"`, c)
	}
	if c := Mark("é since", "", ""); c.Cause != 1 {
		t.Errorf(`Mark("é since") = %+v, want one cause`, c)
	}
	if ceilingRegexp().MatchTimeout <= 0 || ceilingRegexp().MatchTimeout > time.Minute {
		t.Errorf("ceiling regexp has no sensible match timeout: %v", ceilingRegexp().MatchTimeout)
	}
}

// Ordered JSON with Python float/escape style for hashing is
// the grammar package's: see grammar_test.go. Signatures use the same
// Python style (see TestSignature).

// Contexts and evidence are isolated per test — a fresh run
// records into its own store, so two runs never see each other's contexts.
func TestParity12IsolatedContexts(t *testing.T) {
	a, b := NewRun(RunOptions{}), NewRun(RunOptions{})
	for i := 0; i < 3; i++ {
		if _, err := a.Step(in("keep the cache warm", adv, Dist(4))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Step(in("keep the cache warm", adv, Dist(4))); err != nil {
		t.Fatal(err)
	}
	if j := b.Phronesis(); j.Scores.Repetition != 1 || j.Scores.Recurrence != 0 {
		t.Errorf("a fresh run sees repetition %d, prior runs %d: its store is shared", j.Scores.Repetition, j.Scores.Recurrence)
	}
}
