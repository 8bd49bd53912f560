package operator

// VerbDefault is a step verb's default position on the operator's two axes,
// from the grammar's dictionary.
type VerbDefault struct {
	Reversible bool
	Outward    bool
	Gloss      string
}

// LookupVerb returns the dictionary's defaults for a step verb.
func LookupVerb(verb string) (VerbDefault, bool) {
	v, ok := stepVerb(verb)
	return VerbDefault(v), ok
}

// PhaseOfVerb returns the backbone phase a step verb belongs to.
func PhaseOfVerb(verb string) (Phase, bool) {
	return phaseOfVerb(verb)
}

// PhaseRule is one of the grammar's method-shape rules: its name and what
// it says.
type PhaseRule struct{ Name, Says string }

// PhaseRules lists the grammar's phase rules in grammar order.
func PhaseRules() []PhaseRule {
	out := make([]PhaseRule, len(phaseRules))
	for i, r := range phaseRules {
		out[i] = PhaseRule{Name: r.Name, Says: r.Says}
	}
	return out
}
