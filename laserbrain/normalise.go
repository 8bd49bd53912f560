package laserbrain

import (
	"sort"
	"unicode"
	"unicode/utf8"
)

// tokenByte[c] reports whether byte c may appear in a token (tokenPattern).
var tokenByte = func() (t [256]bool) {
	for i := 0; i < len(tokenBytes); i++ {
		t[tokenBytes[i]] = true
	}
	return t
}()

// capitalDotI is U+0130. Python lowercases it to "i" + U+0307 (full case
// mapping), so it contributes an "i" and then ends the token; Go's
// unicode.ToLower would give a plain "i" and keep the token going.
const capitalDotI = '\u0130'

// Norm returns the normalised token set of text, sorted bytewise and without
// duplicates: lowercase (full Unicode mapping), split into tokenPattern
// matches, drop stopwords, stem tokens of at least stemMinLength bytes by
// removing the leftmost stemPattern match, once.
//
// It scans bytes instead of running the grammar's regexps; the generator
// derives the byte table and the suffix set from those patterns, and
// TestNormMatchesRegexpReference holds the two readings together.
func Norm(text string) []string {
	var toks []string
	var buf [64]byte
	cur := buf[:0]
	flush := func() {
		if len(cur) == 0 {
			return
		}
		if t, ok := normToken(cur); ok {
			toks = append(toks, t)
		}
		cur = cur[:0]
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if tokenByte[c] {
				cur = append(cur, c)
			} else {
				flush()
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r == capitalDotI {
			if tokenByte['i'] {
				cur = append(cur, 'i')
			}
			flush() // U+0307 follows, and it is not a token character
			continue
		}
		if l := unicode.ToLower(r); l < utf8.RuneSelf && tokenByte[byte(l)] {
			cur = append(cur, byte(l)) // e.g. KELVIN SIGN → k
		} else {
			flush()
		}
	}
	flush()
	if len(toks) < 2 {
		return toks
	}
	sort.Strings(toks)
	out := toks[:1]
	for _, t := range toks[1:] {
		if t != out[len(out)-1] {
			out = append(out, t)
		}
	}
	return out
}

// normToken applies the stopword list and the stemmer to one raw token.
func normToken(tok []byte) (string, bool) {
	if stopwords[string(tok)] { // no allocation: the compiler recognises map[string(b)]
		return "", false
	}
	if len(tok) >= stemMinLength {
		// The leftmost match of an end-anchored suffix set is the longest
		// suffix in the set.
		for i := max(0, len(tok)-stemMaxSuffix); i < len(tok); i++ {
			if stemSuffixes[string(tok[i:])] {
				tok = tok[:i]
				break
			}
		}
	}
	return string(tok), true
}
