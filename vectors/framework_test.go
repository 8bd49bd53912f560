package vectors

import (
	"strings"
	"testing"
)

func TestCheckReportsEachFailure(t *testing.T) {
	data := []byte(`{"kind":"normalise","cases":[
		{"in":"building billboards","out":["billboard","build"]},
		{"in":"the parser","out":["parser"]},
		{"in":"x","out":["x","y"]}]}`)
	r, err := Check(data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Passed != 1 || len(r.Failures) != 2 {
		t.Fatalf("passed %d, failed %d; want 1 and 2", r.Passed, len(r.Failures))
	}
	f := r.Failures[0]
	if f.Label != "case 1" || f.Expected != `["parser"]` || f.Actual != `["pars"]` || f.In != `"the parser"` {
		t.Fatalf("failure reported as %+v", f)
	}
	var b strings.Builder
	WriteReport(&b, "n.json", r)
	if !strings.Contains(b.String(), "FAIL n.json: case 1 (normalise)") {
		t.Fatalf("report:\n%s", b.String())
	}
}

func TestDecode(t *testing.T) {
	if f, err := Decode([]byte(`{"vectors":[]}`)); err != nil || f.Kind != "drift" {
		if err == nil || !strings.Contains(err.Error(), `unknown vector kind "drift"`) {
			t.Errorf("a file with vectors and no kind is read as drift: %+v %v", f, err)
		}
	}
	for in, want := range map[string]string{
		`{"cases":[]}`:                         `no "kind" field`,
		`{"kind":"nope","cases":[]}`:           `unknown vector kind "nope"`,
		`[1,2]`:                                "not a vector file",
		`{"kind":"normalise","cases":[{}]}`:    `/cases/0: missing properties: 'in'`,
		`{"kind":"normalise","cases":{"a":1}}`: `/cases: expected array, but got object`,
	} {
		if _, err := Decode([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%s) = %v, want error containing %q", in, err, want)
		}
	}
}

func TestMatchesComparesExpectedFieldsOnly(t *testing.T) {
	cases := []struct {
		want string
		got  any
		ok   bool
	}{
		{`{"a":1,"b":"x"}`, map[string]any{"a": 1.0, "b": "x", "extra": true}, true},
		{`{"a":1}`, map[string]any{"a": 2}, false},
		{`{"a":null}`, map[string]any{"a": nil}, true},
		{`{"a":null}`, map[string]any{}, false},
		{`{"phi":0.1}`, map[string]any{"phi": 0.1}, true},
		{`[1,2]`, []int{1, 2, 3}, false},
		{`0.30`, 0.3, true},
		{`true`, false, false},
	}
	for _, c := range cases {
		if got := matches([]byte(c.want), c.got); got != c.ok {
			t.Errorf("matches(%s, %v) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
}

func TestEmitNormalise(t *testing.T) {
	out, err := Emit("normalise", []byte(`{"cases":[{"in":"Building billboards"},{"in":"the"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(out)
	if err != nil || r.Passed != 2 {
		t.Fatalf("emitted file does not check: %v %+v\n%s", err, r, out)
	}
	if !strings.Contains(string(out), `"out": [
        "billboard",
        "build"
      ]`) || !strings.Contains(string(out), `"out": []`) {
		t.Fatalf("emitted:\n%s", out)
	}
	if _, err := Emit("normalise", []byte(`{"kind":"shape","cases":[]}`)); err == nil {
		t.Fatal("emit accepted a file of another kind")
	}
}
