package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/htmlreport"
	ht "github.com/laserkit/laserkit/internal/htmlreport/htmltest"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/ponder/oca"
)

var now = time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC)

// Session drives the real engine through a four-pass session and returns
// the engine and the slug. The numbers each pass must produce are derived
// in the comments from SPEC.md §7.
func Session4(t testing.TB, root string) (*ponder.Engine, string) {
	t.Helper()
	for _, f := range []string{"src/a.go", "src/b.go", "src/c.go"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := ponder.New(root, oca.New(oca.Config{Getenv: func(string) string { return "off" }}))
	e.Now = func() time.Time { return now }
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	st, err := e.Start(ponder.StartOptions{Subject: "the payments API", Lens: "api", Passes: 6})
	if err != nil {
		t.Fatal(err)
	}
	slug := st.Slug
	voices, err := ponder.ParseDeliberation([]byte(`{"voices": {"skeptic": "re-read every claim", "builder": "all concrete", "dreamer": "nothing missed", "empath": "calibrated"}}`))
	if err != nil {
		t.Fatal(err)
	}
	churn := func(x float64) { must(e.Predict(slug, x, nil)) }
	must(e.Units(slug, ponder.UnitsOptions{Scan: "src"}))
	// Pass 1: one finding on u0001 (grades it), u0002 and u0003 graded:
	// coverage 3/3; churn, novelty, thrash null → 3 Rule-6 misses; R2.
	must(e.Deliberate(slug, voices, false))
	must(e.Delta(slug, []byte(`{"voice":"dreamer","op":"add","unitId":"u0001","severity":"should","confidence":0.8,"text":"a lacks tests"}`+"\n")))
	must(e.Grade(slug, []string{"u0002", "u0003"}, nil))
	must(e.Judge(slug))
	must(e.Decide(slug, "continue"))
	// Pass 2: forecast 0.5; one edit of the one live finding: churn 1/1 =
	// 1 (misses < 0.10), novelty 0, thrash 0 (f0001 was not edited in pass
	// 1) → 1 miss, continue; surprise |0.5 − 1| = 0.5.
	churn(0.5)
	must(e.Deliberate(slug, voices, false))
	must(e.Delta(slug, []byte(`{"voice":"builder","op":"edit","findingId":"f0001","recommendation":"add a table test"}`+"\n")))
	must(e.Judge(slug))
	must(e.Decide(slug, "continue"))
	// Pass 3: forecast 0.1, silence: churn 0, novelty 0, thrash 0 → 0
	// misses, but pass 2 missed → continue; surprise 0.1.
	churn(0.1)
	must(e.Deliberate(slug, voices, false))
	must(e.Judge(slug))
	must(e.Decide(slug, "continue"))
	// Pass 4: forecast 0, silence again → stop (R6); surprise 0.
	churn(0)
	must(e.Deliberate(slug, voices, false))
	must(e.Judge(slug))
	must(e.Decide(slug, "stop"))
	return e, slug
}

func TestLoadReadsTheSessionAsJudged(t *testing.T) {
	e, slug := Session4(t, t.TempDir())
	s, err := Load(e, slug)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != "converged" || s.Budget != 6 || s.Graded != 3 || s.Counted != 3 || s.Live != 1 || len(s.Passes) != 4 {
		t.Fatalf("session %+v", s)
	}
	wantMisses := []int{3, 1, 0, 0}
	wantVerdict := []string{"continue", "continue", "continue", "stop"}
	for i, p := range s.Passes {
		if len(p.Misses) != wantMisses[i] || p.Verdict != wantVerdict[i] {
			t.Errorf("pass %d: %d misses %v, verdict %s", p.N, len(p.Misses), p.Misses, p.Verdict)
		}
	}
	if s.Passes[0].Churn != nil || *s.Passes[1].Churn != 1 || *s.Passes[1].Surprise != 0.5 || *s.Passes[2].Forecast != 0.1 {
		t.Errorf("metrics: %+v", s.Passes)
	}
	if !strings.HasPrefix(s.Converged(), "Converged at pass 4 by Rule 6") {
		t.Errorf("standing %q", s.Converged())
	}
}

func TestPagePlacesEveryPass(t *testing.T) {
	e, slug := Session4(t, t.TempDir())
	s, err := Load(e, slug)
	if err != nil {
		t.Fatal(err)
	}
	page := htmlreport.Render(Document([]Session{s}, "/repo", now))
	root, err := ht.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	plot := func(key string) *ht.Node {
		t.Helper()
		f := root.ByID(slug + "-" + key)
		if f == nil || f.Attr["data-plot"] != "timeline" {
			t.Fatalf("no %s plot", key)
		}
		return f
	}
	// markAt checks the mark of series on pass x: its key and its place.
	markAt := func(fig *ht.Node, series string, x string, key string, y float64) {
		t.Helper()
		svg := fig.Child("svg")
		xa, ya, err := ht.Axes(svg)
		if err != nil {
			t.Fatal(err)
		}
		g := svg.Find(ht.Attr("data-series", series))
		for _, m := range g.All(ht.Class("mark")) {
			if m.Attr["data-x"] != x {
				continue
			}
			px, py, _ := m.Translate()
			if m.Attr["data-mark"] != key {
				t.Errorf("%s pass %s: mark %s, want %s", series, x, m.Attr["data-mark"], key)
			}
			var xv float64
			switch x {
			case "1":
				xv = 1
			case "2":
				xv = 2
			case "3":
				xv = 3
			case "4":
				xv = 4
			}
			if d := px - xa.At(xv); d > 0.11 || d < -0.11 {
				t.Errorf("%s pass %s drawn at x=%v, axis says %v", series, x, px, xa.At(xv))
			}
			if d := py - ya.At(y); d > 0.11 || d < -0.11 {
				t.Errorf("%s pass %s drawn at y=%v (%v), want %v (%v)", series, x, py, ya.Value(py), ya.At(y), y)
			}
			return
		}
		if key != "" {
			t.Errorf("%s: no mark on pass %s", series, x)
		}
	}
	conv := plot("convergence")
	for i, c := range []struct {
		key string
		y   float64
	}{{"continue", 3}, {"continue", 1}, {"continue", 0}, {"stop", 0}} {
		markAt(conv, "Rule-6 thresholds missed", string(rune('1'+i)), c.key, c.y)
	}
	churn := plot("churn")
	markAt(churn, "churn", "1", "", 0) // null: no mark
	markAt(churn, "churn", "2", "misses", 1)
	markAt(churn, "churn", "3", "meets", 0)
	if th := churn.Find(ht.Class("threshold")); th == nil || th.Attr["data-y"] != "0.1" {
		t.Error("churn plot without its 0.10 threshold")
	}
	if th := plot("novelty").Find(ht.Class("threshold")); th == nil || th.Attr["data-y"] != "0.05" {
		t.Error("novelty plot without its 0.05 threshold")
	}
	if th := plot("thrash").Find(ht.Class("threshold")); th == nil || th.Attr["data-y"] != "0.25" {
		t.Error("thrash plot without its 0.25 threshold")
	}
	markAt(plot("voices"), "voices that argued", "4", "meets", 4)
	markAt(plot("skeptic"), "the Skeptic argued (1 = yes)", "2", "meets", 1)
	fc := plot("forecast")
	markAt(fc, "forecast churn", "2", "forecast", 0.5)
	markAt(fc, "actual churn", "2", "actual", 1)
	markAt(fc, "surprise", "2", "surprise", 0.5)
	markAt(fc, "forecast churn", "3", "forecast", 0.1)
	markAt(fc, "surprise", "3", "surprise", 0.1)
	tb := ht.ReadTable(fc.Find(ht.Tag("table")))
	if strings.Join(tb.Rows[0], "|") != "1|null|null|null" || strings.Join(tb.Rows[1], "|") != "2|0.5|1|0.5" || strings.Join(tb.Rows[3], "|") != "4|0|0|0" {
		t.Errorf("forecast table %v", tb.Rows)
	}
	// In every plot the labels' boxes stay apart (the band label and the
	// threshold label once shared a baseline and overlapped), and each
	// threshold's condition is written once, on its line.
	for _, f := range root.All(ht.Has("data-plot")) {
		svg := f.Child("svg")
		for _, o := range ht.OverlappingLabels(svg) {
			t.Errorf("plot %s: labels overlap: %s", f.Attr["id"], o)
		}
		for _, th := range svg.All(ht.Class("threshold")) {
			cond := th.Child("title").Text()
			n := 0
			for _, l := range ht.LabelBoxes(svg) {
				if strings.Contains(l.Text, cond) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("plot %s: threshold %q written %d times, want once", f.Attr["id"], cond, n)
			}
		}
	}
	// Every plot has a title, a description and a table.
	for _, f := range root.All(ht.Has("data-plot")) {
		svg := f.Child("svg")
		if svg.Child("title").Text() == "" || svg.Child("desc").Text() == "" || f.Find(ht.Tag("table")) == nil {
			t.Errorf("plot %s lacks a title, desc or table", f.Attr["id"])
		}
	}
	if n := len(root.All(ht.Has("data-plot"))); n != 9 {
		t.Errorf("%d plots, want 9 (convergence, seven Rule-6 conditions, forecast)", n)
	}
}

func TestNoSessionsPage(t *testing.T) {
	root, err := ht.Parse(htmlreport.Render(Document(nil, "/repo", now)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(root.Text(), "There is no session") {
		t.Error("an empty page does not say there is no session")
	}
}
