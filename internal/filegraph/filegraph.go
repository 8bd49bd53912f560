// Package filegraph reads which files of a Go package use which: file A
// uses file B when A names a declaration made in B (a package-level name,
// a method, a struct field). Files that use each other in a circle cannot
// be read one floor at a time, so a package's test can hold them to none.
package filegraph

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Graph is the use graph of one package's non-test files: Uses[a][b] are
// the names file a uses from file b (base names of the files).
type Graph struct {
	Files []string
	Uses  map[string]map[string][]string
}

// Read type-checks the package in dir (its non-test files, imports read
// from source) and returns its use graph.
func Read(dir string) (*Graph, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no Go files", dir)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check(files[0].Name.Name, fset, files, info)
	if err != nil {
		return nil, err
	}
	g := &Graph{Uses: map[string]map[string][]string{}}
	for _, f := range files {
		from := filepath.Base(fset.File(f.Pos()).Name())
		g.Files = append(g.Files, from)
		g.Uses[from] = map[string][]string{}
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := info.Uses[id]
			if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() || !declared(obj, pkg) {
				return true
			}
			to := filepath.Base(fset.File(obj.Pos()).Name())
			if to != from && !slices.Contains(g.Uses[from][to], obj.Name()) {
				g.Uses[from][to] = append(g.Uses[from][to], obj.Name())
			}
			return true
		})
	}
	sort.Strings(g.Files)
	return g, nil
}

// declared: a package-level object, a method or a struct field (a local
// variable or a parameter is no file's declaration).
func declared(obj types.Object, pkg *types.Package) bool {
	switch o := obj.(type) {
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	case *types.Func:
		return true
	case *types.TypeName, *types.Const:
		return o.Parent() == pkg.Scope()
	}
	return false
}

// Circles are the sets of more than one file that each reach all the
// others through uses (the graph's strongly connected components), each
// sorted, in no particular order.
func (g *Graph) Circles() [][]string {
	index, low := map[string]int{}, map[string]int{}
	on := map[string]bool{}
	var stack []string
	var out [][]string
	next := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for w := range g.Uses[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var c []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			on[w] = false
			c = append(c, w)
			if w == v {
				break
			}
		}
		if len(c) > 1 {
			sort.Strings(c)
			out = append(out, c)
		}
	}
	for _, v := range g.Files {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return out
}

// Explain lists the uses inside a circle, one "a → b: names" line each.
func (g *Graph) Explain(circle []string) string {
	in := map[string]bool{}
	for _, f := range circle {
		in[f] = true
	}
	var b strings.Builder
	for _, a := range circle {
		tos := make([]string, 0, len(g.Uses[a]))
		for t := range g.Uses[a] {
			if in[t] {
				tos = append(tos, t)
			}
		}
		sort.Strings(tos)
		for _, t := range tos {
			fmt.Fprintf(&b, "%s → %s: %s\n", a, t, strings.Join(g.Uses[a][t], " "))
		}
	}
	return b.String()
}
