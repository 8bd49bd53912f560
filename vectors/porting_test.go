package vectors

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
)

// needTool finds a program the test runs, or skips loudly — and fails
// under CI=true, where CI installs it.
func needTool(t *testing.T, name string) string {
	t.Helper()
	return testenv.LookPath(t, name)
}

func runFiles(t *testing.T, opts RunOptions, names ...string) *Run {
	t.Helper()
	var files []VectorFile
	for _, n := range names {
		files = append(files, shippedFile(t, n))
	}
	run, err := RunImplementation(context.Background(), opts, files)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func allPass(t *testing.T, run *Run, want map[string]int) {
	t.Helper()
	for _, r := range run.Reports {
		for i, f := range r.Failures {
			if i < 3 {
				t.Errorf("%s %s: %s %v", r.Kind, f.Label, f.Error, f.Diff)
			}
		}
		if n, ok := want[r.Kind]; ok && (r.Passed != n || len(r.Failures) != 0) {
			t.Errorf("%s: %s, want %d passed", r.Kind, r.Summary(), n)
		}
	}
}

// The worked example of docs/porting.md, run as written: its normalise
// passes every case.
func TestPortingWorkedExample(t *testing.T) {
	python := needTool(t, "python3")
	doc, err := os.ReadFile("../docs/porting.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## 2\\. A worked example.*?```python\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/porting.md has no worked example in Python")
	}
	tiny := filepath.Join(t.TempDir(), "tiny.py")
	if err := os.WriteFile(tiny, m[1], 0o644); err != nil {
		t.Fatal(err)
	}
	run := runFiles(t, RunOptions{Command: []string{python, tiny}, Timeout: 20 * time.Second}, "normalise.json", "drift-parity.json")
	if run.Impl.Name != "tiny" {
		t.Fatalf("impl %+v", run.Impl)
	}
	allPass(t, run, map[string]int{"normalise": 46})
	for _, r := range run.Reports {
		if r.Kind == "drift" && r.Skipped == 0 {
			t.Errorf("drift: %s; the example does not list drift", r.Summary())
		}
	}
}

// A port written from docs/porting.md alone (testdata/porting/adapter.mjs,
// in JavaScript) agrees with every case of the kinds it implements: the
// page is enough to write one.
func TestPortingFromTheDocAlone(t *testing.T) {
	node := needTool(t, "node")
	run := runFiles(t, RunOptions{Command: []string{node, "testdata/porting/adapter.mjs", "../grammar/grammar.json"}, Timeout: 20 * time.Second},
		"normalise.json", "laserscore.json", "collisions.json", "classify.json", "grammar-shapes.json",
		"drift-parity.json", "drift-upstream-0.53.0.json", "drift-upstream-sdk-0.4.2.json")
	if run.Impl.Language != "javascript" {
		t.Fatalf("impl %+v", run.Impl)
	}
	allPass(t, run, map[string]int{"normalise": 46, "laserscore": 31, "collisions": 8, "classify": 72, "shape": 181, "drift": 235})
}
