package ponder

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Verdicts of judge (advice; decide is the caller's).
const (
	VerdictContinue = "continue"
	VerdictEscalate = "escalate"
	VerdictBlocked  = "blocked"
	VerdictStop     = "stop"
)

// Rule 6 thresholds and the tie-breaker's (SPEC.md §7).
const (
	maxNovelty       = 0.05 // novelty < 0.05
	maxChurn         = 0.10 // churn < 0.10
	maxThrash        = 0.25 // thrash ≤ 0.25
	minVoices        = 3    // voices ≥ 3
	escalateSeverity = 0.7  // an open observation ≥ 0.7 turns continue into escalate
)

// Metrics are a judged pass's numbers, stored as computed: no rounding, no
// clamping; null (nil) where a metric is undefined for the pass.
type Metrics struct {
	Coverage float64  `json:"coverage"`
	Graded   int      `json:"graded"`
	Counted  int      `json:"counted"`
	Churn    *float64 `json:"churn"`
	Novelty  *float64 `json:"novelty"`
	Thrash   *float64 `json:"thrash"`
	Voices   int      `json:"voices"`
	// Skeptic: the Skeptic argued in this pass's deliberation. From pass 2
	// on a pass counts as silent (Rule 6) only with it: "Pass 2 always
	// includes an adversarial falsification pass".
	Skeptic         bool `json:"skeptic"`
	DeltaVoices     int  `json:"deltaVoices"`
	ConfidenceFloor int  `json:"confidenceFloor"`
	// FloorValue is the session's confidence floor that ConfidenceFloor
	// counts findings below.
	FloorValue float64    `json:"floorValue"`
	Surprise   *float64   `json:"surprise"`
	Live       int        `json:"live"`
	Revising   int        `json:"revising"`
	Ops        OpCounts   `json:"ops"`
	UnitOps    UnitCounts `json:"unitOps"`
	// ReAdds are adds re-raising a finding deleted in the previous pass;
	// Falsified are deletes of findings added in the previous pass.
	ReAdds    int `json:"reAdds"`
	Falsified int `json:"falsified"`
	// Phantoms is the re-verification of every phantom delete against the
	// disk at judge time.
	Phantoms PhantomCheck `json:"phantoms"`
	// Uncovered are the files on disk under the scan root that no unit
	// carries (a file renamed or added since the seed): they block silence
	// (R1) until a unit carries them. Empty without a scan root.
	Uncovered []string `json:"uncovered"`
}

// PhantomCheck is judge's re-verification of the phantom deletes: how many
// it checked and the units one of whose paths is on disk again (counted
// again, so coverage shows them).
type PhantomCheck struct {
	Checked int             `json:"checked"`
	OnDisk  []PhantomOnDisk `json:"onDisk"`
}

// fullyGraded is "coverage = 1.00" as integer equality; zero counted units
// is not full coverage.
func (m *Metrics) fullyGraded() bool {
	return m.Counted > 0 && m.Graded == m.Counted && len(m.Uncovered) == 0
}

// computeMetrics measures pass k from the replayed state (after the pass's
// deltas and the phantom re-verification), the pass's deliberation voices
// and its forecast (nil without predict.json).
func computeMetrics(st *State, k int, voices *Voices, forecast *Forecast, floor float64) Metrics {
	m := ledgerMetrics(st, k, floor, nil)
	m.Voices, m.Skeptic = voices.Count(), voices.Skeptic.Argument != nil
	if m.Churn != nil && forecast != nil {
		s := math.Abs(forecast.Churn - *m.Churn)
		m.Surprise = &s
	}
	return m
}

// ledgerMetrics are the figures of pass k that the ledger alone decides,
// as st stands (the voices, the Skeptic and the surprise come from the
// pass's files). phantomFails, when set, says which phantom-deleted units
// count again because a path of theirs is on disk; nil reads the units'
// Phantom flags as they are (after ReverifyPhantoms).
func ledgerMetrics(st *State, k int, floor float64, phantomFails func(*Unit) bool) Metrics {
	ps := st.Pass(k)
	graded, counted := st.gradingWith(phantomFails)
	m := Metrics{
		Graded:          graded,
		Counted:         counted,
		DeltaVoices:     ps.DeltaVoices(),
		ConfidenceFloor: st.BelowFloor(floor),
		FloorValue:      floor,
		Live:            st.Live,
		Revising:        ps.Revising(),
		Ops:             ps.Ops,
		UnitOps:         ps.Units,
		ReAdds:          ps.ReAdds,
		Falsified:       ps.Falsified,
		Phantoms:        PhantomCheck{OnDisk: []PhantomOnDisk{}},
		Uncovered:       []string{},
	}
	if counted > 0 {
		m.Coverage = float64(graded) / float64(counted)
	}
	if k >= 2 {
		churn, novelty, thrash := passRatios(ps, st.Live)
		m.Churn, m.Novelty, m.Thrash = &churn, &novelty, &thrash
	}
	return m
}

// passRatios are a pass's churn, novelty and thrash (pass ≥ 2), with live
// the live findings after it.
func passRatios(ps *PassStats, live int) (churn, novelty, thrash float64) {
	// live floored at 1, so a subject with no findings can converge.
	denom := float64(max(1, live))
	churn = float64(ps.Revising()) / denom
	novelty = float64(ps.Ops.Add) / denom
	if ps.ThrashBase() > 0 {
		thrash = float64(ps.Thrash) / float64(ps.ThrashBase())
	}
	return churn, novelty, thrash
}

// rule6Failures lists the Rule-6 thresholds m misses ([] when it passes).
// A null metric fails its threshold.
func rule6Failures(m *Metrics) []string {
	out := []string{}
	if m.Counted == 0 || m.Graded != m.Counted {
		out = append(out, fmt.Sprintf("coverage %d/%d", m.Graded, m.Counted))
	}
	if n := len(m.Uncovered); n > 0 {
		out = append(out, fmt.Sprintf("%d file(s) on disk that no unit carries", n))
	}
	switch {
	case m.Novelty == nil:
		out = append(out, "novelty null")
	case *m.Novelty >= maxNovelty:
		out = append(out, fmt.Sprintf("novelty %s ≥ 0.05", num(*m.Novelty)))
	}
	switch {
	case m.Churn == nil:
		out = append(out, "churn null")
	case *m.Churn >= maxChurn:
		out = append(out, fmt.Sprintf("churn %s ≥ 0.10", num(*m.Churn)))
	}
	switch {
	case m.Thrash == nil:
		out = append(out, "thrash null")
	case *m.Thrash > maxThrash:
		out = append(out, fmt.Sprintf("thrash %s > 0.25", num(*m.Thrash)))
	}
	if m.Voices < minVoices {
		out = append(out, fmt.Sprintf("voices %d < 3", m.Voices))
	}
	if !m.Skeptic {
		out = append(out, "the Skeptic did not take part (from pass 2 on a pass counts toward convergence only with its falsification: deliberate --skeptic)")
	}
	if m.ConfidenceFloor != 0 {
		out = append(out, fmt.Sprintf("%d finding(s) below the confidence floor %s", m.ConfidenceFloor, num(m.FloorValue)))
	}
	return out
}

// VerdictInput is everything the verdict rules read.
type VerdictInput struct {
	Pass     int
	Budget   int
	Current  Metrics
	Previous *Metrics // pass k−1's stored metrics; nil on pass 1
	// Severities of the open observations; nil when they could not be read
	// (OCA off or down), which removes the tie-breaker.
	Observations []float64
	// Ungraded are the counted units not yet graded, which a blocked
	// verdict names; ScanRoot is where Current.Uncovered lie.
	Ungraded []UnitRef
	ScanRoot string
}

// UnitRef names a unit and its current path.
type UnitRef struct {
	Unit string `json:"unit"`
	Path string `json:"path"`
}

// Verdict is judge's advice and why.
type Verdict struct {
	Verdict    string     `json:"verdict"`
	Rule       string     `json:"rule"` // R1…R6, "none" (the final continue)
	Reason     string     `json:"reason"`
	Rule6      Rule6Check `json:"rule6"`
	TieBreaker TieBreaker `json:"tieBreaker"`
	// Ungraded are the counted units not yet graded (what R1 waits for).
	Ungraded []UnitRef `json:"ungraded"`
}

// Rule6Check shows which thresholds each of the two passes missed.
type Rule6Check struct {
	Current  []string `json:"current"`
	Previous []string `json:"previous"` // null on pass 1
}

// TieBreaker shows what the open observations did.
type TieBreaker struct {
	Available   bool     `json:"available"`
	Open        *int     `json:"open"`
	MaxSeverity *float64 `json:"maxSeverity"`
	Applied     bool     `json:"applied"`
}

// Decide applies rules R1..R6 in order, first match wins, then the
// tie-breaker (SPEC.md §7).
func Decide(in VerdictInput) Verdict {
	cur := in.Current
	v := Verdict{Rule6: Rule6Check{Current: rule6Failures(&cur)}, Ungraded: in.Ungraded}
	if v.Ungraded == nil {
		v.Ungraded = []UnitRef{}
	}
	if in.Previous != nil {
		v.Rule6.Previous = rule6Failures(in.Previous)
	}
	rule6 := in.Previous != nil && len(v.Rule6.Current) == 0 && len(v.Rule6.Previous) == 0
	set := func(verdict, rule, reason string) { v.Verdict, v.Rule, v.Reason = verdict, rule, reason }
	switch {
	case !cur.fullyGraded():
		var why []string
		if cur.Counted == 0 || cur.Graded != cur.Counted {
			w := fmt.Sprintf("coverage %d/%d is below 1.00: grade every counted unit", cur.Graded, cur.Counted)
			if n := len(cur.Phantoms.OnDisk); n > 0 {
				w += fmt.Sprintf(" (%d phantom-deleted unit(s) are on disk again, so counted: %s)", n, phantomList(cur.Phantoms.OnDisk))
			}
			if len(in.Ungraded) > 0 {
				w += "; ungraded: " + unitList(in.Ungraded)
			}
			why = append(why, w)
		}
		if n := len(cur.Uncovered); n > 0 {
			root := in.ScanRoot
			if root == "" {
				root = "the scan root"
			}
			if n == 1 {
				why = append(why, fmt.Sprintf("%s is on disk under %s but no unit carries it: give a renamed file's unit its new path (a unit-edit), or add a unit for a new file (a unit-add)", cur.Uncovered[0], root))
			} else {
				why = append(why, fmt.Sprintf("%d files are on disk under %s but no unit carries them (%s): give a renamed file's unit its new path (a unit-edit), or add a unit for a new file (a unit-add)", n, root, nameList(cur.Uncovered)))
			}
		}
		set(VerdictBlocked, "R1", strings.Join(why, "; and "))
	case in.Pass == 1:
		set(VerdictContinue, "R2", "pass 1 is the survey: continue")
	case cur.Thrash != nil && *cur.Thrash > maxThrash:
		set(VerdictEscalate, "R3", fmt.Sprintf("thrash %s > 0.25: the pass undid the previous one", num(*cur.Thrash)))
	case in.Pass >= in.Budget && !rule6:
		set(VerdictEscalate, "R4", fmt.Sprintf("pass %d reached the budget of %d without convergence", in.Pass, in.Budget))
	case cur.Voices < minVoices:
		set(VerdictContinue, "R5", fmt.Sprintf("only %d voice(s) argued: deliberate fully", cur.Voices))
	case rule6:
		set(VerdictStop, "R6", "two consecutive passes met every convergence threshold")
	default:
		why := "convergence not shown"
		if in.Previous != nil && len(v.Rule6.Previous) > 0 && len(v.Rule6.Current) == 0 {
			why = "this pass meets every threshold; one more such pass is needed"
		} else if len(v.Rule6.Current) > 0 {
			why = "not converged: " + strings.Join(v.Rule6.Current, ", ")
		}
		set(VerdictContinue, "none", why)
	}
	if in.Observations != nil {
		n := len(in.Observations)
		v.TieBreaker.Available, v.TieBreaker.Open = true, &n
		if n > 0 {
			top := in.Observations[0]
			for _, s := range in.Observations[1:] {
				top = max(top, s)
			}
			v.TieBreaker.MaxSeverity = &top
			if v.Verdict == VerdictContinue && top >= escalateSeverity {
				v.TieBreaker.Applied = true
				v.Reason = fmt.Sprintf("%s; but an open observation has severity %s ≥ 0.7: escalate", v.Reason, num(top))
				v.Verdict = VerdictEscalate
			}
		}
	}
	return v
}

// unitList names units, at most five: "u0002 (b.go), u0003 (c.go), and 4 more".
func unitList(us []UnitRef) string {
	return firstFive(us, func(u UnitRef) string { return fmt.Sprintf("%s (%s)", u.Unit, u.Path) })
}

// nameList names paths, at most five.
func nameList(names []string) string { return firstFive(names, func(n string) string { return n }) }

// phantomList names failed phantoms, at most five: "u0003 (src/c.go), …".
func phantomList(ps []PhantomOnDisk) string {
	return firstFive(ps, func(p PhantomOnDisk) string { return fmt.Sprintf("%s (%s)", p.Unit, strings.Join(p.Paths, ", ")) })
}

// firstFive names the first five of items (name names one), and how many
// more there are: "a, b, c, d, e, and 2 more".
func firstFive[T any](items []T, name func(T) string) string {
	parts := make([]string, 0, min(len(items), 6))
	for i, it := range items {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(items)-5))
			break
		}
		parts = append(parts, name(it))
	}
	return strings.Join(parts, ", ")
}

// num prints a metric exactly (the shortest form that round-trips).
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
