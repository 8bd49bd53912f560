package shell

import (
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
)

// TestPrefiltersCoverGrammar: every grammar pattern has its prefilter, in
// grammar order (a pattern without one still runs, only slower), and every
// word a prefilter needs is spelled in its pattern, so a typo cannot make
// the prefilter skip a pattern that would match.
func TestPrefiltersCoverGrammar(t *testing.T) {
	for _, c := range []struct {
		name     string
		patterns []grammarPattern
		table    []prefilter
	}{
		{"irreversible", irreversiblePatterns[:], irreversibleNeeds[:]},
		{"allow", allowPatterns[:], allowNeeds[:]},
	} {
		if len(c.table) != len(c.patterns) {
			t.Errorf("%s: %d prefilters for %d grammar patterns: update the table in patterns.go", c.name, len(c.table), len(c.patterns))
		}
		for i, p := range c.patterns {
			if prefilterOf(c.table, i, p.Source) == nil {
				t.Errorf("%s pattern %d (%s) has no prefilter: entry %d of the table is not for its source", c.name, i, p.Label, i)
			}
		}
		for _, f := range c.table {
			for _, group := range f.needs {
				for _, w := range group {
					if !strings.Contains(strings.ToLower(f.source), w) {
						t.Errorf("%s prefilter of %s needs %q, which its pattern does not spell", c.name, f.source, w)
					}
				}
			}
		}
	}
}

func TestTimeoutCountsAsMatch(t *testing.T) {
	re := regexp2.MustCompile(`^(a+)+$`, regexp2.None)
	re.MatchTimeout = time.Millisecond
	m := find(re, strings.Repeat("a", 40)+"!")
	if !m.found || !m.timedOut {
		t.Fatalf("catastrophic backtracking did not time out as a match: %+v", m)
	}
}
