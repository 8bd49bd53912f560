package shell

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/laserkit/laserkit/internal/firstuse"
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
				a.walk.command(run, d+1, stdio{}, nil)
			}
			if len(run) == 1 && run[0].known && strings.ContainsAny(run[0].val, " \t;|&") {
				s := run[0].val
				a.subshell(func() { a.walk.script(s, d+1) })
			}
			for _, w := range run {
				if dec, ok := decoded(w.val); ok {
					a.grammarAnywhere(dec, Executed, "", "")
					a.subshell(func() { a.walk.script(dec, d+1) })
				}
			}
		}
		switch {
		case len(a.findings) > found:
		case runsCommands(text) && decodesStrings(text):
			a.add(Finding{Label: "parsed: code that decodes a command and runs it", Where: Unknown,
				Note: "in code run by " + name + ": the gate cannot read what it decodes"})
		case builtCall(text) != "" && reachesSystem(text):
			a.add(Finding{Label: "parsed: code whose calls are built at run time (" + builtCall(text) + ")", Where: Unknown,
				Note: "in code run by " + name + ": the gate cannot tell what it calls, and the code can reach the files or the network"})
		}
	})
}

// builtCallRes are the shapes of a call whose function or module is named
// at run time — by a string built from parts, a variable, or code text:
// getattr(shutil, 'rm'+'tree'), require('fs')['rm'+'Sync'], __import__(x),
// eval of a variable, Ruby's send, PHP's variable functions. What is
// called cannot be read from the text.
var builtCallRes = firstuse.Value[[]*regexp.Regexp]{New: func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, src := range []string{
		`\bgetattr\s*\(\s*[^,()]+,\s*(?:[^'"\s)]|['"][^'"]*['"]\s*[+%.])`,
		`(?:\b(?:__import__|import_module|require)\s*\(|\bimport\()\s*(?:[^'"\x60\s)]|['"][^'"]*['"]\s*\+)`,
		`\b(?:globals|locals|vars)\s*\([^)]*\)\s*\[|__dict__\s*\[|__builtins__`,
		`(?:^|[^.\w])(?:eval|exec|execfile)\s*\(\s*[^'"\s)]`,
		`\[[^\]\n]*(?:['"\x60]\s*\+|\+\s*['"\x60]|\$\{|\.join\(|fromCharCode|\bchr\()[^\]\n]*\]\s*\(`,
		`\bnew\s+Function\s*\(|\bFunction\s*\(\s*['"\x60]|\bReflect\.(?:get|apply)\s*\(`,
		`\.(?:send|public_send|__send__|const_get|instance_eval|class_eval)\b\s*\(?\s*[^:'"\s)]|\bcall_user_func(?:_array)?\s*\(|\$\w+\s*\(`,
	} {
		out = append(out, regexp.MustCompile(src))
	}
	return out
}}

// builtCall is the part of text that calls what is named at run time, "".
func builtCall(text string) string {
	for _, re := range builtCallRes.Get() {
		if m := re.FindString(text); m != "" {
			return firstLine(strings.TrimSpace(m))
		}
	}
	return ""
}

// reachesSystem: the code names a module or object through which it can
// touch the files, run programs or reach the network.
func reachesSystem(text string) bool {
	return reachesRe.Get().MatchString(text)
}

var reachesRe = firstuse.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?:os|shutil|subprocess|pathlib|socket|urllib|requests|httpx|ctypes|pty|importlib|builtins|sys|io|fs|child_process|net|http|https|dgram|process|Deno|Bun|File|FileUtils|Dir|IO|Kernel|Socket|Net|open|system|unlink|popen)\b`)
}}

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

// interpreterModel reads an interpreter's command line: its program given
// with -c/-e (scanned as code), a -m module (its command line read as that
// module's program), a script file (read and scanned as code), or a
// program from its input (an unknown finding when nobody can see it).
func (a *analyzer) interpreterModel(c *cmdCall) bool {
	name, rest, in := c.name, c.args, c.io.in
	base := strings.TrimRight(name, "0123456789.")
	flags := codeFlags(base)
	if isAwk(name) {
		// awk's program is its first operand (or -f FILE); system() and
		// print | "cmd" run a shell.
		for i := 0; i < len(rest); i++ {
			w := rest[i]
			if w.known && (w.val == "-f" || w.val == "--file") && i+1 < len(rest) {
				a.code(name, a.readText(rest[i+1]), c.d)
				return true
			}
			if w.known && (w.val == "-v" || w.val == "-F") {
				i++
				continue
			}
			if w.known && !strings.HasPrefix(w.val, "-") {
				a.code(name, w.val, c.d)
				return true
			}
		}
		return true
	}
	for i, w := range rest {
		if !w.known {
			continue
		}
		if w.val == "-m" && i+1 < len(rest) && (base == "python" || base == "pypy") {
			// python -m MODULE ARGS: the module's own command line.
			a.walk.command(rest[i+1:], c.d, c.io, c.env)
			return true
		}
		for _, f := range flags {
			switch {
			case w.val == f && i+1 < len(rest):
				code, _ := joinArgs(rest[i+1 : i+2])
				a.code(name, code, c.d)
				return true
			case strings.HasPrefix(f, "-") && len(f) == 2 && strings.HasPrefix(w.val, f) && len(w.val) > 2 && !strings.HasPrefix(w.val, "--"):
				a.code(name, w.val[2:], c.d)
				return true
			}
		}
		// perl's -M, -m, -I, -x, -d and -D carry their value glued on
		// (-MFile::Path=rmtree, -Mre): the word is one option, not flags.
		if base == "perl" && len(w.val) > 2 && strings.ContainsRune("MmIxdD", rune(w.val[1])) && w.val[0] == '-' {
			continue
		}
		// Combined short flags ending in the code flag: perl -pie, python -Bc.
		if len(w.val) > 2 && w.val[0] == '-' && w.val[1] != '-' && i+1 < len(rest) && isLetters(w.val[1:]) {
			last := "-" + w.val[len(w.val)-1:]
			if slices.Contains(flags, last) {
				code, _ := joinArgs(rest[i+1 : i+2])
				a.code(name, code, c.d)
				return true
			}
		}
		if !strings.HasPrefix(w.val, "-") {
			// The first operand is the program's file.
			if base == "deno" || base == "bun" {
				if w.val == "run" || w.val == "x" || w.val == "test" {
					continue
				}
				if isCLIModelled(base) && (w.val == "publish" || w.val == "pm") {
					return false
				}
			}
			a.runScriptFile(name, w, rest[i+1:], c.io, c.d, false)
			if base == "perl" {
				a.perlInPlace(rest)
			}
			return true
		}
	}
	if base == "perl" {
		a.perlInPlace(rest)
	}
	if readsProgramFromInput(rest) {
		switch in.kind {
		case unknownInput:
			a.unknown(name+" runs a program from its input", "piped in; the program cannot be read here")
		case fileInput:
			if text, ok, why := a.scriptText(arg{val: in.text, known: true}, stdio{}); ok {
				a.code(name, text, c.d)
			} else {
				a.unknown(name+" runs a program from its input", "read from "+in.text+": "+why)
			}
		}
	}
	return true
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// perlInPlace: perl -i edits the files it is given.
func (a *analyzer) perlInPlace(rest []arg) {
	inPlace := false
	for _, w := range rest {
		if w.known && strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "--") && strings.ContainsRune(w.val, 'i') {
			inPlace = true
		}
	}
	if !inPlace {
		return
	}
	a.mayWrite("perl")
}

// readsProgramFromInput: an interpreter given no program operand (or "-")
// reads its program from standard input.
func readsProgramFromInput(rest []arg) bool {
	for _, w := range rest {
		if !w.known {
			return false
		}
		if w.val == "-" {
			return true
		}
		if w.val == "-m" || !strings.HasPrefix(w.val, "-") {
			return false
		}
	}
	return true
}

// runScriptFile reads a script file a shell or interpreter runs (bash
// FILE, source FILE, python3 FILE): a file written earlier in the line is
// read as written, one on disk is read (up to MaxScriptFile), /dev/fd/N
// and /dev/stdin are the descriptor's input, and a process substitution is
// the output of its commands when we can read it. Shell scripts are
// analysed as scripts (source: in this shell), other programs' as code.
// A file that cannot be read is unknown.
func (a *analyzer) runScriptFile(name string, file arg, args []arg, io stdio, d int, here bool) {
	text, ok, why := a.scriptText(file, io)
	if !ok {
		if why == whyMissing && !a.mayHaveWritten() {
			return // no such file: the program fails, nothing runs
		}
		a.unknown(name+" runs "+file.val, why)
		return
	}
	interp := name
	if name == "source" || name == "." {
		interp = "bash"
	}
	if isShell(interp) {
		run := func() {
			a.sc.positional, a.sc.hasPositional = args, true
			a.walk.script(text, d+1)
		}
		if here {
			saved := a.sc
			a.sc = &scope{parent: saved}
			run()
			// What a sourced script defines stays: fold it into the
			// caller's scope.
			for k, v := range a.sc.vars {
				saved.setVar(k, v)
			}
			for k, v := range a.sc.funcs {
				saved.setFunc(k, v)
			}
			for k, v := range a.sc.aliases {
				saved.setAlias(k, v)
			}
			a.sc = saved
			return
		}
		a.subshell(run)
		return
	}
	a.code(name, text, d)
}
