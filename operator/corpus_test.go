package operator

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/laserkit/laserkit/operator/internal/dcg"
)

// dcgCases reads the dcg corpus of testdata/dcg.
func dcgCases(t testing.TB) []dcg.Case {
	t.Helper()
	cs, err := dcg.Cases("testdata/dcg")
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// difference is a deliberate departure from dcg's expectation, with its
// reason (testdata/dcg-differences.toml).
type difference struct {
	Command string
	Ours    string
	Why     string
}

func loadDifferences(t testing.TB) map[string]difference {
	var f struct {
		Difference []difference `toml:"difference"`
		Ask        []difference `toml:"ask"`
	}
	if _, err := toml.DecodeFile("testdata/dcg-differences.toml", &f); err != nil {
		t.Fatal(err)
	}
	// Must-block cases that do nothing as parsed: still asked, never
	// allowed or denied.
	for _, d := range f.Ask {
		if d.Why == "" {
			t.Errorf("ask %q has no why", d.Command)
		}
		if r := classify(d.Command); r.Decision != Ask {
			t.Errorf("listed as asked, we now %s: %q (%s)", r.Decision, d.Command, r.Why)
		}
	}
	out := map[string]difference{}
	for _, d := range f.Difference {
		if d.Why == "" {
			t.Errorf("difference %q has no why", d.Command)
		}
		out[d.Command] = d
	}
	return out
}

type tally struct{ mustBlock, flagged, denied, safe, fp, asked int }

// TestDCGCorpus measures recall on dcg's must-block cases and the false
// positive rate on its safe ones, per category. A must-block case we let
// through, or a safe case we deny, must be listed with a reason in
// testdata/dcg-differences.toml; a listed difference that no longer occurs
// fails too, so the list stays true.
func TestDCGCorpus(t *testing.T) {
	cases := dcgCases(t)
	if len(cases) < 500 {
		t.Fatalf("read %d dcg cases; the corpus has more than 500", len(cases))
	}
	diffs := loadDifferences(t)
	used := map[string]bool{}
	per := map[string]*tally{}
	var total tally
	for _, c := range cases {
		r := classify(c.Command)
		tl := per[c.Category]
		if tl == nil {
			tl = &tally{}
			per[c.Category] = tl
		}
		for _, x := range []*tally{tl, &total} {
			if c.Block {
				x.mustBlock++
				if r.Decision != Allow {
					x.flagged++
				}
				if r.Decision == Deny {
					x.denied++
				}
			} else {
				x.safe++
				if r.Decision == Deny {
					x.fp++
				}
				if r.Decision == Ask {
					x.asked++
				}
			}
		}
		if os.Getenv("CORPUS_VERBOSE") != "" && !c.Block && r.Decision == Ask {
			t.Logf("ask on safe %s: %q (%s)", c.Source, c.Command, r.Why)
		}
		var differs bool
		switch {
		case c.Block && r.Decision == Allow:
			differs = true
		case !c.Block && r.Decision == Deny:
			differs = true
		}
		if !differs {
			continue
		}
		d, listed := diffs[c.Command]
		switch {
		case !listed:
			t.Errorf("%s: dcg says %s, we %s, and no reason is listed: %q (%s)", c.Source, map[bool]string{true: "deny", false: "allow"}[c.Block], r.Decision, c.Command, r.Why)
		case d.Ours != r.Decision.String():
			t.Errorf("%s: listed as %s, we now %s: %q", c.Source, d.Ours, r.Decision, c.Command)
		}
		used[c.Command] = true
	}
	for cmd := range diffs {
		if !used[cmd] {
			t.Errorf("difference listed for %q no longer occurs; remove it", cmd)
		}
	}
	cats := slices.Sorted(maps.Keys(per))
	var b strings.Builder
	fmt.Fprintf(&b, "%-44s %22s %10s %26s\n", "category", "must-block flagged", "denied", "safe: denied (FP) / asked")
	row := func(name string, x *tally) {
		rec, den, fp := "—", "—", "—"
		if x.mustBlock > 0 {
			rec = fmt.Sprintf("%d/%d %5.1f%%", x.flagged, x.mustBlock, 100*float64(x.flagged)/float64(x.mustBlock))
			den = fmt.Sprintf("%5.1f%%", 100*float64(x.denied)/float64(x.mustBlock))
		}
		if x.safe > 0 {
			fp = fmt.Sprintf("%d/%d %5.1f%% / %d", x.fp, x.safe, 100*float64(x.fp)/float64(x.safe), x.asked)
		}
		fmt.Fprintf(&b, "%-44s %22s %10s %26s\n", name, rec, den, fp)
	}
	for _, c := range cats {
		row(c, per[c])
	}
	row("ALL", &total)
	t.Log("\n" + b.String())
}

// TestOwnCorpus checks testdata/corpus.toml: every case's decision exactly,
// with recall and false positives per category.
func TestOwnCorpus(t *testing.T) {
	var f struct {
		Case []struct{ Category, Command, Expected, Why string } `toml:"case"`
	}
	if _, err := toml.DecodeFile("testdata/corpus.toml", &f); err != nil {
		t.Fatal(err)
	}
	per := map[string]*tally{}
	var cats []string
	for i, c := range f.Case {
		if c.Why == "" || (c.Expected != "deny" && c.Expected != "ask" && c.Expected != "allow") {
			t.Fatalf("case %d (%q): needs expected deny|ask|allow and a why", i, c.Command)
		}
		r := classify(c.Command)
		if got := r.Decision.String(); got != c.Expected {
			t.Errorf("case %d [%s] %q: %s, want %s (%s); why: %s", i, c.Category, c.Command, got, c.Expected, c.Why, r.Why)
		}
		tl := per[c.Category]
		if tl == nil {
			tl = &tally{}
			per[c.Category] = tl
			cats = append(cats, c.Category)
		}
		if c.Expected == "deny" {
			tl.mustBlock++
			if r.Decision == Deny {
				tl.denied++
			}
		} else {
			tl.safe++
			if r.Decision == Deny {
				tl.fp++
			}
		}
	}
	var b strings.Builder
	for _, c := range cats {
		x := per[c]
		fmt.Fprintf(&b, "%-12s must-deny %2d/%2d   not-deny cases denied %d/%d\n", c, x.denied, x.mustBlock, x.fp, x.safe)
	}
	t.Log("\n" + b.String())
}
