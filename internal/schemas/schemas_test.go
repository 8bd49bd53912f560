package schemas

import "testing"

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
