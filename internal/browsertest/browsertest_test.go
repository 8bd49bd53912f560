package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The harness sees what it is meant to catch: a page that asks the network
// for an image and writes a console error fails both checks, and a clean
// one passes them.
func TestHarnessCatchesRequestsAndErrors(t *testing.T) {
	exe := Require(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.html")
	good := filepath.Join(dir, "good.html")
	if err := os.WriteFile(bad, []byte(`<!DOCTYPE html><html><head><title>bad</title></head><body><p id="p">x</p>`+
		`<img src="http://report.invalid/pixel.png"/><script>console.error("boom")</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, []byte(`<!DOCTYPE html><html><head><title>good</title><style>body{background:#fff}@media (prefers-color-scheme:dark){body{background:#000}}</style></head><body><p id="p">x</p><p style="display:none" class="h">y</p></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}

	r, err := Load(context.Background(), exe, bad, Options{Selectors: []string{"#p"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Foreign(); len(f) == 0 || !strings.Contains(strings.Join(f, " "), "report.invalid") {
		t.Errorf("the image request was not seen: %v", r.Requests)
	}
	if !strings.Contains(strings.Join(r.Problems, "\n"), "boom") {
		t.Errorf("the console error was not seen: %v", r.Problems)
	}

	r, err = Load(context.Background(), exe, good, Options{Selectors: []string{"#p", ".h"}, Screenshot: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Foreign()) != 0 || len(r.Problems) != 0 {
		t.Errorf("a clean page: requests %v, problems %v", r.Foreign(), r.Problems)
	}
	if r.Counts["#p"] != [2]int{1, 1} || r.Counts[".h"] != [2]int{1, 0} {
		t.Errorf("counts %v", r.Counts)
	}
	if r.DarkBackground != "rgb(0, 0, 0)" || r.LightBackground != "rgb(255, 255, 255)" {
		t.Errorf("schemes: dark %s light %s", r.DarkBackground, r.LightBackground)
	}
	if len(r.Screenshot) < 100 || string(r.Screenshot[1:4]) != "PNG" {
		t.Error("no PNG screenshot")
	}
}
