package shell

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Program code an interpreter runs (python -c, node -e, a script file, a
// heredoc fed to ruby, SQL fed to psql) is read as text, not parsed: the
// grammar patterns anywhere in it, the pack's code rules, and the commands
// its strings spell — each string literal read as a shell command, each
// list of them as an argv (subprocess.run(['rm','-rf','d']),
// execFileSync('rm', ['-rf', 'd']), perl's system LIST), whatever the
// function is called (an import alias changes nothing), and strings
// encoded in base64 or hex decoded first. What it finds is inline code:
// asked when a person is there, refused when nobody is. Code that decodes
// and runs what the gate cannot decode is unknown. Code may write
// anywhere.

// maxCodeStrings bounds how many string literals of one program are read
// as commands.
const maxCodeStrings = 256

func (a *analyzer) code(name, text string, d int) {
	a.mayWrite(name)
	if a.overTime() {
		return
	}
	if len(text) > MaxScriptFile {
		// Past what the gate reads: the rest is unknown.
		a.unknown("code run by "+name+" is longer than the gate reads", fmt.Sprintf("more than %d KiB", MaxScriptFile>>10))
		text = text[:MaxScriptFile]
	}
	note := "in code run by " + name
	a.withRole(InlineCode, note, func() {
		a.grammarAnywhere(text, Executed, "", "")
		a.packAs(name, text, InlineCode, note, "")
		if d >= MaxDepth {
			return
		}
		lits := codeStrings(text)
		found := len(a.findings)
		n := 0
		for _, run := range lits {
			if n >= maxCodeStrings || a.overTime() {
				break
			}
			n++
			if len(run) > 1 {
				a.command(run, d+1, stdio{}, nil)
			}
			if len(run) == 1 && run[0].known && strings.ContainsAny(run[0].val, " \t;|&") {
				s := run[0].val
				a.subshell(func() { a.script(s, d+1) })
			}
			for _, w := range run {
				if dec, ok := decoded(w.val); ok {
					a.grammarAnywhere(dec, Executed, "", "")
					a.subshell(func() { a.script(dec, d+1) })
				}
			}
		}
		if len(a.findings) == found && runsCommands(text) && decodesStrings(text) {
			a.add(Finding{Label: "parsed: code that decodes a command and runs it", Where: Unknown,
				Note: "in code run by " + name + ": the gate cannot read what it decodes"})
		}
	})
}

// codeStrings finds a program's string literals ('…', "…", `…`, and
// Python's triple quotes), with escapes resolved, grouped into runs: the
// literals of one list or argument list (separated by commas, inside [ ]
// or ( )), a literal joined to the next by + or ., and an identifier in a
// list counted as a word only the running program knows.
func codeStrings(text string) [][]arg {
	var runs [][]arg
	isQuote := func(j int) bool { return j < len(text) && (text[j] == '\'' || text[j] == '"' || text[j] == '`') }
	skip := func(j int, brackets string) int {
		for j < len(text) && (strings.IndexByte(" \t\n\r", text[j]) >= 0 || strings.IndexByte(brackets, text[j]) >= 0) {
			j++
		}
		return j
	}
	i := 0
	for i < len(text) && len(runs) < 4*maxCodeStrings {
		if !isQuote(i) {
			i++
			continue
		}
		val, end := codeLiteral(text, i)
		run := []arg{{val: val, known: true}}
		i = end
		for {
			j := skip(i, "])")
			if j >= len(text) {
				break
			}
			if text[j] == '+' || text[j] == '.' {
				if k := skip(j+1, ""); isQuote(k) {
					v, e := codeLiteral(text, k)
					run[len(run)-1].val += v
					i = e
					continue
				}
				break
			}
			if text[j] != ',' {
				break
			}
			k := skip(j+1, "[(")
			if isQuote(k) {
				v, e := codeLiteral(text, k)
				run = append(run, arg{val: v, known: true})
				i = e
				continue
			}
			e := k
			for e < len(text) && (isIdent(text[e]) || text[e] == '.') {
				e++
			}
			if e == k {
				break
			}
			// An identifier in a list: a word the running program decides.
			run = append(run, arg{val: "$" + text[k:e], known: false})
			i = e
		}
		runs = append(runs, run)
	}
	return runs
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// codeLiteral reads the literal starting at text[i] (its quote) and
// returns its value and the index after it. Backslash escapes are
// resolved the way C-like languages and Python do.
func codeLiteral(text string, i int) (string, int) {
	q := text[i]
	if q != '`' && strings.HasPrefix(text[i:], strings.Repeat(string(q), 3)) {
		end := strings.Index(text[i+3:], strings.Repeat(string(q), 3))
		if end < 0 {
			return text[i+3:], len(text)
		}
		return text[i+3 : i+3+end], i + 6 + end
	}
	var b strings.Builder
	j := i + 1
	for j < len(text) {
		c := text[j]
		switch {
		case c == q:
			return b.String(), j + 1
		case c == '\n' && q != '`':
			return b.String(), j
		case c == '\\' && j+1 < len(text):
			j++
			switch e := text[j]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'x':
				if j+2 < len(text) {
					if n, err := strconv.ParseUint(text[j+1:j+3], 16, 8); err == nil {
						b.WriteByte(byte(n))
						j += 2
						break
					}
				}
				b.WriteByte('x')
			case 'u':
				if j+4 < len(text) {
					if n, err := strconv.ParseUint(text[j+1:j+5], 16, 32); err == nil {
						b.WriteRune(rune(n))
						j += 4
						break
					}
				}
				b.WriteByte('u')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
		j++
	}
	return b.String(), j
}

// decoded is a literal decoded from base64 or hex when that gives text.
func decoded(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 8 || len(s) > 64<<10 {
		return "", false
	}
	try := func(b []byte, err error) (string, bool) {
		if err != nil || !utf8.Valid(b) {
			return "", false
		}
		for _, r := range string(b) {
			if r < ' ' && r != '\n' && r != '\t' && r != '\r' {
				return "", false
			}
		}
		return string(b), true
	}
	if isHexString(s) {
		if t, ok := try(hex.DecodeString(s)); ok {
			return t, true
		}
	}
	if isBase64(s) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if t, ok := try(enc.DecodeString(s)); ok {
				return t, true
			}
		}
	}
	return "", false
}

func isHexString(s string) bool {
	if len(s)%2 != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isBase64(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isIdent(c) || c == '+' || c == '/' || c == '=' || c == '-') {
			return false
		}
	}
	return true
}

// runsCommands and decodesStrings are the signs of code that builds a
// command at run time and runs it.
func runsCommands(text string) bool {
	return containsAny(text, "system(", "popen(", "subprocess", "spawn", "exec(", "execSync", "execFile", "child_process", "Popen",
		"os.exec", "pty.", "%x{", "IO.popen", "Runtime.getRuntime", "shell_exec", "passthru", "proc_open", "eval(")
}

func decodesStrings(text string) bool {
	return containsAny(text, "b64decode", "base64", "atob(", "fromhex", "unhexlify", "fromCharCode", "chr(", "rot13", "codecs.decode",
		"decompress", "[::-1]", "reverse(", "pack(", "unpack(", "decode(")
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
