package htmlreport

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	ht "github.com/laserkit/laserkit/internal/htmlreport/htmltest"
)

var marks = MarkSet{
	{Key: "ok", Label: "fine", Shape: Circle, Tone: Good, Filled: false, Priority: 0},
	{Key: "bad", Label: "drift", Shape: Square, Tone: Bad, Filled: true, Priority: 9},
	{Key: "warn", Label: "stall", Shape: Triangle, Tone: Warn, Filled: true, Priority: 5},
}

func parse(t *testing.T, doc *Document) (*ht.Node, []byte) {
	t.Helper()
	page := Render(doc)
	root, err := ht.Parse(page)
	if err != nil {
		t.Fatalf("%v\n%s", err, page)
	}
	return root, page
}

func near(a, b float64) bool { return math.Abs(a-b) <= 0.11 }

// A timeline puts every marked point where its value says, on the scale its
// own tick labels state.
func TestTimelinePlacesValues(t *testing.T) {
	pts := []Point{{X: 1, Y: 0}, {X: 2, Y: 0.25, Mark: "warn"}, {X: 3, Y: 0.8, Mark: "bad", Note: "left the ground"}, {X: 4, Y: math.NaN()}, {X: 5, Y: 0.1, Mark: "ok"}}
	doc := &Document{Title: "t", Sections: []Section{{ID: "s", Title: "S", Blocks: []Block{
		Timeline{ID: "phi", Title: "Φ of a", XLabel: "step", YLabel: "Φ", YMin: 0, YMax: 1, XInteger: true,
			Series:     []Series{{Name: "Φ", Step: true, Points: pts}},
			Thresholds: []Threshold{{Y: 0.15, Label: "floor 0.15", Tone: Warn}},
			Bands:      []Band{{From: 0.35, To: 1, Label: "far", Tone: Bad, Pattern: Hatch}},
			Marks:      marks, Legend: true},
	}}}}
	root, _ := parse(t, doc)
	fig := root.ByID("phi")
	if fig == nil || fig.Attr["data-plot"] != "timeline" {
		t.Fatal("no timeline figure with the id")
	}
	svg := fig.Child("svg")
	if svg.Child("title").Text() != "Φ of a" || !strings.Contains(svg.Child("desc").Text(), "4 values from 0 to 0.8, last 0.1") {
		t.Errorf("title/desc: %q / %q", svg.Child("title").Text(), svg.Child("desc").Text())
	}
	if svg.Attr["role"] != "img" || svg.Attr["aria-labelledby"] == "" {
		t.Error("svg is not labelled as an image")
	}
	xa, ya, err := ht.Axes(svg)
	if err != nil {
		t.Fatal(err)
	}
	got := svg.All(ht.Class("mark"))
	if len(got) != 3 {
		t.Fatalf("%d marks, want 3", len(got))
	}
	for _, m := range got {
		x, y, _ := m.Translate()
		dx, _ := strconv.ParseFloat(m.Attr["data-x"], 64)
		dy, _ := strconv.ParseFloat(m.Attr["data-y"], 64)
		var want Point
		for _, p := range pts {
			if p.X == dx {
				want = p
			}
		}
		if want.Y != dy || want.Mark != m.Attr["data-mark"] {
			t.Errorf("mark %v claims (%v,%v) %s", m.Attr, dx, dy, m.Attr["data-mark"])
		}
		if !near(x, xa.At(want.X)) || !near(y, ya.At(want.Y)) {
			t.Errorf("mark for x=%v y=%v drawn at (%v,%v), the axes put it at (%v,%v)", want.X, want.Y, x, y, xa.At(want.X), ya.At(want.Y))
		}
	}
	th := svg.Find(ht.Class("threshold"))
	if th == nil || !near(th.Float("y1"), ya.At(0.15)) || th.Text() != "floor 0.15" {
		t.Errorf("threshold line %v not at 0.15 (%v)", th, ya.At(0.15))
	}
	band := svg.Find(ht.Class("band"))
	if !near(band.Float("y"), ya.At(1)) || !near(band.Float("y")+band.Float("height"), ya.At(0.35)) || !strings.HasPrefix(band.Attr["fill"], "url(#") {
		t.Errorf("band %v does not span 0.35..1 with a pattern", band.Attr)
	}
	// The gap: the series path is broken at the NaN.
	d := svg.Find(ht.Class("series")).Attr["d"]
	if strings.Count(d, "M") != 2 {
		t.Errorf("path %q should restart after the missing value", d)
	}
	// The table equivalent lists every point, with marks and notes.
	tb := ht.ReadTable(fig.Find(ht.Tag("table")))
	if len(tb.Rows) != 5 || tb.Rows[2][0] != "3" || tb.Rows[2][1] != "0.8" || tb.Rows[2][2] != "drift" || tb.Rows[2][3] != "left the ground" || tb.Rows[3][1] != "none" {
		t.Errorf("table %v", tb)
	}
	// The legend names the marks used, with their shapes.
	lg := fig.All(ht.Has("data-legend-mark"))
	if len(lg) != 3 {
		t.Errorf("legend marks %d", len(lg))
	}
}

// A long series is drawn as min–max buckets, says so on the plot and in
// the text, keeps the most severe mark of each bucket, and its table lists
// the buckets with their true extremes.
// Band and threshold labels never share a box, wherever the band lies
// against its threshold: a thin band on the threshold (the case that drew
// both on one baseline), a band whose top is the threshold, a band hanging
// from the top of the plot, and a threshold at the very top.
func TestTimelineLabelsKeepApart(t *testing.T) {
	long := "none of the findings below the floor (= 0)"
	cases := []struct {
		name string
		th   float64
		band Band
	}{
		{"thin band on the threshold at 0", 0, Band{From: -0.02, To: 0.02, Label: "accepted: " + long}},
		{"band below its threshold", 0.5, Band{From: 0, To: 0.5, Label: "accepted, nothing above this"}},
		{"band above its threshold", 0.5, Band{From: 0.5, To: 1, Label: "accepted, nothing under this"}},
		{"threshold at the top", 1, Band{From: 0.98, To: 1.02, Label: "accepted: " + long}},
	}
	for _, c := range cases {
		for _, width := range []int{360, 480} {
			doc := &Document{Title: "t", Sections: []Section{{ID: "s", Title: "S", Blocks: []Block{
				Timeline{ID: "p", Title: "p", YMin: 0, YMax: 1, XInteger: true, Height: 170, Width: width,
					Series:     []Series{{Name: "v", Points: []Point{{X: 1, Y: 0.2}, {X: 2, Y: 0.7}}}},
					Thresholds: []Threshold{{Y: c.th, Label: long, Tone: Good}},
					Bands:      []Band{c.band}},
			}}}}
			root, _ := parse(t, doc)
			svg := root.ByID("p").Child("svg")
			if n := len(ht.LabelBoxes(svg)); n != 2 {
				t.Fatalf("%s: %d labels, want the band's and the threshold's", c.name, n)
			}
			for _, o := range ht.OverlappingLabels(svg) {
				t.Errorf("%s, width %d: labels overlap: %s", c.name, width, o)
			}
		}
	}
}

func TestTimelineDownsamples(t *testing.T) {
	n := 5000
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = Point{X: float64(i + 1), Y: 0.5 + 0.4*math.Sin(float64(i)/50)}
		if i%7 == 0 {
			pts[i].Mark = "warn"
		}
	}
	pts[4321].Y, pts[4321].Mark = 0.99, "bad" // a spike that must survive
	doc := &Document{Title: "t", Sections: []Section{{ID: "s", Title: "S", Blocks: []Block{
		Timeline{ID: "long", Title: "long", XLabel: "step", YMin: 0, YMax: 1, Series: []Series{{Name: "Φ", Points: pts}}, Marks: marks},
	}}}}
	root, page := parse(t, doc)
	fig := root.ByID("long")
	svg := fig.Child("svg")
	g := svg.Find(ht.Class("series-group"))
	if g.Attr["data-points"] != "5000" || g.Attr["data-buckets"] != strconv.Itoa(DefaultBuckets) {
		t.Errorf("series group %v", g.Attr)
	}
	if svg.Find(ht.Class("dsnote")) == nil || fig.Find(ht.Attr("data-downsampled", "true")) == nil {
		t.Error("downsampling is not said on the plot")
	}
	if !strings.Contains(fig.Find(ht.Attr("data-downsampled", "true")).Text(), "5,000 points drawn as 120 buckets") {
		t.Error("the note does not give the counts")
	}
	ms := svg.All(ht.Class("mark"))
	if len(ms) != DefaultBuckets {
		t.Errorf("%d marks, want one per bucket", len(ms))
	}
	_, ya, _ := ht.Axes(svg)
	found := false
	for _, m := range ms {
		if m.Attr["data-mark"] == "bad" {
			found = true
			_, y, _ := m.Translate()
			if !near(y, ya.At(0.99)) || m.Attr["data-x"] != "4322" {
				t.Errorf("the spike is drawn at y=%v x=%s", y, m.Attr["data-x"])
			}
		}
	}
	if !found {
		t.Error("the most severe mark was lost in downsampling")
	}
	tb := ht.ReadTable(fig.Find(ht.Tag("table")))
	if len(tb.Rows) != DefaultBuckets {
		t.Fatalf("%d table rows", len(tb.Rows))
	}
	max := tb.Col("value max")
	sawSpike := false
	for _, r := range tb.Rows {
		if r[max] == "0.99" && strings.Contains(r[len(r)-1], "drift ×1") {
			sawSpike = true
		}
	}
	if !sawSpike {
		t.Error("no bucket row has the spike's true maximum and mark count")
	}
	if len(page) > 80<<10 {
		t.Errorf("a 5,000-point plot took %d bytes", len(page))
	}
}

func TestBars(t *testing.T) {
	doc := &Document{Title: "t", Sections: []Section{{ID: "s", Title: "S", Blocks: []Block{
		Bars{ID: "gate", Title: "gate", Categories: []string{"git push --force", "rm -rf"},
			Stacks: []BarStack{{Name: "deny", Tone: Bad, Values: []float64{3, 1}}, {Name: "ask", Tone: Warn, Pattern: Hatch, Values: []float64{1, 0}}}},
	}}}}
	root, _ := parse(t, doc)
	fig := root.ByID("gate")
	bars := fig.All(ht.Class("bar"))
	if len(bars) != 2 {
		t.Fatalf("%d bars", len(bars))
	}
	segs := bars[0].All(ht.Class("seg"))
	if len(segs) != 2 || segs[0].Attr["data-value"] != "3" || segs[1].Attr["data-stack"] != "ask" {
		t.Fatalf("segments %v", segs)
	}
	// Widths are proportional to the counts: 3 + 1 fills the whole bar,
	// the second bar's 1 is a quarter of it.
	full := segs[0].Float("width") + segs[1].Float("width")
	one := bars[1].Find(ht.Class("seg")).Float("width")
	if !near(segs[0].Float("width"), 3*one) || !near(full, 4*one) {
		t.Errorf("widths %v %v %v", segs[0].Float("width"), segs[1].Float("width"), one)
	}
	if !strings.HasPrefix(segs[1].Attr["fill"], "url(#") {
		t.Error("ask is not patterned")
	}
	if got := bars[0].Find(ht.Class("bar-count")).Text(); got != "deny 3 · ask 1 = 4" {
		t.Errorf("count label %q", got)
	}
	tb := ht.ReadTable(fig.Find(ht.Tag("table")))
	if strings.Join(tb.Rows[0], "|") != "git push --force|3|1|4" || strings.Join(tb.Rows[1], "|") != "rm -rf|1|0|1" {
		t.Errorf("table %v", tb.Rows)
	}
}

func TestRelation(t *testing.T) {
	doc := &Document{Title: "t", Sections: []Section{{ID: "s", Title: "S", Blocks: []Block{
		Relation{ID: "rel", Title: "collisions", Nodes: []Node{{ID: "a", Label: "a"}, {ID: "b", Label: "b"}, {ID: "c", Label: "c"}},
			Edges: []Edge{{From: "b", To: "a", Weight: 0.8, Label: "0.80", Arrow: true, Dash: Dashed}}},
	}}}}
	root, _ := parse(t, doc)
	fig := root.ByID("rel")
	nodes := map[string][2]float64{}
	for _, n := range fig.All(ht.Class("node")) {
		x, y, _ := n.Find(ht.Class("mark")).Translate()
		nodes[n.Attr["data-node"]] = [2]float64{x, y}
	}
	if len(nodes) != 3 {
		t.Fatalf("nodes %v", nodes)
	}
	e := fig.Find(ht.Class("edge-group"))
	l := e.Find(ht.Class("edge"))
	if !near(l.Float("x1"), nodes["b"][0]) || !near(l.Float("y1"), nodes["b"][1]) || !near(l.Float("x2"), nodes["a"][0]) || !near(l.Float("y2"), nodes["a"][1]) {
		t.Errorf("edge %v does not join b to a %v", l.Attr, nodes)
	}
	if l.Attr["stroke-dasharray"] == "" || e.Find(ht.Class("arrow")) == nil || e.Find(ht.Class("edge-label")).Text() != "0.80" {
		t.Error("edge style, arrow or label missing")
	}
}

// Whatever text comes in, the page stays well-formed, escapes it, and
// references nothing outside itself.
func TestHostileTextAndNoExternalReference(t *testing.T) {
	evil := "</title><script>alert(1)</script>\x00\x1b[31m & \"quoted\" 'single' \xff <img src=http://x/>"
	doc := &Document{Title: evil, Subtitle: evil, Meta: []Field{{evil, evil}}, Sections: []Section{{ID: evil, Title: evil, Intro: evil, Blocks: []Block{
		Note{Kind: Pending, Text: evil},
		Stats{Items: []Stat{{Label: evil, Value: evil, Tone: Bad}}},
		Timeline{ID: evil, Title: evil, Desc: evil, XLabel: evil, YLabel: evil, Series: []Series{{Name: evil, Points: []Point{{X: 1, Y: 1, Mark: "bad", Note: evil, XText: evil}}}}, Marks: marks, Legend: true},
		Bars{ID: evil, Title: evil, Categories: []string{evil}, Stacks: []BarStack{{Name: evil, Values: []float64{1}}}},
		Relation{ID: evil, Title: evil, Nodes: []Node{{ID: evil, Label: evil}, {ID: "b", Label: "b"}}, Edges: []Edge{{From: evil, To: "b", Label: evil, Title: evil}}},
		Table{Caption: evil, Columns: []Column{{Title: evil}}, Rows: [][]string{{evil}}, Collapsed: true, Summary: evil},
	}}, {ID: evil, Title: evil}}}
	root, page := parse(t, doc)
	if n := root.All(ht.Tag("script")); len(n) != 0 {
		t.Error("a script element got through")
	}
	if n := root.All(ht.Tag("img")); len(n) != 0 {
		t.Error("an img element got through")
	}
	for _, n := range root.All(func(*ht.Node) bool { return true }) {
		for k, v := range n.Attr {
			if k == "src" || (k == "href" && !strings.HasPrefix(v, "#")) || (k == "fill" && strings.HasPrefix(v, "url(") && !strings.HasPrefix(v, "url(#")) {
				t.Errorf("external reference %s=%q on <%s>", k, v, n.Tag)
			}
		}
	}
	if regexp.MustCompile(`(?i)(https?:)?//`).FindAllIndex(page, -1) != nil {
		for _, m := range regexp.MustCompile(`(?i)[a-z:]*//[^"\s]*`).FindAll(page, -1) {
			if string(m) != "http://www.w3.org/2000/svg" && !strings.HasPrefix(string(m), "http://x/") {
				t.Errorf("a URL in the page: %s", m)
			}
		}
	}
	// Ids are unique even when every section asks for the same one.
	seen := map[string]bool{}
	for _, n := range root.All(ht.Has("id")) {
		if seen[n.Attr["id"]] {
			t.Errorf("duplicate id %q", n.Attr["id"])
		}
		seen[n.Attr["id"]] = true
	}
	if !strings.Contains(root.Find(ht.Tag("h1")).Text(), "<script>alert(1)</script>") {
		t.Error("the title text was not kept as text")
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		in     bool
		want   string
	}{
		{0, 1, 4, false, "0 0.25 0.5 0.75 1"},
		{1, 1000, 5, true, "200 400 600 800 1000"},
		{1, 3, 5, true, "1 2 3"},
		{0, 4, 4, true, "0 1 2 3 4"},
	} {
		var s []string
		for _, v := range niceTicks(c.lo, c.hi, c.n, c.in) {
			s = append(s, FormatNumber(v))
		}
		if got := strings.Join(s, " "); got != c.want {
			t.Errorf("niceTicks(%v,%v) = %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}
