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
type PhaseRule struct {
	Name string `json:"name"`
	Says string `json:"says"`
}

// PhaseRules lists the grammar's phase rules in grammar order.
func PhaseRules() []PhaseRule {
	out := make([]PhaseRule, len(phaseRules))
	for i, r := range phaseRules {
		out[i] = PhaseRule{Name: r.Name, Says: r.Says}
	}
	return out
}

// StepVerbs lists the dictionary's step verbs, sorted: the first word of a
// method step's name is looked up among them.
func StepVerbs() []string { return append([]string(nil), stepVerbs[:]...) }

// Phases lists the backbone's phases in order.
func Phases() []Phase {
	out := make([]Phase, len(phaseNames))
	for i := range out {
		out[i] = Phase(i)
	}
	return out
}

// Meaning is what the phase is for, in the grammar's words.
func (x Phase) Meaning() string {
	if int(x) < len(phaseMeanings) {
		return phaseMeanings[x]
	}
	return ""
}

// ShapeProduction is one production of the grammar's shape language.
type ShapeProduction struct {
	Name string `json:"name"`
	Rule string `json:"rule"`
}

// ShapeProductions are the shape language's productions, the method's
// first.
func ShapeProductions() []ShapeProduction {
	out := make([]ShapeProduction, len(shapeProductions))
	for i, p := range shapeProductions {
		out[i] = ShapeProduction{Name: p[0], Rule: p[1]}
	}
	return out
}
