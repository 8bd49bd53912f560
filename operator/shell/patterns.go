package shell

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
)

func init() {
	// regexp2 checks its match deadlines against a clock it ticks in the
	// background, by default every 100 ms: a 50 ms timeout would then
	// run up to 150 ms. A 5 ms tick keeps a timeout near what it says
	// (the ticker runs only while matches with timeouts do).
	regexp2.SetTimeoutCheckPeriod(timeoutTick)
}

// timeoutTick is how often regexp2 looks at the clock.
const timeoutTick = 5 * time.Millisecond

// compile compiles a generated pattern the way the grammar specifies:
// regexp2's default (.NET) mode, ignoring case, with a match timeout. The
// generator has already compiled every pattern once, so a failure here means
// the generated file was edited by hand.
func compile(src string, match time.Duration) *regexp2.Regexp {
	re := regexp2.MustCompile(src, regexp2.IgnoreCase)
	re.MatchTimeout = match
	return re
}

// compiledOnce is a pattern compiled on first use, with the active match
// timeout; and, in a test binary whose budget is widened, once more with
// the production one for the tests about the budget (analyzeUnder).
type compiledOnce struct {
	once, prodOnce sync.Once
	re, prod       *regexp2.Regexp
}

// get is the pattern compiled with match timeout match, which is the
// active limits' or the production limits'.
func (c *compiledOnce) get(match time.Duration, compile func(time.Duration) *regexp2.Regexp) *regexp2.Regexp {
	if match == active.match {
		c.once.Do(func() { c.re = compile(match) })
		return c.re
	}
	if match != productionLimits.match {
		panic(fmt.Sprintf("operator: a match timeout of %v is neither the active nor the production one", match))
	}
	c.prodOnce.Do(func() { c.prod = compile(match) })
	return c.prod
}

// pattern is a grammar pattern as the analysis runs it, compiled on first
// use: a hook process compiles only the patterns its command can meet. It
// is a view made per use (irreversiblePattern, allowPattern) of the
// generated pattern, its prefilter and its compiled forms, all of which
// the compiler lays out or leaves zero: nothing is built at package init.
type pattern struct {
	*grammarPattern
	// anchored: the pattern is run at the start of the text only.
	anchored bool
	// needs are words the text must contain (lowercased) for the pattern
	// to have any chance: every group, one word of each. Nil: always run.
	needs [][]string
	re    *compiledOnce
}

// The grammar patterns' compiled forms, by index in irreversiblePatterns
// and allowPatterns; atStart are the irreversible patterns anchored at the
// start of the text: the parsed view asks only whether a command itself
// matches, which anchoring answers in one pass instead of one per position.
var (
	irreversibleRes, atStartRes [len(irreversiblePatterns)]compiledOnce
	allowRes                    [len(allowPatterns)]compiledOnce
)

// irreversiblePattern is irreversible pattern i, run anywhere in a text.
func irreversiblePattern(i int) pattern {
	g := &irreversiblePatterns[i]
	return pattern{grammarPattern: g, needs: prefilterOf(irreversibleNeeds[:], i, g.Source), re: &irreversibleRes[i]}
}

// atStartPattern is irreversible pattern i, run at the start of a text.
func atStartPattern(i int) pattern {
	g := &irreversiblePatterns[i]
	return pattern{grammarPattern: g, anchored: true, needs: prefilterOf(irreversibleNeeds[:], i, g.Source), re: &atStartRes[i]}
}

// allowPattern is carve-out i.
func allowPattern(i int) pattern {
	g := &allowPatterns[i]
	return pattern{grammarPattern: g, needs: prefilterOf(allowNeeds[:], i, g.Source), re: &allowRes[i]}
}

// regexp is the pattern with the given match timeout.
func (p *pattern) regexp(match time.Duration) *regexp2.Regexp {
	src, anchored := p.Source, p.anchored
	return p.re.get(match, func(match time.Duration) *regexp2.Regexp {
		if anchored {
			return compile(`^(?:`+src+`)`, match)
		}
		return compile(src, match)
	})
}

// mayMatch is the prefilter: false only when the pattern cannot match.
func (p *pattern) mayMatch(lower string) bool {
	for _, group := range p.needs {
		found := false
		for _, w := range group {
			if strings.Contains(lower, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// lowerForPrefilter lowercases the way regexp2's IgnoreCase folds (both use
// unicode.ToLower), so a word the pattern needs is found in any case.
func lowerForPrefilter(s string) string { return strings.ToLower(s) }

// prefilter is the literal words a grammar pattern needs, with the
// pattern's exact source.
type prefilter struct {
	source string
	needs  [][]string
}

// irreversibleNeeds and allowNeeds are the prefilters of the grammar's
// patterns, in grammar order: arrays of constants, which the compiler lays
// out (a map keyed by source would be built at package init, in every hook
// process). An entry whose source is not its pattern's (the grammar
// changed) is not used: the pattern always runs;
// TestPrefiltersCoverGrammar says when to update.
var (
	irreversibleNeeds = [...]prefilter{
		{`\bgit\s+push\s+[^\n]*--force\b`, [][]string{{"git"}, {"push"}, {"--force"}}},
		{`\bgit\s+push\b[^\n]*\s-f\b`, [][]string{{"git"}, {"push"}, {"-f"}}},
		{`\bgit\s+push\s+[^\n]*--force-with-lease\b`, [][]string{{"git"}, {"push"}, {"--force-with-lease"}}},
		{`\bgit\s+reset\s+--hard\b`, [][]string{{"git"}, {"reset"}, {"--hard"}}},
		{`\brm\s+(-[a-zA-Z]*r[a-zA-Z]*f|-rf|-fr)\b`, [][]string{{"rm"}, {"-"}}},
		{`\bwrangler\s+deploy\b(?![^\n|;&]*--dry-run)`, [][]string{{"wrangler"}, {"deploy"}}},
		{`\bnpm\s+publish\b`, [][]string{{"npm"}, {"publish"}}},
		{`\b(twine\s+upload|flit\s+publish|poetry\s+publish|uv\s+publish|python\d?\s+-m\s+twine\s+upload)\b`, [][]string{{"upload", "publish"}}},
	}
	allowNeeds = [...]prefilter{
		{`\bwrangler\s+deploy\b[\s\S]*laserbrain-mcp-remote|laserbrain-mcp-remote[\s\S]*\bwrangler\s+deploy\b`, [][]string{{"wrangler"}, {"deploy"}, {"laserbrain-mcp-remote"}}},
	}
)

// prefilterOf is the needs of pattern i of a table, or nil (always run)
// when the table's entry i is not for this source. Equal sources are one
// string in the binary, so the comparison is cheap.
func prefilterOf(table []prefilter, i int, source string) [][]string {
	if i < len(table) && table[i].source == source {
		return table[i].needs
	}
	return nil
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
	return findBy(re, text, deadline{})
}

// findBy is find that also stops at a deadline (zero: none), reporting a
// timeout: a text with thousands of matches takes thousands of searches.
func findBy(re *regexp2.Regexp, text string, deadline deadline) matchResult {
	var r matchResult
	m, err := re.FindStringMatch(text)
	for err == nil && m != nil {
		r.found = true
		r.spans = append(r.spans, span{m.Index, m.Index + m.Length})
		if deadline.passed() {
			err = errTimeout
			break
		}
		m, err = re.FindNextMatch(m)
	}
	if err != nil {
		r.found, r.timedOut = true, true
	}
	return r
}

var errTimeout = errors.New("pattern match timed out")
