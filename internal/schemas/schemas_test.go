package schemas

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// A lazy schema compiles once, when first asked for (declaring one only
// makes the function: a hook process that never validates pays nothing,
// though the loop's verdict schema sits in its binary), and validates by
// 2020-12's rules; a broken one says why, every time it is asked for.
func TestLazy(t *testing.T) {
	get := Lazy("t.json", []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["a"]}`))
	s1, err := get()
	if err != nil {
		t.Fatal(err)
	}
	if s2, _ := get(); s2 != s1 {
		t.Fatal("compiled twice")
	}
	if s1.Validate(map[string]any{"a": 1}) != nil || s1.Validate(map[string]any{}) == nil {
		t.Fatal("the schema does not validate as written")
	}
	bad := Lazy("bad.json", []byte(`{"type": 7}`))
	if _, err := bad(); err == nil {
		t.Fatal("a broken schema compiled")
	}
	if _, err := bad(); err == nil {
		t.Fatal("a broken schema compiled on the second ask")
	}
}

// Leaves answers the rules a document breaks, each at its place, and the
// same complaint reached twice (through two branches of an allOf) once.
func TestLeaves(t *testing.T) {
	s, err := Compile("l.json", []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema",
		"type":"object","required":["a"],
		"properties":{"b":{"allOf":[{"type":"string"},{"type":"string"}]},"c":{"minimum":3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(map[string]any{"b": 1, "c": 1})
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("not a validation error: %v", err)
	}
	var got []string
	for _, e := range Leaves(ve) {
		got = append(got, Pointer(e)+" "+e.Message)
	}
	sort.Strings(got)
	want := []string{"/ missing properties: 'a'", "/b expected string, but got number", "/c must be >= 3 but found 1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("leaves:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Broken answers nothing for a document that holds and the leaves for one
// that does not.
func TestBroken(t *testing.T) {
	s, err := Compile("b.json", []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Broken(s, map[string]any{"a": 1}); got != nil || err != nil {
		t.Fatalf("a document that holds: %v, %v", got, err)
	}
	got, err := Broken(s, map[string]any{})
	if err != nil || len(got) != 1 || Pointer(got[0]) != "/" || got[0].Message != "missing properties: 'a'" {
		t.Fatalf("a document without a: %v, %v", got, err)
	}
}
