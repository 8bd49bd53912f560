package report

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/laserkit/laserkit/internal/browsertest"
	"github.com/laserkit/laserkit/internal/htmlreport"
)

// TestSessionReportInChromium loads a real session's page in headless
// Chromium, network off: no request but the page, no console complaint,
// all nine plots laid out with their marks, dark and light schemes, no
// sideways scrolling on a phone; the screenshot stays in the temp dir.
func TestSessionReportInChromium(t *testing.T) {
	exe := browsertest.Require(t)
	e, slug := Session4(t, t.TempDir())
	s, err := Load(e, slug)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "session.html")
	if err := os.WriteFile(file, htmlreport.Render(Document([]Session{s}, "/repo", now)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range [][2]int{{1200, 900}, {390, 844}} {
		r, err := browsertest.Load(context.Background(), exe, file, browsertest.Options{Width: w[0], Height: w[1], Screenshot: true,
			Selectors: []string{"figure[data-plot]", "figure[data-plot] .mark", "details.equiv summary"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Foreign()) > 0 || len(r.Problems) > 0 {
			t.Errorf("%dpx: requests %v, problems %v", w[0], r.Foreign(), r.Problems)
		}
		if c := r.Counts["figure[data-plot]"]; c != [2]int{9, 9} {
			t.Errorf("%dpx: plots %v, want 9 visible", w[0], c)
		}
		if c := r.Counts["figure[data-plot] .mark"]; c[0] == 0 || c[1] != c[0] {
			t.Errorf("%dpx: marks %v", w[0], c)
		}
		if c := r.Counts["details.equiv summary"]; c[0] != 9 || c[1] != 9 {
			t.Errorf("%dpx: table toggles %v, want one per plot", w[0], c)
		}
		if r.Overflow || r.DarkBackground == r.LightBackground {
			t.Errorf("%dpx: overflow %v, dark %s light %s", w[0], r.Overflow, r.DarkBackground, r.LightBackground)
		}
		shot := filepath.Join(dir, "session-"+string(rune('0'+w[0]/1000))+".png")
		if err := os.WriteFile(shot, r.Screenshot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %s", shot)
	}
}
