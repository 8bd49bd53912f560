package filegraph

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A package written here: a.go and b.go use each other, c.go uses a.go
// only, d.go stands alone. The circle is a and b, nothing else.
func TestCircles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":    "module example.com/p\n\ngo 1.22\n",
		"a.go":      "package p\n\nfunc A() int { return B() }\n\ntype T struct{ F int }\n",
		"b.go":      "package p\n\nfunc B() int { var t T; return t.F }\n",
		"c.go":      "package p\n\nimport \"strings\"\n\nfunc C() string { return strings.Repeat(\"x\", A()) }\n",
		"d.go":      "package p\n\nfunc D(x int) int { y := x; return y }\n",
		"d_test.go": "package p\n\nfunc useAll() { A(); C() }\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.go", "b.go", "c.go", "d.go"}; !slices.Equal(g.Files, want) {
		t.Errorf("files %v, want %v", g.Files, want)
	}
	if got := g.Uses["b.go"]["a.go"]; !slices.Equal(got, []string{"T", "F"}) {
		t.Errorf("b.go uses %v of a.go, want the type T and its field F", got)
	}
	if len(g.Uses["d.go"]) != 0 {
		t.Errorf("d.go uses %v: a local variable is no file's declaration", g.Uses["d.go"])
	}
	circles := g.Circles()
	if len(circles) != 1 || !slices.Equal(circles[0], []string{"a.go", "b.go"}) {
		t.Fatalf("circles %v, want [[a.go b.go]]", circles)
	}
	if got := g.Explain(circles[0]); got != "a.go → b.go: B\nb.go → a.go: T F\n" {
		t.Errorf("explain: %q", got)
	}
}
