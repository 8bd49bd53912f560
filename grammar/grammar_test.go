package grammar

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// The content hash grammar 1.21.0 declares for itself.
const shippedHash = "6a58931785384ef2"

func TestCanonicalFileIsItsOwnRendering(t *testing.T) {
	v, err := Parse(Canonical)
	if err != nil {
		t.Fatal(err)
	}
	if got := Render(v); !bytes.Equal(got, Canonical) {
		t.Fatalf("grammar.json is not in canonical form; first difference at byte %d", firstDiff(got, Canonical))
	}
}

func TestShippedHash(t *testing.T) {
	got, err := HashBytes(Canonical)
	if err != nil {
		t.Fatal(err)
	}
	if got != shippedHash {
		t.Fatalf("content hash = %s, want %s", got, shippedHash)
	}
}

// The hashes the usual wrong renderings of grammar 1.21.0 give, known
// beside its declared hash; each must be reproduced, or our renderer is
// wrong in that way.
func TestKnownWrongRenderings(t *testing.T) {
	v, _ := Parse(Canonical)
	corr, err := v.Lookup("/calibration/anchored/corroborated")
	if err != nil {
		t.Fatal(err)
	}
	corr.Num = "1"
	if got := ContentHash(v); got != "a3b994dccb3be1f3" {
		t.Errorf("corroborated written as 1: hash %s, want a3b994dccb3be1f3", got)
	}
	corr.Num = "1.0"

	noNewline := bytes.TrimSuffix(Render(v), []byte("\n"))
	if got := hashRendering(string(noNewline)); got != "7483b46f2194cd19" {
		t.Errorf("no trailing newline: hash %s, want 7483b46f2194cd19", got)
	}
	if got := hashRendering(string(RenderUTF8(v))); got != "ec11a6f093d74dd0" {
		t.Errorf("unescaped non-ASCII: hash %s, want ec11a6f093d74dd0", got)
	}
}

// The seed is minified and writes corroborated as 1; read as Python reads it,
// it hashes to the "corroborated as 1" value, not to the declared hash.
func TestSeedAsPythonReadsIt(t *testing.T) {
	seed, err := os.ReadFile(testenv.Shared(t, "seeds/004_c32519afa75cbd53.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := HashBytes(seed)
	if err != nil {
		t.Fatal(err)
	}
	if got != "a3b994dccb3be1f3" {
		t.Fatalf("seed hash %s, want a3b994dccb3be1f3", got)
	}
	sv, _ := Parse(seed)
	cv, _ := Parse(Canonical)
	corr, _ := sv.Lookup("/calibration/anchored/corroborated")
	corr.Num = "1.0"
	if !bytes.Equal(Render(sv), Render(cv)) {
		t.Fatal("grammar.json differs from the seed in more than corroborated's spelling")
	}
}

func TestPythonFloatRepr(t *testing.T) {
	// Expected values are what CPython 3.11 prints for repr(x).
	cases := map[float64]string{
		1.0: "1.0", 0.3: "0.3", 1e16: "1e+16", 1e15: "1000000000000000.0",
		0.0001: "0.0001", 0.00001: "1e-05", 1.5e-07: "1.5e-07",
		123456789012345678.0: "1.2345678901234568e+17", 5e-324: "5e-324",
		1.7976931348623157e308: "1.7976931348623157e+308", 100.0: "100.0", 12345.678: "12345.678",
	}
	for f, want := range cases {
		if got := PythonFloatRepr(f); got != want {
			t.Errorf("PythonFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
	x, y := 0.1, 0.2
	if got := PythonFloatRepr(x + y); got != "0.30000000000000004" {
		t.Errorf("0.1+0.2: %q", got)
	}
}

func TestRenderMatchesPython(t *testing.T) {
	// What CPython 3.11 prints: Render is json.dumps(json.loads(in),
	// indent=2, ensure_ascii=True); RenderLineASCII json.dumps(json.loads(in)),
	// one line, ", " and ": ", ensure_ascii.
	render := map[string]func(Value) []byte{"Render": Render, "RenderLineASCII": RenderLineASCII}
	cases := []struct{ render, in, want string }{
		{"Render", `[1E2, -0, 0.50, 1e400]`, "[\n  100.0,\n  0,\n  0.5,\n  Infinity\n]\n"},
		{"Render", `"é😀\u007f<>&/\u2028\u0001"`, `"\u00e9\ud83d\ude00\u007f<>&/\u2028\u0001"` + "\n"},
		{"Render", `{"b":{},"a":[],"c":[{"x":null,"y":true}]}`, "{\n  \"b\": {},\n  \"a\": [],\n  \"c\": [\n    {\n      \"x\": null,\n      \"y\": true\n    }\n  ]\n}\n"},
		{"RenderLineASCII", `{"b":{"x":[1E2,-0,0.50]},"a":"é😀\u007f\n","c":null,"d":true}`,
			`{"b": {"x": [100.0, 0, 0.5]}, "a": "\u00e9\ud83d\ude00\u007f\n", "c": null, "d": true}`},
		{"RenderLineASCII", `[{"type":"text","text":"{\n  \"drifting\": false}"}]`,
			`[{"type": "text", "text": "{\n  \"drifting\": false}"}]`},
	}
	for _, c := range cases {
		v, err := Parse([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := string(render[c.render](v)); got != c.want {
			t.Errorf("%s(%s) = %q, want %q", c.render, c.in, got, c.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"a":2}`: `duplicate key "a"`,
		`{"a":`:         "unexpected end",
		`[1] [2]`:       "after the document",
		`{"a" 1}`:       "invalid JSON",
	} {
		_, err := Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s): got %v, want error containing %q", in, err, want)
		}
	}
}

func TestLookup(t *testing.T) {
	v, _ := Parse(Canonical)
	got, err := v.Lookup("/normalizer/stopwords/0")
	if err != nil || got.Str != "a" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := v.Lookup("/normalizer/nope"); err == nil || !strings.Contains(err.Error(), `no key "nope" at /normalizer`) {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := v.Lookup("/normalizer/stopwords/99"); err == nil {
		t.Fatal("index out of range accepted")
	}
	if _, err := v.Lookup("normalizer"); err == nil {
		t.Fatal("pointer without leading slash accepted")
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
