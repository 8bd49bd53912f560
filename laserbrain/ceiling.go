package laserbrain

import (
	"strings"
	"time"

	"github.com/dlclark/regexp2"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// Claims is the ceiling marker's reading of an agent's free text: how many
// phrases claim a cause and how many report an observation. Grounded is the
// observed share, and nil when nothing matched: null means "no reading",
// while 0 means "nothing but cause-claims".
type Claims struct {
	Cause       int      `json:"cause"`
	Observation int      `json:"observation"`
	Grounded    *float64 `json:"grounded"`
	Hits        []Claim  `json:"hits"`
}

// Claim is one matched phrase.
type Claim struct {
	Kind string `json:"kind"` // "cause" or "observation"
	Text string `json:"text"` // the matched text, lowercased
}

// ceilingTimeout bounds one scan; the pattern has no nested repetition, so
// only absurd input gets near it.
const ceilingTimeout = time.Second

// ceilingRegexp is compiled with regexp2 in its default mode so that \b is
// Unicode-aware like Python's (Go's regexp \b is ASCII-only: it would find
// "since" inside "ésince").
var ceilingCompiled = firstuse.Value[*regexp2.Regexp]{New: compileCeiling}

func ceilingRegexp() *regexp2.Regexp { return ceilingCompiled.Get() }

func compileCeiling() *regexp2.Regexp {
	re := regexp2.MustCompile(ceilingPattern, regexp2.IgnoreCase)
	re.MatchTimeout = ceilingTimeout
	return re
}

// Mark reads doing, next and blocked (the non-empty ones, joined by one
// space) for cause-claims and observations, scanning left to right with the
// grammar's phrase lists in grammar order. The reading is reported beside
// Φ and never folded into it.
func Mark(doing, next, blocked string) Claims {
	var parts []string
	for _, s := range []string{doing, next, blocked} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	c := Claims{Hits: []Claim{}}
	text := strings.Join(parts, " ")
	if text == "" {
		return c
	}
	re := ceilingRegexp()
	m, err := re.FindStringMatch(text)
	for err == nil && m != nil {
		if g := m.GroupByNumber(1); g != nil && len(g.Captures) > 0 {
			c.Cause++
			c.Hits = append(c.Hits, Claim{Kind: "cause", Text: pyLower(g.String())})
		} else if g := m.GroupByNumber(2); g != nil && len(g.Captures) > 0 {
			c.Observation++
			c.Hits = append(c.Hits, Claim{Kind: "observation", Text: pyLower(g.String())})
		}
		m, err = re.FindNextMatch(m)
	}
	if total := c.Cause + c.Observation; total > 0 {
		g := round2(float64(c.Observation) / float64(total))
		c.Grounded = &g
	}
	return c
}

// pyLower is Python's str.lower() for the cases that differ from Go's:
// U+0130 becomes "i" + U+0307 (full case mapping).
func pyLower(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}
