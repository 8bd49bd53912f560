// Package shellquote writes words for a POSIX shell: the commands laserbrain
// installs into a client's hooks, the command lines it records for an argv,
// and the commands it tells a person to run. One rule for every one of them,
// so that a word reads back in sh, dash and bash as exactly the bytes it was.
package shellquote

import "strings"

// Word is s as one shell word: as it is when every byte is one a shell
// takes literally (letters, digits and - _ . / : + , @ =), else in single
// quotes, each ' inside written '\”. The empty word is ”. A word that a
// shell would read as a variable assignment (NAME=…) is quoted too, so it
// stays an argument even at the head of a command.
//
// Any string without a NUL byte reads back unchanged; a NUL cannot be in an
// argument at all.
func Word(s string) string {
	if s != "" && plain(s) && !assignment(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join writes argv as one command line, each word as Word writes it.
func Join(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = Word(a)
	}
	return strings.Join(words, " ")
}

// Command writes argv as one command line as Join does, but an argument
// after the first word that looks like an assignment (NAME=…) is left
// unquoted: past the command's name a shell reads it as an argument
// already, so a line reads as it is usually written (git -c k=v …).
func Command(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		if i > 0 && a != "" && plain(a) {
			words[i] = a
			continue
		}
		words[i] = Word(a)
	}
	return strings.Join(words, " ")
}

// plain reports whether every byte of s is one a shell takes literally in
// any position of a word.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-_./:+,@=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// assignment reports whether s starts with a shell variable's name and "=".
func assignment(s string) bool {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
