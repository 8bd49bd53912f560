package htmlreport

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	ht "github.com/laserkit/laserkit/internal/htmlreport/htmltest"
)

// A sparkline is an svg with role img and its words; its line climbs
// where the values do (higher Φ is drawn higher, svg y down), the latest
// value is a dot, and the marked values carry the mark's shape, filled.
// Only the last Max values are drawn, and the title says so.
func TestSparklineDrawsTheValues(t *testing.T) {
	b := Fragment(Sparkline{Title: "Φ of a", Desc: "3 checks, 1 drifting", Values: []float64{0, 0.2, 0.9}, Marked: []int{2},
		Mark: MarkStyle{Key: "d", Shape: Square, Tone: Bad, Filled: true}, YMin: 0, YMax: 1})
	root, err := ht.Parse([]byte("<div>" + string(b) + "</div>"))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	svg := root.Find(ht.Tag("svg"))
	if svg == nil || svg.Attr["role"] != "img" || svg.Child("title").Text() != "Φ of a" || svg.Child("desc").Text() != "3 checks, 1 drifting" {
		t.Fatalf("not an image with its words: %s", b)
	}
	path := svg.Find(ht.Class("series")).Attr["d"]
	// "M x y" then "H x V y" per value.
	var ys []float64
	for _, m := range regexp.MustCompile(`(?:^M[-0-9.]+ |V)([-0-9.]+)`).FindAllStringSubmatch(path, -1) {
		y, _ := strconv.ParseFloat(m[1], 64)
		ys = append(ys, y)
	}
	if len(ys) < 3 || !(ys[0] > ys[1] && ys[1] > ys[2]) {
		t.Fatalf("the line does not climb with the values: %q → %v", path, ys)
	}
	dot := svg.Find(ht.Tag("circle"))
	if dot == nil || !near(dot.Float("cy"), ys[2]) {
		t.Fatalf("the latest value has no dot at %v: %s", ys[2], b)
	}
	mark := svg.Find(ht.Class("mark"))
	if mark == nil || strings.Contains(mark.Attr["class"], "hollow") || mark.Child("path").Attr["d"] != shapePaths[Square] {
		t.Fatalf("the marked value is not a filled square: %s", b)
	}

	long := make([]float64, 100)
	b = Fragment(Sparkline{Title: "Φ of b", Desc: "x", Values: long, Max: 10})
	if !strings.Contains(string(b), "<title>Φ of b (the last 10 of 100)</title>") {
		t.Fatalf("a long series does not say it was cut: %s", b)
	}
	if got := Fragment(Note{Text: "a <b> & c"}); !strings.Contains(string(got), "a &lt;b&gt; &amp; c") {
		t.Fatalf("a fragment is not escaped: %s", got)
	}
}
