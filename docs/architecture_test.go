package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

const module = "github.com/laserkit/laserkit/"

// pictureRows reads the package picture of architecture.md: one row per
// line of the fenced block under "## The packages", its packages split on
// " · ", a note after "←" left out.
func pictureRows(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "## The packages")
	if !ok {
		t.Fatal(`architecture.md has no "## The packages"`)
	}
	_, rest, ok = strings.Cut(rest, "```\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("architecture.md: no fenced picture under The packages")
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		line, _, _ = strings.Cut(line, "←")
		var row []string
		for _, p := range strings.Split(line, "·") {
			if p = strings.TrimSpace(p); p != "" {
				row = append(row, p)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// The picture of the packages is the code's: every package of the
// module but the internal ones and the test helpers is on it once, and
// each imports only packages on rows below its own.
func TestArchitecturePictureHolds(t *testing.T) {
	goTool := testenv.LookPath(t, "go")
	row := map[string]int{}
	for i, r := range pictureRows(t) {
		for _, p := range r {
			if _, dup := row[p]; dup {
				t.Errorf("%s is on the picture twice", p)
			}
			row[p] = i
		}
	}
	cmd := exec.Command(goTool, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	placed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		p := strings.TrimPrefix(fields[0], module)
		if left(p) {
			continue
		}
		placed[p] = true
		r, ok := row[p]
		if !ok {
			t.Errorf("%s is not on the picture in architecture.md", p)
			continue
		}
		for _, q := range fields[1:] {
			q, ours := strings.CutPrefix(q, module)
			if !ours || left(q) {
				continue
			}
			if rq, ok := row[q]; ok && rq <= r {
				t.Errorf("%s (row %d) imports %s (row %d): the picture must put it on a lower row", p, r+1, q, rq+1)
			}
		}
	}
	for p := range row {
		if !placed[p] {
			t.Errorf("the picture names %s, which is no package of the module", p)
		}
	}
}

// left reports a package the picture leaves out: internal helpers, the
// vendored code, the generator, the docs and scripts, and the packages
// that exist only for tests.
func left(p string) bool {
	for _, dir := range []string{"internal", "third_party", "gen", "docs", "scripts"} {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	last := p[strings.LastIndex(p, "/")+1:]
	return strings.HasSuffix(last, "test")
}

// The names architecture.md gives are the code's: every `pkg.Name`,
// `pkg.Type.Method` and `pkg.Type.Field` it writes names a package of the
// module (by its last path element) that declares it, outside its tests.
func TestArchitectureNamesExist(t *testing.T) {
	goTool := testenv.LookPath(t, "go")
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "list", "-f", "{{.ImportPath}}", module+"...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dirs := map[string][]string{} // last path element → package directories
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(p, module)
		dirs[path.Base(p)] = append(dirs[path.Base(p)], filepath.Join("..", filepath.FromSlash(p)))
	}
	declared := map[string]map[string]bool{}
	named := regexp.MustCompile("`([a-z]+)\\.([A-Z]\\w*(?:\\.[A-Z]\\w*)?)")
	seen := 0
	for _, m := range named.FindAllStringSubmatch(string(b), -1) {
		short, name := m[1], m[2]
		if len(dirs[short]) == 0 {
			t.Errorf("architecture.md names %s.%s, and the module has no package %s", short, name, short)
			continue
		}
		found := false
		for _, dir := range dirs[short] {
			if declared[dir] == nil {
				declared[dir] = declarations(t, dir)
			}
			found = found || declared[dir][name]
		}
		if !found {
			t.Errorf("architecture.md names %s.%s, which package %s does not declare", short, name, short)
		}
		seen++
	}
	if seen < 50 {
		t.Fatalf("read only %d names in architecture.md: the pattern no longer matches how it writes them", seen)
	}
}

// declarations are the names a package's non-test files declare at the
// top level, its methods as Type.Method and its struct fields as
// Type.Field.
func declarations(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				names[receiver(d)+d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, field := range st.Fields.List {
								for _, n := range field.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

// receiver is "Type." for a method, "" for a function.
func receiver(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	x := d.Recv.List[0].Type
	if star, ok := x.(*ast.StarExpr); ok {
		x = star.X
	}
	if g, ok := x.(*ast.IndexExpr); ok {
		x = g.X
	}
	if id, ok := x.(*ast.Ident); ok {
		return id.Name + "."
	}
	return ""
}
