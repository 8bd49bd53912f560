// Package text holds the few ways both CLIs, the supervisor and ponder
// shorten and count things in the sentences they print, so that a count,
// a clipped value or a message folded onto one line reads the same
// wherever it appears.
package text

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Plural is a count with its noun: "1 file", "2 files", "0 files". The
// noun is the singular and takes an "s" for any other count.
func Plural[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(int64(n), 10) + " " + noun + "s"
}

// Clip shortens s to at most n runes: a longer s keeps its first n-1
// runes and ends in "…". It never cuts a character in two. n below 1 is
// taken as 1.
func Clip(s string, n int) string {
	n = max(n, 1)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for k < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	return s[:i] + "…"
}

// OneLine folds s onto one line: every run of white space (line breaks
// included) becomes one space, and none is left at either end.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
