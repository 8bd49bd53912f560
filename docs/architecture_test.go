package docs

import (
	"os"
	"os/exec"
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
