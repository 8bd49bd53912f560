package shell

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The words of a command line as the analysis holds them (arg), and
// what can be read of them without the analyzer: names, option lists,
// quoting, globs, braces and escapes as the shell resolves them.

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

// env is the environment a command gets from assignments before it (and
// env's or sudo's NAME=VALUE words): what git reads of it matters.
type env map[string]arg

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

// commandText is one command's normalised words: the name, then each word
// as the command gets it, quoted when it holds blanks or quotes, so a
// pattern never reads two words as one or a word's inside as an option.
func commandText(name string, args []arg) string {
	var b strings.Builder
	b.WriteString(name)
	for _, w := range args {
		b.WriteByte(' ')
		if strings.ContainsAny(w.val, " \t\n'\"") || w.val == "" {
			b.WriteString("'" + strings.ReplaceAll(w.val, "'", `'\''`) + "'")
		} else {
			b.WriteString(w.val)
		}
		if b.Len() > maxCommandText {
			break
		}
	}
	s := b.String()
	if len(s) > maxCommandText {
		s = s[:maxCommandText]
	}
	return s
}

// maxCommandText bounds the text one command's patterns run on; the raw
// scan still sees everything.
const maxCommandText = 64 << 10

// vals are the words' values; a word only the running shell knows keeps
// its source text.
func vals(args []arg) []string {
	out := make([]string, len(args))
	for i, w := range args {
		out[i] = w.val
	}
	return out
}

func joinArgs(args []arg) (string, bool) {
	known := true
	for _, w := range args {
		known = known && w.known
	}
	return strings.Join(vals(args), " "), known
}

// splitWords splits an alias definition the way git does: shell-like
// quoting, no expansion — the same reading xargs gives its input.
func splitWords(s string) []arg {
	words := xargsSplit(s)
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = arg{val: w, known: true}
	}
	return out
}

// xargsSplit splits input the way xargs does by default: blanks and
// newlines separate items, quotes and backslashes protect them. git splits
// an alias definition the same way (splitWords).
func xargsSplit(s string) []string {
	var out []string
	var cur strings.Builder
	started := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, started = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			started = true
		case c == ' ' || c == '\t' || c == '\n':
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteByte(c)
			started = true
		}
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}

// optSpec says which options of a wrapper take a value, so the wrapped
// command can be found after them.
type optSpec struct {
	short   string   // short option letters that take a value
	long    []string // long option names that take a value unless written --name=value
	assigns bool     // NAME=VALUE words may appear before the command
}

// skipOptions returns the words after a wrapper's options: the wrapped
// command and its arguments.
func skipOptions(args []arg, spec optSpec) []arg {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			return args[i:]
		}
		s := w.val
		switch {
		case s == "--":
			return args[i+1:]
		case strings.HasPrefix(s, "--"):
			name, _, hasValue := strings.Cut(s[2:], "=")
			if !hasValue && slices.Contains(spec.long, name) {
				i++
			}
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				if strings.IndexByte(spec.short, s[j]) >= 0 {
					if j == len(s)-1 {
						i++
					}
					break
				}
			}
		case spec.assigns && isAssignment(s):
		default:
			return args[i:]
		}
	}
	return nil
}

// operands are the arguments that are not options (after "--", all are);
// takesValue names the options whose value is the next word.
func operands(args []arg, takesValue ...string) []arg {
	var out []arg
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w.known && w.val == "--":
			return append(out, args[i+1:]...)
		case w.known && strings.HasPrefix(w.val, "-") && w.val != "-":
			if slices.Contains(takesValue, w.val) {
				i++
			}
		default:
			out = append(out, w)
		}
	}
	return out
}

// isAssignment: NAME=VALUE, NAME a shell identifier.
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// hasShortFlag reports whether a single-dash cluster word contains c.
func hasShortFlag(s string, c byte) bool {
	return len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.IndexByte(s[1:], c) >= 0
}

// helpRequest: a --help word before "--".
func helpRequest(args []arg) bool {
	for _, w := range args {
		if w.known && w.val == "--" {
			return false
		}
		if w.known && w.val == "--help" {
			return true
		}
	}
	return false
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

// maxBraceWords bounds a brace expansion ({a,b}{c,d}…); past it the words
// are unknown.
const maxBraceWords = 256

func sign(f, t int) int {
	if f <= t {
		return 1
	}
	return -1
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

// firstLine is s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// optionValue is the word after rest[*i] — an option's value — and moves
// *i onto it; past the end it is an empty known word.
func optionValue(rest []arg, i *int) arg {
	if *i+1 < len(rest) {
		*i++
		return rest[*i]
	}
	return arg{known: true}
}
