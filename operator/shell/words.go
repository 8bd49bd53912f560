package shell

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a command line after quote removal. Known is false when
// the word's value depends on something only the running shell knows (an
// unset variable, a command substitution we cannot evaluate).
type arg struct {
	val   string
	known bool
	// glob: an unquoted *, ? or [ the shell expands against file names.
	glob bool
	// plain: an unquoted literal word (an alias applies to it).
	plain bool
}

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

// hasGlob: an unquoted literal holds a pattern character the shell
// expands against file names.
func hasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if closesBracket(s[i+1:]) {
				return true
			}
		}
	}
	return false
}

// closesBracket says whether a ] follows a [, which is when bash takes the
// word for a pattern (even a bracket expression it then reads as plain
// characters, like []). A [ that no ] follows is a plain character to it:
// `[ -e x ]`'s [ is the test command, not a pattern.
func closesBracket(rest string) bool {
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			i++
		case ']':
			return true
		}
	}
	return false
}

// maxBraceWords bounds a brace expansion ({a,b}{c,d}…); past it the words
// are unknown.
const maxBraceWords = 256

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

// braceSequence lists {x..y[..step]}: numbers, or single characters.
func braceSequence(br *syntax.BraceExp) []string {
	from, to := br.Elems[0].Lit(), br.Elems[1].Lit()
	step := 1
	if len(br.Elems) > 2 {
		if n, err := strconv.Atoi(br.Elems[2].Lit()); err == nil && n != 0 {
			step = max(n, -n)
		}
	}
	var out []string
	f, err1 := strconv.Atoi(from)
	t, err2 := strconv.Atoi(to)
	if err1 != nil || err2 != nil {
		if len(from) != 1 || len(to) != 1 {
			return []string{"{" + from + ".." + to + "}"}
		}
		f, t = int(from[0]), int(to[0])
		for n := f; (f <= t && n <= t) || (f > t && n >= t); n += sign(f, t) * step {
			out = append(out, string(rune(n)))
			if len(out) > maxBraceWords {
				break
			}
		}
		return out
	}
	for n := f; (f <= t && n <= t) || (f > t && n >= t); n += sign(f, t) * step {
		out = append(out, strconv.Itoa(n))
		if len(out) > maxBraceWords {
			break
		}
	}
	return out
}

func sign(f, t int) int {
	if f <= t {
		return 1
	}
	return -1
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

// printfS evaluates printf with a format whose only verbs are %s and %%:
// the format repeats until the arguments are used up, as the shell's does.
func printfS(format string, args []string) (string, bool) {
	if strings.Count(format, "%") != 2*strings.Count(format, "%%")+strings.Count(format, "%s") {
		return "", false
	}
	var b strings.Builder
	for first := true; first || len(args) > 0; first = false {
		used := false
		for i := 0; i < len(format); i++ {
			if format[i] != '%' || i+1 == len(format) {
				b.WriteByte(format[i])
				continue
			}
			i++
			if format[i] == '%' {
				b.WriteByte('%')
				continue
			}
			if len(args) > 0 {
				b.WriteString(args[0])
				args = args[1:]
				used = true
			}
		}
		if !used {
			break
		}
	}
	return b.String(), true
}

// unescape removes shell backslash escapes. Outside quotes a backslash
// escapes any character (and a backslash-newline disappears); inside double
// quotes only $ ` " \ and newline are escaped.
func unescape(s string, inDouble bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		n := s[i+1]
		switch {
		case n == '\n':
			i++
		case !inDouble || strings.IndexByte("$`\"\\", n) >= 0:
			b.WriteByte(n)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ansiC decodes the body of a $'...' string.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'u', 'U':
			n := 4
			if c == 'U' {
				n = 8
			}
			j := i + 1
			for j < len(s) && j < i+1+n && isHex(s[j]) {
				j++
			}
			if r, err := strconv.ParseUint(s[i+1:j], 16, 32); err == nil && j > i+1 {
				b.WriteRune(rune(r))
				i = j - 1
			} else {
				b.WriteByte('\\')
				b.WriteByte(c)
			}
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				j++
			}
			if n, err := strconv.ParseUint(s[i+1:j], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i = j - 1
			} else {
				b.WriteString(`\x`)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// commandName is how a command word is looked up: a leading backslash (an
// alias bypass) and any directory removed, lowercased (so GIT on a
// case-insensitive file system is git).
func commandName(s string) string {
	s = strings.TrimLeft(s, `\`)
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	s = strings.ToLower(s)
	return strings.TrimSuffix(s, ".exe")
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
