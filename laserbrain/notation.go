package laserbrain

// The notation an agent spells, as the grammar states it. The tables are
// generated from grammar/grammar.json (zz_generated_grammar.go); these
// accessors hand out copies.

// GrammarField is one field of a reasoning state and what the grammar
// says it holds.
type GrammarField struct {
	Name string
	Says string
}

// Notation is what a model needs to spell a reasoning state.
type Notation struct {
	// Kind is the grammar's kind ("reasoning-state").
	Kind string
	// Fields are every field, in the grammar's order.
	Fields []GrammarField
	// Measured are the fields a reading scores; Carried the ones it keeps.
	Measured, Carried []string
	// Progress are the progress values; DistanceMin and DistanceMax bound
	// the distance.
	Progress                 []string
	DistanceMin, DistanceMax int
	// WellFormed says what a state needs to be read at all.
	WellFormed string
	// Use is the grammar's own instruction to the agent.
	Use string
	// Example is a laserscore, the canonical spelling of a reading.
	Example string
}

// GrammarNotation returns the notation of the grammar these tables were
// generated from.
func GrammarNotation() Notation {
	return Notation{
		Kind:        grammarKind,
		Fields:      append([]GrammarField(nil), grammarFields[:]...),
		Measured:    append([]string(nil), laserscoreMeasured[:]...),
		Carried:     append([]string(nil), laserscoreCarried[:]...),
		Progress:    append([]string(nil), progressEnum[:]...),
		DistanceMin: distanceMin,
		DistanceMax: distanceMax,
		WellFormed:  grammarWellFormed,
		Use:         grammarUse,
		Example:     laserscoreExample,
	}
}

// Says is what the grammar says field name holds ("" for no such field).
func (n Notation) Says(name string) string {
	for _, f := range n.Fields {
		if f.Name == name {
			return f.Says
		}
	}
	return ""
}
