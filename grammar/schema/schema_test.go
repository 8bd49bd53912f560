package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/grammar"
)

func TestShippedGrammarVerifies(t *testing.T) {
	if err := Verify(grammar.Canonical); err != nil {
		t.Fatalf("shipped grammar does not verify: %v", err)
	}
}

// edit applies f to the parsed canonical grammar and returns the rendering.
func edit(t *testing.T, f func(v *grammar.Value)) []byte {
	t.Helper()
	v, err := grammar.Parse(grammar.Canonical)
	if err != nil {
		t.Fatal(err)
	}
	f(&v)
	return grammar.Render(v)
}

func at(t *testing.T, v *grammar.Value, ptr string) *grammar.Value {
	t.Helper()
	x, err := v.Lookup(ptr)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestValidateNamesPointerAndRule(t *testing.T) {
	cases := []struct {
		name        string
		edit        func(v *grammar.Value)
		pointer     string
		rule        string
		messagePart string
	}{
		{"weight as string", func(v *grammar.Value) {
			w := at(t, v, "/calibration/weights/goal")
			*w = grammar.Value{Kind: grammar.String, Str: "0.5"}
		}, "/calibration/weights/goal", "type", "string"},
		{"weights do not sum to 1", func(v *grammar.Value) {
			at(t, v, "/calibration/weights/goal").Num = "0.6"
		}, "/calibration/weights", "weights-sum", "sum to 1"},
		{"weight above 1", func(v *grammar.Value) {
			at(t, v, "/calibration/weights/progress").Num = "1.2"
		}, "/calibration/weights/progress", "maximum", ""},
		{"missing normaliser", func(v *grammar.Value) {
			v.Members = removeKey(v.Members, "normalizer")
		}, "/", "required", "normalizer"},
		{"operator pattern that does not compile", func(v *grammar.Value) {
			at(t, v, "/operator_patterns/irreversible/0/pattern").Str = `git (push`
		}, "/operator_patterns/irreversible/0/pattern", "regexp2", "compile"},
		{"shape pattern that rejects its examples", func(v *grammar.Value) {
			at(t, v, "/dictionary/phases/shape_language/pattern").Str = `^check$`
		}, "/dictionary/phases/shape_language/shapes/0", "shape-accepted", "rejects"},
		{"phase of an unknown verb", func(v *grammar.Value) {
			ov := at(t, v, "/dictionary/phases/of_verb")
			ov.Members = append(ov.Members, grammar.Member{Key: "yeet", Value: grammar.Value{Kind: grammar.String, Str: "act"}})
		}, "/dictionary/phases/of_verb/yeet", "known-verb", "yeet"},
		{"unknown phase rule", func(v *grammar.Value) {
			at(t, v, "/dictionary/phases/rules/0/name").Str = "act-twice"
		}, "/dictionary/phases/rules/0/name", "enum", ""},
		{"depth naming an unknown mode", func(v *grammar.Value) {
			d := at(t, v, "/modulation/depths/deep")
			d.Items = append(d.Items, grammar.Value{Kind: grammar.String, Str: "daydreaming"})
		}, "/modulation/depths/deep/3", "known-mode", "daydreaming"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(edit(t, c.edit))
			var ve *grammar.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want a ValidationError, got %v", err)
			}
			for _, p := range ve.Problems {
				if p.Pointer == c.pointer && p.Rule == c.rule && strings.Contains(p.Message, c.messagePart) {
					return
				}
			}
			t.Fatalf("no problem at %s with rule %s; got %v", c.pointer, c.rule, err)
		})
	}
}

func TestVerifyDetectsEditedDescription(t *testing.T) {
	data := edit(t, func(v *grammar.Value) {
		d := at(t, v, "/drift_score/note")
		d.Str = strings.Replace(d.Str, "displacement", "displacemant", 1)
	})
	err := Verify(data)
	var hm *grammar.HashMismatchError
	if !errors.As(err, &hm) {
		t.Fatalf("want HashMismatchError, got %v", err)
	}
	shipped, _ := grammar.HashBytes(grammar.Canonical)
	if hm.Stored != shipped || hm.Computed == shipped {
		t.Fatalf("mismatch reported wrongly: %+v", hm)
	}
	if !strings.Contains(err.Error(), "hashes differ") {
		t.Fatalf("message should say the hashes differ: %v", err)
	}
}

func removeKey(ms []grammar.Member, key string) []grammar.Member {
	out := ms[:0:0]
	for _, m := range ms {
		if m.Key != key {
			out = append(out, m)
		}
	}
	return out
}
