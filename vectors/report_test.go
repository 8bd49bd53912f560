package vectors

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/htmlreport/htmltest"
)

func brokenReport(t *testing.T) *Report {
	t.Helper()
	r, err := Check([]byte(`{"kind":"normalise","cases":[
		{"in":"building billboards","out":["billboard","build"]},
		{"in":"the parser","out":["parser"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Failures = append(r.Failures, Failure{Label: "case 2", In: `"x"`, Expected: `["x"]`, Error: "it exited with status 3 before answering"})
	r.Skipped, r.SkipWhy = 4, "the implementation does not list this kind"
	return r
}

// --json writes in, expected and actual as JSON values (not strings that
// hold JSON), the diff by pointer, and an error as text.
func TestReportJSON(t *testing.T) {
	b, err := json.Marshal(brokenReport(t).JSON())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Passed, Failed, Errored, Skipped int
		Failures                         []struct {
			Case     string
			In       any
			Expected any
			Actual   any
			Error    *string
			Diff     []string
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Passed != 1 || got.Failed != 1 || got.Errored != 1 || got.Skipped != 4 || len(got.Failures) != 2 {
		t.Fatalf("%s", b)
	}
	f := got.Failures[0]
	if f.In != "the parser" || !equalJSON(f.Expected, []any{"parser"}) || !equalJSON(f.Actual, []any{"pars"}) ||
		f.Error != nil || strings.Join(f.Diff, "|") != `/0: expected "parser", got "pars"` {
		t.Errorf("failure %+v", f)
	}
	if e := got.Failures[1]; e.Error == nil || *e.Error != "it exited with status 3 before answering" || e.Actual != nil {
		t.Errorf("errored case %+v", e)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// The HTML page: the counts per kind (stats, bars and the table), and each
// failure with its case, status, diff, input, expected and actual.
func TestReportHTML(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, "port 1.0", nil, []*Report{brokenReport(t)}); err != nil {
		t.Fatal(err)
	}
	doc, err := htmltest.Parse(b.Bytes())
	if err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	stat := func(label string) string {
		n := doc.Find(htmltest.Attr("data-stat", label))
		if n == nil {
			return ""
		}
		return n.Find(htmltest.Class("v")).Text()
	}
	if stat("passed") != "1" || stat("failed") != "1" || stat("errored") != "1" || stat("skipped") != "4" {
		t.Errorf("stats: passed %q failed %q errored %q skipped %q", stat("passed"), stat("failed"), stat("errored"), stat("skipped"))
	}
	var rows [][]string
	for _, tr := range doc.All(htmltest.Tag("tr")) {
		var cells []string
		for _, td := range tr.All(htmltest.Tag("td")) {
			cells = append(cells, td.Text())
		}
		if len(cells) > 0 {
			rows = append(rows, cells)
		}
	}
	want := map[string]bool{
		"case 1|failed|/0: expected \"parser\", got \"pars\"|\"the parser\"|[\"parser\"]|[\"pars\"]": false,
		"case 2|errored|it exited with status 3 before answering|\"x\"|[\"x\"]|":                     false,
	}
	for _, r := range rows {
		if _, ok := want[strings.Join(r, "|")]; ok {
			want[strings.Join(r, "|")] = true
		}
	}
	for row, seen := range want {
		if !seen {
			t.Errorf("no row %s in %v", row, rows)
		}
	}
	if !strings.Contains(doc.Text(), "skipped: the implementation does not list this kind") {
		t.Error("the page does not say why cases were skipped")
	}
}
