package report

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/laserkit/laserkit/internal/browsertest"
)

// TestFleetReportInChromium loads the fixture fleet's page in a real
// headless Chromium from a file URL with the network off: nothing may be
// requested but the page, nothing may complain, every plot must be laid
// out, the colour scheme must follow the browser, and a phone-wide window
// must not scroll sideways. The screenshots stay in the test's temp dir.
func TestFleetReportInChromium(t *testing.T) {
	exe := browsertest.Require(t)
	f := fixture(t)
	f.Agents = append(f.Agents, longAgent("a4", 1500, f.Generated))
	dir := t.TempDir()
	file := filepath.Join(dir, "fleet.html")
	if err := os.WriteFile(file, Render(f), 0o644); err != nil {
		t.Fatal(err)
	}
	sels := []string{"figure[data-plot]", "figure[data-plot] svg", "#drift .mark", "#collision-graph .edge", "#gate-labels .seg", "section", "table", "[data-note='warning']"}
	for _, w := range []struct {
		name          string
		width, height int
	}{{"desktop", 1200, 900}, {"phone", 390, 844}} {
		r, err := browsertest.Load(context.Background(), exe, file, browsertest.Options{Width: w.width, Height: w.height, Selectors: sels, Screenshot: true})
		if err != nil {
			t.Fatal(err)
		}
		if f := r.Foreign(); len(f) > 0 {
			t.Errorf("%s: the page asked for %v", w.name, f)
		}
		if len(r.Problems) > 0 {
			t.Errorf("%s: console/log problems: %v", w.name, r.Problems)
		}
		// 4 agent timelines, verdict bars, the collision graph, gate bars,
		// and 9 plots of the ponder session.
		if c := r.Counts["figure[data-plot]"]; c[0] != 16 || c[1] != c[0] {
			t.Errorf("%s: plots %v (found, visible), want 16 visible", w.name, c)
		}
		if c := r.Counts["figure[data-plot] svg"]; c[1] != c[0] || c[0] < 16 {
			t.Errorf("%s: svgs %v", w.name, c)
		}
		for _, s := range []string{"#drift .mark", "#collision-graph .edge", "#gate-labels .seg", "[data-note='warning']"} {
			if c := r.Counts[s]; c[0] == 0 || c[1] != c[0] {
				t.Errorf("%s: %s %v (found, visible)", w.name, s, c)
			}
		}
		if c := r.Counts["section"]; c[0] != 8 { // overview, drift, collisions, gate, changes, supervisor, sessions, sources
			t.Errorf("%s: %d sections", w.name, c[0])
		}
		if r.Overflow {
			t.Errorf("%s: the page scrolls sideways", w.name)
		}
		if r.DarkBackground == r.LightBackground || r.LightBackground != "rgb(255, 255, 255)" {
			t.Errorf("%s: backgrounds dark %s light %s", w.name, r.DarkBackground, r.LightBackground)
		}
		shot := filepath.Join(dir, "fleet-"+w.name+".png")
		if err := os.WriteFile(shot, r.Screenshot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s screenshot: %s (%d bytes)", w.name, shot, len(r.Screenshot))
		if d := os.Getenv("REPORT_SHOTS"); d != "" {
			_ = os.WriteFile(filepath.Join(d, "fleet-"+w.name+".png"), r.Screenshot, 0o644)
		}
	}
}
