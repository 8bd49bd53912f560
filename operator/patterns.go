package operator

import (
	"errors"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
)

// MatchTimeout bounds one regexp2 match. regexp2 backtracks, so a hostile
// command could otherwise keep the gate busy; a timeout counts as a match
// (fail closed).
const MatchTimeout = 50 * time.Millisecond

// pattern is a compiled operator pattern.
type pattern struct {
	re      *regexp2.Regexp
	label   string
	outward bool
}

// compile compiles a generated pattern the way the grammar specifies:
// regexp2's default (.NET) mode, ignoring case, with a match timeout. The
// generator has already compiled every pattern once, so a failure here means
// the generated file was edited by hand.
func compile(src string) *regexp2.Regexp {
	re := regexp2.MustCompile(src, regexp2.IgnoreCase)
	re.MatchTimeout = MatchTimeout
	return re
}

var (
	grammarIrreversible = compileAll(irreversiblePatterns[:])
	grammarAllow        = compileAll(allowPatterns[:])
	// grammarAtStart are the same patterns anchored at the start of the
	// text: the parsed view asks only whether a command itself matches,
	// which anchoring answers in one pass instead of one per position.
	// Compiled on first use.
	grammarAtStart = sync.OnceValue(func() []*regexp2.Regexp {
		out := make([]*regexp2.Regexp, len(irreversiblePatterns))
		for i, p := range irreversiblePatterns {
			out[i] = compile(`^(?:` + p.Source + `)`)
		}
		return out
	})
)

func compileAll(ps []grammarPattern) []pattern {
	out := make([]pattern, len(ps))
	for i, p := range ps {
		out[i] = pattern{re: compile(p.Source), label: p.Label, outward: p.Outward}
	}
	return out
}

// span is a match position in runes (regexp2 counts runes).
type span struct{ start, end int }

// matchResult is the outcome of searching one text with one pattern.
type matchResult struct {
	found    bool
	timedOut bool
	spans    []span // every non-overlapping match, leftmost first
}

// find searches text for every match of re. A timeout (or any other engine
// error) reports a match, so the caller escalates.
func find(re *regexp2.Regexp, text string) matchResult {
	var r matchResult
	m, err := re.FindStringMatch(text)
	for err == nil && m != nil {
		r.found = true
		r.spans = append(r.spans, span{m.Index, m.Index + m.Length})
		m, err = re.FindNextMatch(m)
	}
	if err != nil {
		r.found, r.timedOut = true, true
	}
	return r
}

var errTimeout = errors.New("pattern match timed out")
