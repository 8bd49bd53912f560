package laserbrain

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

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
	// Tokens are collected into one byte arena and become substrings of a
	// single string at the end: two allocations however many tokens.
	var arenaBuf [256]byte
	var spanBuf [32]span
	arena, spans := arenaBuf[:0], spanBuf[:0]
	begin := 0 // where the current raw token starts in arena
	flush := func() {
		if len(arena) == begin {
			return
		}
		if n, ok := normToken(arena[begin:]); ok {
			arena = arena[:begin+n]
			spans = append(spans, span{int32(begin), int32(begin + n)})
		} else {
			arena = arena[:begin]
		}
		begin = len(arena)
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if tokenByte[c] {
				arena = append(arena, c)
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
				arena = append(arena, 'i')
			}
			flush() // U+0307 follows, and it is not a token character
			continue
		}
		if l := unicode.ToLower(r); l < utf8.RuneSelf && tokenByte[byte(l)] {
			arena = append(arena, byte(l)) // e.g. KELVIN SIGN → k
		} else {
			flush()
		}
	}
	flush()
	if len(spans) == 0 {
		return nil
	}
	all := string(arena)
	toks := make([]string, len(spans))
	for i, sp := range spans {
		toks[i] = all[sp.from:sp.to]
	}
	if len(toks) < 2 {
		return toks
	}
	slices.Sort(toks)
	return slices.Compact(toks)
}

type span struct{ from, to int32 }

// normToken applies the stopword list and the stemmer to one raw token and
// returns the length of what remains.
func normToken(tok []byte) (int, bool) {
	if isStopword(tok) {
		return 0, false
	}
	if len(tok) >= stemMinLength {
		// The leftmost match of an end-anchored suffix set is the longest
		// suffix in the set; stemSuffixesByLast lists them longest first.
		for _, suf := range stemSuffixesByLast[tok[len(tok)-1]] {
			if len(suf) <= len(tok) && string(tok[len(tok)-len(suf):]) == suf {
				return len(tok) - len(suf), true
			}
		}
	}
	return len(tok), true
}
