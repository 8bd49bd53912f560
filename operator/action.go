package operator

import (
	"strings"
	"unicode"

	"github.com/laserkit/laserkit/internal/shellquote"
	"github.com/laserkit/laserkit/operator/shell"
)

// An action is authorized and matched by one string, its key. A command
// that is one simple command of literal words is keyed by its words, each
// quoted as it must be to stay one word, so `git commit -m "a b"`,
// `git commit -m 'a b'` and the words git, commit, -m, "a b" given to
// laserbrain authorize are one action; any other command by its text with
// its blanks collapsed; a file tool's write as "write PATH".

// ActionKey is the key of an action named by its text: a command line, or
// "write /PATH".
func ActionKey(action string) string { return key(action, shell.Words) }

// CommandKey is the key of a command given as its words (several), or as
// one command line (one word), as laserbrain authorize takes it.
func CommandKey(args ...string) string {
	if len(args) == 1 {
		return ActionKey(args[0])
	}
	return ActionKey(shellquote.Command(args))
}

// actionOf is the key of the action an analysis read, from the words the
// analysis found (the command is not parsed again): the same key
// ActionKey gives its text.
func actionOf(an shell.Analysis) string {
	if an.Tool() != "" {
		if len(an.Writes) == 0 {
			return ""
		}
		return ActionKey("write " + an.Writes[0].Path)
	}
	return key(an.Command, func(string) ([]string, bool) { return an.Words() })
}

func key(action string, words func(string) ([]string, bool)) string {
	if !strings.HasPrefix(action, "write /") {
		if ws, ok := words(action); ok {
			return shellquote.Command(ws)
		}
	}
	return collapseSpace(action)
}

// collapseSpace is strings.Join(strings.Fields(s), " ") in one pass,
// without a slice of every word (a command may be a megabyte long).
func collapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for w := range strings.FieldsFuncSeq(s, unicode.IsSpace) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}
