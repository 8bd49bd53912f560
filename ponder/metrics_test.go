package ponder

import (
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

// passing meets every Rule-6 threshold.
func passing() Metrics {
	return Metrics{Graded: 5, Counted: 5, Coverage: 1, Churn: f(0), Novelty: f(0), Thrash: f(0), Voices: 4, Skeptic: true}
}

func TestRule6Thresholds(t *testing.T) {
	// Each threshold at its edge: novelty < 0.05, churn < 0.10, thrash ≤ 0.25,
	// voices ≥ 3, confidenceFloor = 0, coverage = graded/counted exactly.
	cases := []struct {
		name  string
		tweak func(*Metrics)
		fails bool
	}{
		{"all zero", func(m *Metrics) {}, false},
		{"novelty 0.0499", func(m *Metrics) { m.Novelty = f(0.0499) }, false},
		{"novelty 0.05", func(m *Metrics) { m.Novelty = f(0.05) }, true},
		{"churn 0.0999", func(m *Metrics) { m.Churn = f(0.0999) }, false},
		{"churn 0.10", func(m *Metrics) { m.Churn = f(0.10) }, true},
		{"thrash 0.25", func(m *Metrics) { m.Thrash = f(0.25) }, false},
		{"thrash 0.2501", func(m *Metrics) { m.Thrash = f(0.2501) }, true},
		{"voices 3", func(m *Metrics) { m.Voices = 3 }, false},
		{"voices 2", func(m *Metrics) { m.Voices = 2 }, true},
		// "Pass 2 always includes an adversarial falsification pass": three
		// voices without the Skeptic are not a silent pass.
		{"voices 3 without the Skeptic", func(m *Metrics) { m.Voices, m.Skeptic = 3, false }, true},
		{"one below floor", func(m *Metrics) { m.ConfidenceFloor = 1 }, true},
		{"coverage 4/5", func(m *Metrics) { m.Graded = 4 }, true},
		{"zero counted", func(m *Metrics) { m.Graded, m.Counted = 0, 0 }, true},
		{"null churn", func(m *Metrics) { m.Churn = nil }, true},
		{"null novelty", func(m *Metrics) { m.Novelty = nil }, true},
		{"null thrash", func(m *Metrics) { m.Thrash = nil }, true},
	}
	for _, c := range cases {
		m := passing()
		c.tweak(&m)
		if got := len(rule6Failures(&m)) > 0; got != c.fails {
			t.Errorf("%s: fails = %v, want %v (%v)", c.name, got, c.fails, rule6Failures(&m))
		}
	}
}

func TestDecideRulesInOrder(t *testing.T) {
	blocked := passing()
	blocked.Graded = 4
	thrashing := passing()
	thrashing.Thrash = f(0.5)
	churning := passing()
	churning.Churn = f(0.5)
	quiet := passing()
	quiet.Voices = 2
	pass1 := passing()
	pass1.Churn, pass1.Novelty, pass1.Thrash = nil, nil, nil
	p := passing()
	cases := []struct {
		name        string
		in          VerdictInput
		verdict     string
		rule        string
		reasonMatch string
	}{
		{"R1 before everything", VerdictInput{Pass: 1, Budget: 4, Current: blocked}, VerdictBlocked, "R1", "coverage 4/5"},
		{"R1 even at the budget with thrash", VerdictInput{Pass: 4, Budget: 4, Current: func() Metrics { m := thrashing; m.Graded = 1; return m }(), Previous: &p}, VerdictBlocked, "R1", ""},
		{"R2 pass 1", VerdictInput{Pass: 1, Budget: 4, Current: pass1}, VerdictContinue, "R2", "survey"},
		{"R3 thrash", VerdictInput{Pass: 2, Budget: 4, Current: thrashing, Previous: &p}, VerdictEscalate, "R3", "thrash 0.5"},
		{"R3 before R4", VerdictInput{Pass: 4, Budget: 4, Current: thrashing, Previous: &p}, VerdictEscalate, "R3", ""},
		{"R4 budget reached", VerdictInput{Pass: 4, Budget: 4, Current: churning, Previous: &p}, VerdictEscalate, "R4", "budget of 4"},
		{"R4 over budget", VerdictInput{Pass: 6, Budget: 4, Current: quiet, Previous: &p}, VerdictEscalate, "R4", ""},
		{"stop on the last budgeted pass wins over R4", VerdictInput{Pass: 4, Budget: 4, Current: p, Previous: &p}, VerdictStop, "R6", ""},
		{"R5 few voices", VerdictInput{Pass: 2, Budget: 4, Current: quiet, Previous: &p}, VerdictContinue, "R5", "deliberate fully"},
		{"R6 two passing passes", VerdictInput{Pass: 3, Budget: 4, Current: p, Previous: &p}, VerdictStop, "R6", ""},
		{"pass 2 after a null pass 1", VerdictInput{Pass: 2, Budget: 4, Current: p, Previous: &pass1}, VerdictContinue, "none", "one more such pass"},
		{"else continue", VerdictInput{Pass: 2, Budget: 4, Current: churning, Previous: &p}, VerdictContinue, "none", "churn 0.5"},
	}
	for _, c := range cases {
		v := Decide(c.in)
		if v.Verdict != c.verdict || v.Rule != c.rule || !strings.Contains(v.Reason, c.reasonMatch) {
			t.Errorf("%s: %s (%s) %q; want %s (%s) containing %q", c.name, v.Verdict, v.Rule, v.Reason, c.verdict, c.rule, c.reasonMatch)
		}
	}
}

func TestTieBreaker(t *testing.T) {
	p := passing()
	churning := passing()
	churning.Churn = f(0.5)
	blocked := passing()
	blocked.Graded = 0
	cont := VerdictInput{Pass: 2, Budget: 4, Current: churning, Previous: &p}
	cases := []struct {
		name    string
		in      VerdictInput
		obs     []float64
		verdict string
		applied bool
	}{
		// 0.70 tips continue into escalate, 0.69 does not.
		{"0.69 stays continue", cont, []float64{0.69}, VerdictContinue, false},
		{"0.70 escalates", cont, []float64{0.7}, VerdictEscalate, true},
		{"highest counts, not first", cont, []float64{0.2, 0.95, 0.5}, VerdictEscalate, true},
		{"none open", cont, []float64{}, VerdictContinue, false},
		{"unavailable (OCA down)", cont, nil, VerdictContinue, false},
		{"R2 continue tips too", VerdictInput{Pass: 1, Budget: 4, Current: p}, []float64{0.8}, VerdictEscalate, true},
		{"never alters blocked", VerdictInput{Pass: 2, Budget: 4, Current: blocked, Previous: &p}, []float64{1}, VerdictBlocked, false},
		{"never alters stop", VerdictInput{Pass: 3, Budget: 4, Current: p, Previous: &p}, []float64{1}, VerdictStop, false},
	}
	for _, c := range cases {
		c.in.Observations = c.obs
		v := Decide(c.in)
		if v.Verdict != c.verdict || v.TieBreaker.Applied != c.applied || v.TieBreaker.Available != (c.obs != nil) {
			t.Errorf("%s: %s applied=%v available=%v; want %s applied=%v", c.name, v.Verdict, v.TieBreaker.Applied, v.TieBreaker.Available, c.verdict, c.applied)
		}
	}
}
