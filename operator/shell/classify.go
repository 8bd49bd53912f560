package shell

import (
	"strings"
)

// ClassifyGrammar is the reference classifier every port shares: the grammar's
// patterns searched over the raw text. Every match forces reversible to false
// and ORs in its outward flag; allow entries only annotate; no match leaves
// the declaration as it was. A pattern that times out counts as a match.
func ClassifyGrammar(command string, reversible, outward bool) Classification {
	v, _ := classifyRaw(command, reversible, outward, deadline{})
	return v
}

// maxRawScan bounds the text the raw grammar scan runs a pattern on when
// the pattern's words are in it: the patterns backtrack, and on a longer
// text one match can take longer than the whole budget. Past it a pattern
// whose words occur counts as a match (unknown), as one that timed out.
const maxRawScan = 256 << 10

type rawMatch struct {
	matchResult
	carved bool // every match lies inside an allow match
}

func classifyRaw(command string, reversible, outward bool, deadline deadline) (Classification, []rawMatch) {
	v := Classification{Reversible: reversible, Outward: outward, Labels: []string{}}
	var why []string
	var allowSpans []span
	lower := lowerForPrefilter(command)
	for i := range allowPatterns {
		p := allowPattern(i)
		if !p.mayMatch(lower) {
			continue
		}
		m := findBy(p.regexp(deadline.timeout()), command, deadline)
		if m.found {
			v.Carveouts = append(v.Carveouts, p.Label)
			why = append(why, "carve-out: "+p.Label+" (still asks)")
			allowSpans = append(allowSpans, m.spans...)
		}
	}
	raw := make([]rawMatch, len(irreversiblePatterns))
	for i := range irreversiblePatterns {
		p := irreversiblePattern(i)
		if !p.mayMatch(lower) {
			continue
		}
		var m matchResult
		if deadline.set() && (deadline.passed() || len(command) > maxRawScan) {
			// The budget is spent: a pattern not run counts as a match
			// (fail closed), like one that timed out.
			m = matchResult{found: true, timedOut: true}
		} else {
			m = findBy(p.regexp(deadline.timeout()), command, deadline)
		}
		raw[i] = rawMatch{matchResult: m}
		if !m.found {
			continue
		}
		v.Reversible = false
		v.Outward = v.Outward || p.Outward
		v.Labels = append(v.Labels, p.Label)
		why = append(why, p.Label)
		raw[i].carved = !m.timedOut && within(m.spans, allowSpans)
	}
	v.Why = strings.Join(why, "; ")
	return v, raw
}

// within reports whether every span of inner lies inside some span of outer.
func within(inner, outer []span) bool {
	if len(outer) == 0 {
		return false
	}
	for _, s := range inner {
		ok := false
		for _, o := range outer {
			if s.start >= o.start && s.end <= o.end {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// findArgs are find's primaries that take one argument (two for -fprintf);
// that argument is never itself a primary (find . -name -delete deletes
