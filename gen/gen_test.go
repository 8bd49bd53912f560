package main

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/grammar"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := moduleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGeneratedFilesAreFresh regenerates every target in memory and compares
// it with what is committed.
func TestGeneratedFilesAreFresh(t *testing.T) {
	r := root(t)
	for _, pkg := range slices.Sorted(maps.Keys(targets)) {
		files, err := generate(pkg, r, filepath.Join(r, "grammar", "grammar.json"))
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for name, want := range files {
			path := filepath.Join(r, targets[pkg].dir, name)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: %v (run go generate ./...)", path, err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: run go generate ./... and commit the result", path)
			}
		}
	}
}

// TestNoOrphanGeneratedFiles finds every zz_generated file in the module and
// checks that gen still produces it, so a removed table cannot linger.
func TestNoOrphanGeneratedFiles(t *testing.T) {
	r := root(t)
	produced := map[string]bool{}
	for _, pkg := range slices.Sorted(maps.Keys(targets)) {
		files, err := generate(pkg, r, filepath.Join(r, "grammar", "grammar.json"))
		if err != nil {
			t.Fatal(err)
		}
		for name := range files {
			produced[filepath.Join(targets[pkg].dir, name)] = true
		}
	}
	err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasPrefix(d.Name(), "zz_generated") {
			rel, _ := filepath.Rel(r, path)
			if !produced[rel] {
				t.Errorf("%s looks generated but gen does not produce it", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var headerRe = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

func TestGeneratedGoHasHeaderAndIsDeterministic(t *testing.T) {
	r := root(t)
	for _, pkg := range slices.Sorted(maps.Keys(targets)) {
		a, err := generate(pkg, r, filepath.Join(r, "grammar", "grammar.json"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := generate(pkg, r, filepath.Join(r, "grammar", "grammar.json"))
		for name, src := range a {
			if !bytes.Equal(src, b[name]) {
				t.Errorf("%s/%s differs between two runs", pkg, name)
			}
			if strings.HasSuffix(name, ".go") {
				first, _, _ := strings.Cut(string(src), "\n")
				if !headerRe.MatchString(first) {
					t.Errorf("%s/%s: first line %q is not a generated-code header", pkg, name, first)
				}
			}
		}
	}
}

// TestEveryTargetHasAGoGenerateDirective keeps go generate ./... covering
// every package gen knows about.
func TestEveryTargetHasAGoGenerateDirective(t *testing.T) {
	r := root(t)
	for _, pkg := range slices.Sorted(maps.Keys(targets)) {
		dir := targets[pkg].dir
		doc, err := os.ReadFile(filepath.Join(r, dir, "doc.go"))
		if err != nil {
			t.Fatal(err)
		}
		gen, err := filepath.Rel(filepath.Join(r, dir), filepath.Join(r, "gen"))
		if err != nil {
			t.Fatal(err)
		}
		directive := "//go:generate go run " + filepath.ToSlash(gen)
		if !bytes.Contains(doc, []byte(directive+"\n")) {
			t.Errorf("%s/doc.go has no %s directive", dir, directive)
		}
	}
}

// TestGeneratorNeedsNoGeneratedCode keeps gen buildable while the tables it
// writes are stale or half-written: no package gen is built from (as go
// list, the real tool, resolves them) is one of its targets.
func TestGeneratorNeedsNoGeneratedCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.Dir}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	r := root(t)
	deps := map[string]bool{}
	for _, dir := range strings.Fields(string(out)) {
		deps[dir] = true
	}
	for _, pkg := range slices.Sorted(maps.Keys(targets)) {
		if dir := filepath.Join(r, targets[pkg].dir); deps[dir] {
			t.Errorf("gen is built from %s, which it generates", targets[pkg].dir)
		}
	}
}

// modified writes a copy of the grammar with f applied and its content hash
// recomputed, so the generator accepts it.
func modified(t *testing.T, f func(v *grammar.Value)) string {
	t.Helper()
	v, err := grammar.Parse(grammar.Canonical)
	if err != nil {
		t.Fatal(err)
	}
	f(&v)
	h, _ := v.Get("content_hash")
	h.Str = grammar.ContentHash(v)
	path := filepath.Join(t.TempDir(), "grammar.json")
	if err := os.WriteFile(path, grammar.Render(v), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func at(t *testing.T, v *grammar.Value, ptr string) *grammar.Value {
	t.Helper()
	x, err := v.Lookup(ptr)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func str(s string) grammar.Value { return grammar.Value{Kind: grammar.String, Str: s} }

// edited is the modification the provenance tests use: one extra stopword, a
// changed pair of weights (still summing to 1), one more operator pattern.
func edited(t *testing.T) string {
	return modified(t, func(v *grammar.Value) {
		sw := at(t, v, "/normalizer/stopwords")
		sw.Items = append(sw.Items, str("zebra"))
		at(t, v, "/calibration/weights/goal").Num = "0.6"
		at(t, v, "/calibration/weights/distance").Num = "0.2"
		at(t, v, "/use").Str = "Spell your state each step, zebra."
		at(t, v, "/fields/distance").Str = "integer 0-10 — zebra steps to go"
		irr := at(t, v, "/operator_patterns/irreversible")
		irr.Items = append(irr.Items, grammar.Value{Kind: grammar.Object, Members: []grammar.Member{
			{Key: "pattern", Value: str(`\bterraform\s+destroy\b`)},
			{Key: "label", Value: str("terraform destroy (tears down infrastructure)")},
			{Key: "outward", Value: grammar.Value{Kind: grammar.Bool, Bool: true}},
		}})
	})
}

// parseGen parses one generated Go file.
func parseGen(t *testing.T, pkg, grammarPath string) *ast.File {
	t.Helper()
	files, err := generate(pkg, root(t), grammarPath)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "zz.go", files["zz_generated_grammar.go"], 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// valueOf returns the initialiser of the package-level var or const name.
func valueOf(t *testing.T, f *ast.File, name string) ast.Expr {
	t.Helper()
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range gd.Specs {
			vs, ok := s.(*ast.ValueSpec)
			if !ok {
				continue
			}
			for i, n := range vs.Names {
				if n.Name == name {
					return vs.Values[i]
				}
			}
		}
	}
	t.Fatalf("no declaration of %s in generated code", name)
	return nil
}

// funcOf returns the body of the generated function called name: tables
// that are switches rather than data.
func funcOf(t *testing.T, f *ast.File, name string) *ast.BlockStmt {
	t.Helper()
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
			return fd.Body
		}
	}
	t.Fatalf("no function %s in generated code", name)
	return nil
}

func stringsIn(e ast.Node) []string {
	var out []string
	ast.Inspect(e, func(n ast.Node) bool {
		if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			s, _ := strconv.Unquote(bl.Value)
			out = append(out, s)
		}
		return true
	})
	return out
}

func TestTablesFollowModifiedGrammar(t *testing.T) {
	canonical := filepath.Join(root(t), "grammar", "grammar.json")
	changed := edited(t)

	before, after := parseGen(t, "laserbrain", canonical), parseGen(t, "laserbrain", changed)
	if slices.Contains(stringsIn(funcOf(t, before, "isStopword")), "zebra") {
		t.Fatal("zebra is already a stopword in the shipped grammar; pick another word")
	}
	if !slices.Contains(stringsIn(funcOf(t, after, "isStopword")), "zebra") {
		t.Error("extra stopword did not reach the generated stopword table")
	}
	for name, want := range map[string]string{"weightGoal": "0.6", "weightDistance": "0.2", "weightProgress": "0.2"} {
		lit, ok := valueOf(t, after, name).(*ast.BasicLit)
		if !ok || lit.Value != want {
			t.Errorf("%s = %v after the edit, want %s", name, valueOf(t, after, name), want)
		}
	}
	if lit := valueOf(t, before, "weightGoal").(*ast.BasicLit); lit.Value != "0.5" {
		t.Errorf("weightGoal = %s in the shipped grammar, want 0.5", lit.Value)
	}

	// What an agent is told follows the grammar too.
	if lit, ok := valueOf(t, after, "grammarUse").(*ast.BasicLit); !ok || lit.Value != `"Spell your state each step, zebra."` {
		t.Errorf("grammarUse = %v after the edit", valueOf(t, after, "grammarUse"))
	}
	if !slices.Contains(stringsIn(valueOf(t, after, "grammarFields")), "integer 0-10 — zebra steps to go") {
		t.Error("the edited field text did not reach grammarFields")
	}

	opBefore, opAfter := parseGen(t, "shell", canonical), parseGen(t, "shell", changed)
	nb := len(valueOf(t, opBefore, "irreversiblePatterns").(*ast.CompositeLit).Elts)
	na := len(valueOf(t, opAfter, "irreversiblePatterns").(*ast.CompositeLit).Elts)
	if na != nb+1 {
		t.Errorf("irreversible patterns: %d before, %d after adding one", nb, na)
	}
	if !slices.Contains(stringsIn(valueOf(t, opAfter, "irreversiblePatterns")), "terraform destroy (tears down infrastructure)") {
		t.Error("the added operator pattern's label is not in the generated table")
	}
}

// TestBehaviourFollowsModifiedGrammar builds the real laserbrain binary with
// the tables generated from an edited grammar (via a build overlay) and shows
// the normaliser now drops the new stopword.
func TestBehaviourFollowsModifiedGrammar(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice; skipped in -short mode")
	}
	r := root(t)
	files, err := generate("laserbrain", r, edited(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	replacement := filepath.Join(dir, "zz_generated_grammar.go")
	if err := os.WriteFile(replacement, files["zz_generated_grammar.go"], 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{
		filepath.Join(r, "laserbrain", "zz_generated_grammar.go"): replacement,
	}})
	overlayPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayPath, overlay, 0o644); err != nil {
		t.Fatal(err)
	}

	emit := func(extra ...string) string {
		args := append([]string{"run"}, extra...)
		args = append(args, "./cmd/laserbrain", "vectors", "emit", "--kind", "normalise")
		cmd := exec.Command("go", args...)
		cmd.Dir = r
		cmd.Stdin = strings.NewReader(`{"cases":[{"in":"the zebra crossing"}]}`)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := emit(); !strings.Contains(out, `"zebra"`) {
		t.Fatalf("shipped grammar: zebra should be a token:\n%s", out)
	}
	if out := emit("-overlay", overlayPath); strings.Contains(out, `"zebra"`) {
		t.Fatalf("edited grammar: zebra should be dropped as a stopword:\n%s", out)
	}
}

func TestGeneratorRefusesBadGrammar(t *testing.T) {
	r := root(t)
	// Edited without re-hashing: the stored hash no longer matches.
	v, _ := grammar.Parse(grammar.Canonical)
	sw := at(t, &v, "/normalizer/stopwords")
	sw.Items = append(sw.Items, str("zebra"))
	stale := filepath.Join(t.TempDir(), "grammar.json")
	if err := os.WriteFile(stale, grammar.Render(v), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := generate("laserbrain", r, stale); err == nil || !strings.Contains(err.Error(), "content hashes differ") {
		t.Errorf("unhashed edit: want a hash mismatch error, got %v", err)
	}

	badWeight := modified(t, func(v *grammar.Value) {
		*at(t, v, "/calibration/weights/goal") = str("heavy")
	})
	if _, err := generate("laserbrain", r, badWeight); err == nil || !strings.Contains(err.Error(), "/calibration/weights/goal") {
		t.Errorf("string weight: want an error naming /calibration/weights/goal, got %v", err)
	}

	noCycle := modified(t, func(v *grammar.Value) {
		at(t, v, "/verdicts/meta/rule").Str = "Fires when things repeat."
	})
	if _, err := generate("laserbrain", r, noCycle); err == nil || !strings.Contains(err.Error(), "/verdicts/meta/rule") {
		t.Errorf("rule text without parameters: want an error naming /verdicts/meta/rule, got %v", err)
	}

	infiniteStem := modified(t, func(v *grammar.Value) {
		at(t, v, "/normalizer/stem_pattern").Str = "(e+d)$"
	})
	if _, err := generate("laserbrain", r, infiniteStem); err == nil || !strings.Contains(err.Error(), "/normalizer/stem_pattern") {
		t.Errorf("unbounded stem pattern: want an error naming /normalizer/stem_pattern, got %v", err)
	}
	if _, err := generate("nosuchpkg", r, filepath.Join(r, "grammar", "grammar.json")); err == nil {
		t.Error("unknown package accepted")
	}
}

func TestDerivedTables(t *testing.T) {
	// The stem pattern's language, expanded by hand from the grammar's
	// (ings?|edly|ed|ers?|es|s|tion|ment)$.
	got, err := suffixLanguage(`(ings?|edly|ed|ers?|es|s|tion|ment)$`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ed", "edly", "er", "ers", "es", "ing", "ings", "ment", "s", "tion"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("suffixLanguage = %v, want %v", got, want)
	}
	tb, err := classBytes(`[a-z0-9']+`)
	if err != nil || tb != "'0123456789abcdefghijklmnopqrstuvwxyz" {
		t.Errorf("classBytes = %q, %v", tb, err)
	}
	for _, bad := range []string{`[A-Z]+`, `\w+`, `[a-z]`, `[a-zé]+`} {
		if _, err := classBytes(bad); err == nil {
			t.Errorf("classBytes(%q) accepted", bad)
		}
	}
	c, err := cycleParams("Fires on period 2 to 6, over two whole repeats with a floor of six readings (need = max(6, 2p)).")
	if err != nil || c != (CycleParams{MinPeriod: 2, MaxPeriod: 6, NeedFloor: 6, Repeats: 2}) {
		t.Errorf("cycleParams = %+v, %v", c, err)
	}
}
