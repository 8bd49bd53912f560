package method

import (
	"fmt"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
)

// Findings a lint can report, besides the grammar's phase-rule names.
const (
	UnknownVerb      = "unknown-verb"
	UnderDeclared    = "under-declared"
	OverDeclared     = "over-declared"
	GoalRestatesName = "goal-restates-name"
	ShapeUnknown     = "shape-unknown"
	// NoSteps is what a person linting a file is told of a method with
	// no steps (Review): nothing in it can be checked, run or compared.
	// The reference's lint reports nothing for one (Lint keeps to that).
	NoSteps = "no-steps"
)

// Finding is one lint finding. Verb is nil for shape findings, which concern
// the method rather than one step.
type Finding struct {
	Step    string  `json:"step"`
	Finding string  `json:"finding"`
	Verb    *string `json:"verb"`
	Note    string  `json:"note"`
}

// Verb is a step's verb: the lowercased, trimmed name up to the first '-',
// '_' or space.
func Verb(name string) string {
	s := strings.ToLower(strings.TrimSpace(name))
	if i := strings.IndexAny(s, "-_ "); i >= 0 {
		s = s[:i]
	}
	return s
}

// Lint checks a method against the dictionary: per step, in order, an
// unknown verb or a declaration that disagrees with the verb's default, and
// a goal that only restates the name; then the shape rules over the
// sequence of phases (unmapped verbs dropped).
func Lint(m *Method) []Finding {
	var out []Finding
	for _, s := range m.Steps {
		verb := Verb(s.Name)
		v := &verb
		def, known := operator.LookupVerb(verb)
		if !known {
			out = append(out, Finding{s.Name, UnknownVerb, v, fmt.Sprintf("%q is not a dictionary verb, so this step cannot be compared with other methods' steps", verb)})
		} else {
			if !def.Reversible && !s.Irreversible {
				out = append(out, Finding{s.Name, UnderDeclared, v, fmt.Sprintf("%q (%s) is irreversible by default, but the step is not declared irreversible: the operator would run it without asking", verb, def.Gloss)})
			}
			if def.Outward && !s.Outward {
				out = append(out, Finding{s.Name, UnderDeclared, v, fmt.Sprintf("%q reaches beyond this machine by default, but the step is not declared outward", verb)})
			}
			if s.Irreversible && def.Reversible {
				out = append(out, Finding{s.Name, OverDeclared, v, fmt.Sprintf("%q is reversible by default; declaring it irreversible only asks more often", verb)})
			}
		}
		if slices.Equal(laserbrain.Norm(s.Goal), laserbrain.Norm(s.Name)) {
			out = append(out, Finding{s.Name, GoalRestatesName, v, "the goal says nothing the name does not, so the step has nothing to be measured against"})
		}
	}
	return append(out, shapeFindings(m)...)
}

// Review is what laserbrain lint reports of a method a person wrote: Lint's
// findings, and, for a method with no steps — which Lint, as the
// reference's lint, passes in silence — that it has none.
func Review(m *Method) []Finding {
	out := Lint(m)
	if len(m.Steps) == 0 {
		out = append(out, Finding{Step: "(method)", Finding: NoSteps,
			Note: `the method has no steps, so there is nothing to check, run or compare: give "steps" at least one {name, goal} (laserbrain lint --vocabulary lists the verbs a step's name starts with)`})
	}
	return out
}

type phased struct {
	step  string
	phase operator.Phase
}

func ruleSays(name string) string {
	for _, r := range operator.PhaseRules() {
		if r.Name == name {
			return r.Says
		}
	}
	return ""
}

func shapeFindings(m *Method) []Finding {
	var seq []phased
	for _, s := range m.Steps {
		if p, ok := operator.PhaseOfVerb(Verb(s.Name)); ok {
			seq = append(seq, phased{s.Name, p})
		}
	}
	first := func(p operator.Phase) int {
		for i, x := range seq {
			if x.phase == p {
				return i
			}
		}
		return -1
	}
	anyIn := func(from, to int, ps ...operator.Phase) bool {
		for _, x := range seq[from:to] {
			if slices.Contains(ps, x.phase) {
				return true
			}
		}
		return false
	}
	var out []Finding
	add := func(i int, rule string) {
		out = append(out, Finding{Step: seq[i].step, Finding: rule, Note: ruleSays(rule)})
	}
	if r := first(operator.PhaseRecord); r >= 0 && !anyIn(0, r, operator.PhaseVerify) {
		add(r, operator.RuleVerifyBeforeRecord)
	}
	if a := first(operator.PhaseAct); a >= 0 {
		if !anyIn(0, a, operator.PhaseRecord) {
			add(a, operator.RuleRecordBeforeAct)
		}
		if !anyIn(a+1, len(seq), operator.PhaseVerify) {
			add(a, operator.RuleConfirmAfterAct)
		}
	}
	if last := lastIndex(seq, operator.PhaseVerify); last >= 0 {
		for j := last + 1; j < len(seq); j++ {
			if seq[j].phase == operator.PhaseChange && anyIn(j+1, len(seq), operator.PhaseRecord, operator.PhaseAct) {
				add(j, operator.RuleStaleVerify)
				break
			}
		}
	}
	if len(seq) > 0 {
		names := make([]string, len(seq))
		for i, x := range seq {
			names[i] = x.phase.String()
		}
		shape := operator.CollapseShape(strings.Join(names, " "))
		if !operator.ShapeKnown(shape) {
			out = append(out, Finding{Step: seq[0].step, Finding: ShapeUnknown, Note: "the shape \"" + shape + "\" is not in the grammar's shape language: a new kind of work, or a step out of place"})
		}
	}
	if c := first(operator.PhaseChange); c >= 0 && first(operator.PhaseRecord) < 0 {
		add(c, operator.RuleChangeIsRecorded)
	}
	return out
}

func lastIndex(seq []phased, p operator.Phase) int {
	for i := len(seq) - 1; i >= 0; i-- {
		if seq[i].phase == p {
			return i
		}
	}
	return -1
}
