package shell

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// fields expands a word into the fields the shell would pass, as far as that
// can be known without running anything: quotes removed, escapes resolved,
// variables assigned earlier in the same script substituted (unquoted ones
// split on blanks), `$(echo literal)` evaluated.
func (a *analyzer) fields(w *syntax.Word) []arg {
	var out []arg
	cur, started, known, glob := "", false, true, false
	flush := func() {
		if started {
			out = append(out, arg{val: cur, known: known, glob: glob})
		}
		cur, started, known, glob = "", false, true, false
	}
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			glob = glob || hasGlob(p.Value)
			cur += unescape(p.Value, false)
			started = true
		case *syntax.SglQuoted:
			if p.Dollar {
				cur += ansiC(p.Value)
			} else {
				cur += p.Value
			}
			started = true
		case *syntax.DblQuoted:
			if params, ok := a.quotedAt(p); ok {
				// "$@": each positional parameter is a field of its own.
				for i, q := range params {
					if i > 0 {
						flush()
					}
					cur += q.val
					known = known && q.known
					started = true
				}
				if len(params) == 0 && len(w.Parts) == 1 {
					return nil
				}
				continue
			}
			s, ok := a.quoted(p.Parts)
			cur += s
			known = known && ok
			started = true
		default:
			s, ok := a.expansion(part)
			if !ok {
				cur += a.source(part)
				known = false
				started = true
				continue
			}
			// Unquoted expansion: split on the characters of IFS (blanks,
			// unless the script set it).
			ifs, readable := a.ifs(s)
			if !readable {
				what := "IFS is " + strconv.Quote(ifs)
				if v, _ := a.sc.lookup("IFS"); !v.known {
					what = "IFS is set to what only the running shell knows"
				}
				a.unknown("word splitting with IFS set", what+": the shell splits "+a.source(part)+" into words the gate does not read")
				cur += a.source(part)
				known = false
				started = true
				continue
			}
			isIFS := func(r rune) bool { return strings.ContainsRune(ifs, r) }
			pieces := strings.FieldsFunc(s, isIFS)
			if len(pieces) == 0 {
				continue
			}
			if isIFS(rune(s[0])) {
				flush()
			}
			for i, piece := range pieces {
				if i > 0 {
					flush()
				}
				cur += piece
				started = true
			}
			if isIFS(rune(s[len(s)-1])) {
				flush()
			}
		}
	}
	flush()
	return out
}

// defaultIFS is the shell's IFS when the script has not set it (bash does
// not take IFS from the environment) or has unset it.
const defaultIFS = " \t\n"

// ifs is the IFS in force for splitting the expanded text s, and whether
// the gate reads the words it makes. IFS made of blanks only (the
// default, $'\n', ' ') splits on runs of them, which the gate follows;
// any other character in it (IFS=x, IFS=/), or an IFS only the running
// shell knows, splits in ways the gate does not read — unless s holds
// none of IFS's characters, where nothing splits.
func (a *analyzer) ifs(s string) (string, bool) {
	v, ok := a.sc.lookup("IFS")
	switch {
	case !ok:
		return defaultIFS, true
	case !v.known:
		return v.val, s == ""
	case strings.Trim(v.val, defaultIFS) == "":
		return v.val, true
	}
	return v.val, !strings.ContainsAny(s, v.val)
}

// word is fields for contexts that want one string (assignment values,
// here-strings); multiple fields are joined by a space.
func (a *analyzer) word(w *syntax.Word) arg {
	if w == nil {
		return arg{known: true}
	}
	var vals []string
	known := true
	for _, f := range a.fields(w) {
		vals = append(vals, f.val)
		known = known && f.known
	}
	return arg{val: strings.Join(vals, " "), known: known}
}

func (a *analyzer) quoted(parts []syntax.WordPart) (string, bool) {
	var b strings.Builder
	known := true
	for _, part := range parts {
		if lit, ok := part.(*syntax.Lit); ok {
			b.WriteString(unescape(lit.Value, true))
			continue
		}
		s, ok := a.expansion(part)
		if !ok {
			b.WriteString(a.source(part))
			known = false
			continue
		}
		b.WriteString(s)
	}
	return b.String(), known
}

// expansion evaluates the expansions we can: $NAME / ${NAME} of a variable
// given a literal value earlier in the script, and $(echo/printf literals).
func (a *analyzer) expansion(part syntax.WordPart) (string, bool) {
	switch p := part.(type) {
	case *syntax.ParamExp:
		if p.Param == nil || p.Excl || p.Length || p.Index != nil || p.Slice != nil ||
			p.Repl != nil || p.Exp != nil || p.NestedParam != nil || p.Names != 0 {
			return "", false
		}
		return a.param(p.Param.Value)
	case *syntax.CmdSubst:
		// Each substitution is evaluated once: nested ones would otherwise
		// be re-evaluated from every level above them.
		if r, ok := a.expanded[p]; ok {
			return r.val, r.known
		}
		s, ok := a.evalSubst(p)
		if a.expanded == nil {
			a.expanded = map[*syntax.CmdSubst]arg{}
		}
		a.expanded[p] = arg{val: s, known: ok}
		return s, ok
	}
	return "", false
}

// param is the value of $NAME: a variable assigned earlier, or a
// positional parameter of a function call we follow.
func (a *analyzer) param(name string) (string, bool) {
	switch name {
	case "@", "*", "#":
		ps, ok := a.sc.params()
		if !ok {
			return "", false
		}
		if name == "#" {
			return strconv.Itoa(len(ps)), true
		}
		s, known := joinArgs(ps)
		return s, known
	}
	if n, err := strconv.Atoi(name); err == nil && n > 0 {
		ps, ok := a.sc.params()
		if !ok {
			return "", false
		}
		if n > len(ps) {
			return "", true
		}
		return ps[n-1].val, ps[n-1].known
	}
	v, ok := a.sc.lookup(name)
	return v.val, ok && v.known
}

// quotedAt: a double-quoted "$@" (alone), which expands to one field per
// positional parameter.
func (a *analyzer) quotedAt(q *syntax.DblQuoted) ([]arg, bool) {
	if len(q.Parts) != 1 {
		return nil, false
	}
	p, ok := q.Parts[0].(*syntax.ParamExp)
	if !ok || p.Param == nil || p.Param.Value != "@" || p.Excl || p.Length || p.Index != nil || p.Slice != nil ||
		p.Repl != nil || p.Exp != nil || p.NestedParam != nil {
		return nil, false
	}
	return a.sc.params()
}

// braces expands a word holding brace expansions (SplitBraces found them)
// into the words the shell would produce: {rm,-rf,d} is rm -rf d.
func (a *analyzer) braces(w *syntax.Word) []*syntax.Word {
	// How many words it makes: past the bound, the words are unknown
	// (without building them).
	n := 1
	for _, p := range w.Parts {
		if br, ok := p.(*syntax.BraceExp); ok {
			k := len(br.Elems)
			if br.Sequence {
				k = len(braceSequence(br))
			}
			n *= max(k, 1)
			if n > maxBraceWords {
				return []*syntax.Word{{Parts: []syntax.WordPart{&syntax.CmdSubst{}}}}
			}
		}
	}
	var out []*syntax.Word
	ok := bracesRec(w.Parts, nil, func(parts []syntax.WordPart) bool {
		if len(out) >= maxBraceWords {
			return false
		}
		out = append(out, &syntax.Word{Parts: parts})
		return true
	})
	if !ok {
		return []*syntax.Word{{Parts: []syntax.WordPart{&syntax.CmdSubst{}}}}
	}
	return out
}

func bracesRec(parts, left []syntax.WordPart, yield func([]syntax.WordPart) bool) bool {
	for i, wp := range parts {
		br, ok := wp.(*syntax.BraceExp)
		if !ok {
			continue
		}
		prefix := append(slices.Clone(left), parts[:i]...)
		rest := parts[i+1:]
		next := func(mid []syntax.WordPart) bool {
			return bracesRec(append(slices.Clone(mid), rest...), prefix, yield)
		}
		if br.Sequence {
			for _, v := range braceSequence(br) {
				if !next([]syntax.WordPart{&syntax.Lit{Value: v}}) {
					return false
				}
			}
			return true
		}
		for _, e := range br.Elems {
			if !next(e.Parts) {
				return false
			}
		}
		return true
	}
	return yield(append(slices.Clone(left), parts...))
}

// evalSubst evaluates $(echo …) and $(printf …) of known words.
func (a *analyzer) evalSubst(p *syntax.CmdSubst) (string, bool) {
	if len(p.Stmts) != 1 {
		return "", false
	}
	call, ok := p.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(p.Stmts[0].Redirs) > 0 {
		return "", false
	}
	var argv []string
	for _, w := range call.Args {
		for _, f := range a.fields(w) {
			if !f.known {
				return "", false
			}
			argv = append(argv, f.val)
		}
	}
	if len(argv) == 0 {
		return "", false
	}
	switch commandName(argv[0]) {
	case "echo":
		rest := argv[1:]
		for len(rest) > 0 && (rest[0] == "-n" || rest[0] == "-e" || rest[0] == "-E") {
			rest = rest[1:]
		}
		return strings.Join(rest, " "), true
	case "printf":
		format := argv[1:]
		if len(format) > 0 && format[0] == "--" {
			format = format[1:] // printf -- --force prints --force
		}
		if len(format) >= 1 && !strings.Contains(format[0], `\`) {
			return printfS(format[0], format[1:])
		}
	}
	return "", false
}

// source is a word part as written, for values only the running shell
// knows: a nested script then sees the expansion itself, as its shell
// would. It is sliced from the text being analysed, not re-printed: deep
// nesting would otherwise re-print every level at every level.
func (a *analyzer) source(part syntax.WordPart) string {
	s, e := int(part.Pos().Offset()), int(part.End().Offset())
	if part.Pos().IsValid() && part.End().IsValid() && 0 <= s && s <= e && e <= len(a.src) {
		return a.src[s:e]
	}
	return "$?"
}

// nodeText is a statement as written (a loop, for a finding's command),
// cut at maxCommandText.
func (a *analyzer) nodeText(n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if !n.Pos().IsValid() || !n.End().IsValid() || s < 0 || s > e || e > len(a.src) {
		return ""
	}
	return a.src[s:min(e, s+maxCommandText)]
}

// output is what a pipeline stage writes, when it is a literal we can read:
// echo or printf of known words, or cat of a heredoc or of a file written
// earlier in the line.
func (a *analyzer) output(s *syntax.Stmt) input {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return input{kind: unknownInput}
	}
	var argv []string
	for _, w := range call.Args {
		for _, f := range a.fields(w) {
			if !f.known {
				return input{kind: unknownInput}
			}
			argv = append(argv, f.val)
		}
	}
	switch commandName(argv[0]) {
	case "echo", "printf":
		rest := argv[1:]
		escapes := commandName(argv[0]) == "printf"
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && len(rest[0]) <= 3 {
			if strings.Contains(rest[0], "e") {
				escapes = true
			}
			rest = rest[1:]
		}
		text := strings.Join(rest, " ")
		if escapes {
			text = strings.NewReplacer(`\n`, "\n", `%s`, " ", `\t`, "\t").Replace(text)
		}
		return input{kind: literalInput, text: text + "\n"}
	case "cat":
		if len(argv) == 1 {
			for _, r := range s.Redirs {
				if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil {
					return input{kind: literalInput, text: a.word(r.Hdoc).val}
				}
				if r.Op == syntax.WordHdoc {
					return input{kind: literalInput, text: a.word(r.Word).val + "\n"}
				}
			}
		}
		if len(argv) == 2 {
			if in := a.fileInput(arg{val: argv[1], known: true}); in.kind == literalInput {
				return in
			}
		}
	}
	return input{kind: unknownInput}
}
