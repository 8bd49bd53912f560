package laserbrain

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// Reading is the shape of a piece of text read from its lexical variety:
// short, circling, connected or loose.
type Reading struct {
	Words int `json:"words"`
	// Variety is distinct content words over content words, 4 places.
	Variety float64 `json:"variety"`
	// Connectivity is the caller's spectral connectivity (0 to 1), as given:
	// it is reported, and only decides connected over loose.
	Connectivity float64 `json:"connectivity"`
	Shape        string  `json:"shape"`
	Circling     bool    `json:"circling"`
}

// The reading's rules (the reference's reading.py): words are [a-z']+ runs
// of the lowercased text; content words are those outside a stopword list
// longer than two letters; variety is distinct over all content words (1.0
// for none). Under 12 words is short; variety under 0.55 is circling; else
// connectivity over 0.7 is connected; else loose.
var readingWord = firstuse.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`[a-z']+`) }}

const (
	circlingVariety = 0.55
	shortWords      = 12
	connectedAbove  = 0.7
)

// isReadingStopword reports whether w is on the reading's stopword list, a
// switch rather than a map so that no init has to build it.
func isReadingStopword(w string) bool {
	switch w {
	case "the", "a", "an", "and", "or", "but", "in", "on", "at", "to", "of", "is", "are", "it", "i", "my", "me",
		"that", "this", "so", "for", "be", "was", "were", "has", "have", "had", "not",
		"no", "do", "does", "did", "if", "then", "than", "they", "them", "their", "you", "your",
		"we", "our", "he", "she", "his", "her", "as", "with", "by", "from", "about", "into", "more", "most",
		"some", "any", "all", "can", "will", "would", "should", "could", "been", "being",
		"which", "when", "where", "what", "how", "why", "there", "here":
		return true
	}
	return false
}

// ReadText reads the shape of text; connectivity is the caller's, 0 when it
// has none.
func ReadText(text string, connectivity float64) Reading {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	// Python's lower() maps U+0130 to "i" plus a combining dot, which
	// splits the word; Go's maps it to a plain "i".
	lower := strings.ToLower(strings.ReplaceAll(text, "\u0130", "i\u0307"))
	words := readingWord.Get().FindAllString(lower, -1)
	content, distinct := 0, map[string]bool{}
	for _, w := range words {
		if len(w) > 2 && !isReadingStopword(w) {
			content++
			distinct[w] = true
		}
	}
	variety := 1.0
	if content > 0 {
		variety = float64(len(distinct)) / float64(content)
	}
	shape := "loose"
	switch {
	case len(words) < shortWords:
		shape = "short"
	case variety < circlingVariety:
		shape = "circling"
	case connectivity > connectedAbove:
		shape = "connected"
	}
	return Reading{Words: len(words), Variety: roundN(variety, 4), Connectivity: connectivity, Shape: shape,
		Circling: variety < circlingVariety && len(words) >= shortWords}
}
