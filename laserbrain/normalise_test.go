package laserbrain

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// normRegexp is the normaliser read literally off the grammar: lowercase as
// Python does, run the token and stem patterns as regexps. Norm must agree.
func normRegexp(text string) []string {
	lower := strings.ToLower(strings.ReplaceAll(text, "\u0130", "i\u0307"))
	stem := regexp.MustCompile(stemPattern)
	set := map[string]bool{}
	for _, t := range regexp.MustCompile(tokenPattern).FindAllString(lower, -1) {
		if isStopword([]byte(t)) {
			continue
		}
		if len(t) >= stemMinLength {
			if loc := stem.FindStringIndex(t); loc != nil {
				t = t[:loc[0]]
			}
		}
		set[t] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// The normaliser's leftmost-suffix stemming and tokenising, as the Python
// reference normalises these words.
func TestNormSpecExamples(t *testing.T) {
	cases := map[string]string{
		"things": "th", "sings": "s", "classes": "class", "class": "clas", "status": "statu",
		"process": "proces", "paper": "pap", "corpus": "corpu", "physics": "physic",
		"running": "runn", "runner": "runn", "reportedly": "report", "statement": "state",
		"action": "ac", "tions": "tion", "billing": "bill", "parser": "pars",
		"deployment": "deploy", "deploys": "deploy", "deployed": "deploy",
		"runs": "runs", "bus": "bus", "news": "news",
		"don't": "don't", "solo's": "solo'",
		"naïve": "na|ve", "auth.py": "auth|py", "foo-bar_baz": "bar|baz|foo",
		"building billboards": "billboard|build", "build a billboard": "billboard|build",
		"make laserscore first class": "clas|first|laserscore|make",
		"RUNNING runner runs run":     "run|runn|runs",
		"the of and":                  "",
		"İstanbul":                    "stanbul", // i + U+0307: "i" is a stopword, then a new token
		"\u212Aelvin":                 "kelvin",  // KELVIN SIGN lowercases to k
		"ＡＢＣ":                         "",        // fullwidth letters are not ASCII
	}
	for in, want := range cases {
		got := strings.Join(Norm(in), "|")
		if got != want {
			t.Errorf("Norm(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormMatchesRegexpReference(t *testing.T) {
	inputs := []string{
		"", "   ", "Ship the SKY billboard!", "re-deploying the deployments' deployers",
		"İİİ iİi", "a'b'c'''", "x1y2z3 0000 99999s", "ÆØÅ æøå ǅungla", "emoji 😀 tokens",
		"\xff\xfe broken utf8 ings", "ings edly ed ers es s tion ment", "INGS EDLY TIONS",
	}
	for _, in := range inputs {
		if got, want := Norm(in), normRegexp(in); !slices.Equal(got, want) {
			t.Errorf("Norm(%q) = %q, regexp reading gives %q", in, got, want)
		}
	}
}

func FuzzNorm(f *testing.F) {
	for _, s := range []string{"building billboards", "İstanbul", "naïve auth.py", "solo's don't", "\u212A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Norm(s)
		if want := normRegexp(s); !slices.Equal(got, want) {
			t.Fatalf("Norm(%q) = %q, regexp reading gives %q", s, got, want)
		}
		if !slices.IsSorted(got) {
			t.Fatalf("not sorted: %q", got)
		}
	})
}

func BenchmarkNorm(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Norm("validate CSV columns before the import runs")
	}
}

// The stopword test and the stemmer run on every token of every goal the
// drift instrument reads: they must not allocate, whatever the token's
// length (a string(tok) conversion that escaped would allocate past 32
// bytes).
func TestNormTokenAllocatesNothing(t *testing.T) {
	toks := [][]byte{[]byte("the"), []byte("deployments"), []byte("x"), []byte(strings.Repeat("supercalifragilistic", 5) + "ings")}
	if n := testing.AllocsPerRun(100, func() {
		for _, tok := range toks {
			normToken(tok)
		}
	}); n != 0 {
		t.Errorf("normToken allocates %v times per run, want 0", n)
	}
}
