package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A command line that is one simple command of literal words is the same
// command however it is quoted: `git commit -m "a b"` and
// `git commit -m 'a b'` run the same words. Its words are what an action
// is named by when a person authorizes it.

// Words are the words of a command line that is one simple command whose
// every word is literal: quotes and escapes removed, nothing the shell
// expands (no variable, substitution, pattern, brace or tilde), no
// assignment, redirection, pipe or list. ok is false for anything else.
func Words(command string) ([]string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, false
	}
	return literalWords(f)
}

// Words are the words of the command the analysis read when it is one
// simple command of literal words (see the package function Words).
func (an Analysis) Words() ([]string, bool) { return an.words, an.words != nil }

func literalWords(f *syntax.File) ([]string, bool) {
	if len(f.Stmts) != 1 {
		return nil, false
	}
	s := f.Stmts[0]
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || s.Negated || s.Background || s.Coprocess || len(s.Redirs) > 0 || len(c.Assigns) > 0 || len(c.Args) == 0 {
		return nil, false
	}
	words := make([]string, 0, len(c.Args))
	for _, w := range c.Args {
		lit, ok := literalWord(w)
		if !ok {
			return nil, false
		}
		words = append(words, lit)
	}
	return words, true
}

// literalWord is a word's value when the shell expands nothing in it.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if hasGlob(p.Value) || strings.ContainsAny(p.Value, "{}") || i == 0 && strings.HasPrefix(p.Value, "~") {
				return "", false
			}
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false // $"…": a translated string
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(l.Value, true))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}
