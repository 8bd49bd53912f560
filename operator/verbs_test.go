package operator

import (
	"encoding/json"
	"testing"

	"github.com/laserkit/laserkit/grammar"
)

// TestVerbTablesFollowTheGrammar reads the dictionary straight from the
// grammar and asks the generated lookups about every verb, and about one the
// grammar does not have: the tables are switches, and a case the generator
// dropped or misassigned would otherwise go unnoticed.
func TestVerbTablesFollowTheGrammar(t *testing.T) {
	var g struct {
		Dictionary struct {
			Steps map[string]struct {
				Reversible bool   `json:"reversible"`
				Outward    bool   `json:"outward"`
				Gloss      string `json:"gloss"`
			} `json:"steps"`
			Phases struct {
				OfVerb map[string]string `json:"of_verb"`
			} `json:"phases"`
		} `json:"dictionary"`
	}
	if err := json.Unmarshal(grammar.Canonical, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Dictionary.Steps) == 0 || len(g.Dictionary.Phases.OfVerb) == 0 {
		t.Fatal("no steps or phases read from the grammar")
	}
	for verb, want := range g.Dictionary.Steps {
		got, ok := LookupVerb(verb)
		if !ok || got != (VerbDefault{Reversible: want.Reversible, Outward: want.Outward, Gloss: want.Gloss}) {
			t.Errorf("LookupVerb(%q) = %+v, %t; the grammar says %+v", verb, got, ok, want)
		}
	}
	for verb, want := range g.Dictionary.Phases.OfVerb {
		if got, ok := PhaseOfVerb(verb); !ok || got.String() != want {
			t.Errorf("PhaseOfVerb(%q) = %v, %t; the grammar says %s", verb, got, ok, want)
		}
	}
	if v, ok := LookupVerb("frobnicate"); ok {
		t.Errorf("LookupVerb(frobnicate) = %+v, want not found", v)
	}
	if p, ok := PhaseOfVerb("frobnicate"); ok {
		t.Errorf("PhaseOfVerb(frobnicate) = %v, want not found", p)
	}
}
