package operator

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// WrittenPaths lists the files a shell command would write, change or
// remove, as far as its parsed text shows: the targets of output
// redirections (>, >>, >|, &>, <>), tee's files, the files of sed -i (and
// perl -i), the destination of cp, mv, install, ln and rsync (mv's sources
// too: they go away), dd of=, and the files of truncate, touch, rm, unlink
// and shred; commands under sudo, env, nice, timeout and the like, inside
// sh -c, eval, subshells, pipelines and substitutions, are read the same
// way. A `cd DIR` with a literal DIR is followed, so later relative paths
// come back joined to it. Paths are returned as written (relative paths
// stay relative to where the command runs).
//
// complete is false when the command may write somewhere the text does not
// show: it did not parse, a written path holds an expansion only the
// running shell knows (the path is then returned with the expansion as
// written, so `$D/.ponder/x` still shows .ponder), a cd went somewhere
// unknown, or inline code (python -c, perl -e, node -e, find -exec …) runs
// that is not followed. A caller protecting a place decides what an
// incomplete answer means; the gate's own Classify is not affected.
//
// It is separate from Classify on purpose: Classify asks whether an action
// is irreversible or outward, this asks where it writes — the supervisor's
// gate uses it to keep agents from writing the files it watches.
func WrittenPaths(command string) (paths []string, complete bool) {
	w := &writeScan{complete: true}
	w.script(command, "", 0)
	return w.paths, w.complete
}

type writeScan struct {
	paths    []string
	complete bool
	budget   int
}

// wpMaxDepth bounds scripts inside scripts (sh -c inside eval …).
const wpMaxDepth = 5

func (w *writeScan) script(src, dir string, depth int) {
	if depth > wpMaxDepth {
		w.complete = false
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		w.complete = false
		return
	}
	w.stmts(f.Stmts, &dir, depth)
}

func (w *writeScan) add(p string, known bool, dir string) {
	if !known {
		w.complete = false
	}
	if p == "" {
		return
	}
	if dir != "" && dir != "?" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
		p = path.Join(dir, p)
	}
	w.paths = append(w.paths, p)
}

func (w *writeScan) stmts(list []*syntax.Stmt, dir *string, depth int) {
	for _, s := range list {
		w.stmt(s, dir, depth)
	}
}

// stmt reads one statement; dir is the directory a cd moved to, "" for
// where the command started (and "?" once it is unknown).
func (w *writeScan) stmt(s *syntax.Stmt, dir *string, depth int) {
	if s == nil {
		return
	}
	w.budget++
	if w.budget > 10000 {
		w.complete = false
		return
	}
	w.substitutions(s, *dir, depth)
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrInOut:
			p, known := wpWordValue(r.Word)
			w.add(p, known && *dir != "?", *dir)
		case syntax.DplOut:
			// >&FILE (not a descriptor number or "-") sends both streams to FILE.
			if p, known := wpWordValue(r.Word); p != "-" && strings.Trim(p, "0123456789") != "" {
				w.add(p, known && *dir != "?", *dir)
			}
		}
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		w.call(c, dir, depth)
	case *syntax.BinaryCmd:
		w.stmt(c.X, dir, depth)
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			// Each side of a pipe runs in its own subshell: a cd there moves
			// nothing after it.
			d := *dir
			w.stmt(c.Y, &d, depth)
		} else {
			w.stmt(c.Y, dir, depth)
		}
	case *syntax.Subshell:
		d := *dir
		w.stmts(c.Stmts, &d, depth)
	case *syntax.Block:
		w.stmts(c.Stmts, dir, depth)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(ic.Cond, dir, depth)
			w.stmts(ic.Then, dir, depth)
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond, dir, depth)
		w.stmts(c.Do, dir, depth)
	case *syntax.ForClause:
		w.stmts(c.Do, dir, depth)
	case *syntax.CaseClause:
		for _, item := range c.Items {
			w.stmts(item.Stmts, dir, depth)
		}
	case *syntax.FuncDecl:
		d := *dir
		w.stmt(c.Body, &d, depth)
	case *syntax.TimeClause:
		w.stmt(c.Stmt, dir, depth)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, dir, depth)
	}
}

// substitutions reads the commands inside $(…), `…` and <(…) of a
// statement's words (not of nested statements, which stmt reaches).
func (w *writeScan) substitutions(s *syntax.Stmt, dir string, depth int) {
	visit := func(n syntax.Node) {
		syntax.Walk(n, func(node syntax.Node) bool {
			switch x := node.(type) {
			case *syntax.CmdSubst:
				d := dir
				w.stmts(x.Stmts, &d, depth)
				return false
			case *syntax.ProcSubst:
				d := dir
				w.stmts(x.Stmts, &d, depth)
				return false
			case *syntax.Stmt:
				return x == s
			}
			return true
		})
	}
	for _, r := range s.Redirs {
		if r.Word != nil {
			visit(r.Word)
		}
		if r.Hdoc != nil {
			visit(r.Hdoc)
		}
	}
	if c, ok := s.Cmd.(*syntax.CallExpr); ok {
		for _, a := range c.Assigns {
			if a.Value != nil {
				visit(a.Value)
			}
		}
		for _, word := range c.Args {
			visit(word)
		}
	}
}

type wpWord struct {
	val   string
	known bool
}

func (w *writeScan) call(c *syntax.CallExpr, dir *string, depth int) {
	var argv []wpWord
	for _, a := range c.Args {
		v, known := wpWordValue(a)
		argv = append(argv, wpWord{v, known})
	}
	w.command(argv, dir, depth)
}

// wpWrappers run the rest of their arguments as a command; the value is how
// many of their own arguments take a value (so they are skipped).
var wpWrappers = map[string]map[string]bool{
	"sudo": {"-u": true, "-g": true, "-C": true, "-D": true, "-h": true, "-p": true, "-R": true, "-T": true},
	"doas": {"-u": true, "-C": true}, "command": {}, "exec": {"-a": true}, "nohup": {}, "builtin": {},
	"nice": {"-n": true}, "ionice": {"-c": true, "-n": true, "-p": true}, "stdbuf": {"-i": true, "-o": true, "-e": true},
	"time": {"-f": true, "-o": true}, "chroot": {}, "setsid": {}, "unbuffer": {},
}

var wpShells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "ash": true, "busybox": true}

var wpInlineCode = map[string]string{
	"python": "-c", "python3": "-c", "python2": "-c", "perl": "-e", "ruby": "-e", "node": "-e", "nodejs": "-e",
	"php": "-r", "deno": "eval", "bun": "-e", "awk": "", "gawk": "", "mawk": "", "osascript": "-e",
}

func (w *writeScan) command(argv []wpWord, dir *string, depth int) {
	for len(argv) > 0 {
		name := strings.ToLower(path.Base(strings.TrimLeft(argv[0].val, `\`)))
		rest := argv[1:]
		if !argv[0].known {
			// A command we cannot name may write anything.
			w.complete = false
			return
		}
		switch {
		case name == "env":
			for len(rest) > 0 && (strings.HasPrefix(rest[0].val, "-") || strings.Contains(rest[0].val, "=")) {
				if rest[0].val == "-u" || rest[0].val == "-C" || rest[0].val == "-S" {
					if rest[0].val != "-u" {
						w.complete = false
					}
					rest = rest[1:]
				}
				if len(rest) > 0 {
					rest = rest[1:]
				}
			}
			argv = rest
			continue
		case name == "timeout":
			rest = wpSkipOptions(rest, map[string]bool{"-s": true, "-k": true, "--signal": true, "--kill-after": true})
			if len(rest) > 0 {
				rest = rest[1:] // the duration
			}
			argv = rest
			continue
		case wpWrappers[name] != nil:
			argv = wpSkipOptions(rest, wpWrappers[name])
			continue
		}
		w.simple(name, rest, dir, depth)
		return
	}
}

// skipOptionArgs drops leading options (and the values of those in
// takesValue) up to the command they run.
func wpSkipOptions(args []wpWord, takesValue map[string]bool) []wpWord {
	for len(args) > 0 && strings.HasPrefix(args[0].val, "-") && args[0].val != "-" {
		if args[0].val == "--" {
			return args[1:]
		}
		if takesValue[args[0].val] {
			args = args[1:]
		}
		if len(args) > 0 {
			args = args[1:]
		}
	}
	return args
}

// operands are the arguments that are not options (after "--", all are).
func wpOperands(args []wpWord, takesValue map[string]bool) []wpWord {
	var out []wpWord
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.val == "--":
			return append(out, args[i+1:]...)
		case strings.HasPrefix(a.val, "-") && a.val != "-":
			if takesValue[a.val] {
				i++
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

func (w *writeScan) addWords(ws []wpWord, dir string) {
	for _, a := range ws {
		w.add(a.val, a.known && dir != "?", dir)
	}
}

func (w *writeScan) simple(name string, rest []wpWord, dir *string, depth int) {
	switch name {
	case "cd", "pushd":
		ops := wpOperands(rest, nil)
		switch {
		case len(ops) == 0 || !ops[0].known || strings.HasPrefix(ops[0].val, "~") || ops[0].val == "-":
			*dir = "?"
		case strings.HasPrefix(ops[0].val, "/"):
			*dir = path.Clean(ops[0].val)
		case *dir != "?":
			*dir = path.Join(*dir, ops[0].val)
		}
	case "tee":
		w.addWords(wpOperands(rest, nil), *dir)
	case "sed", "gsed":
		inPlace := false
		script := true // the first operand is the script unless -e or -f gave one
		var files []wpWord
		for i := 0; i < len(rest); i++ {
			a := rest[i].val
			switch {
			case a == "--in-place" || strings.HasPrefix(a, "--in-place="):
				inPlace = true
			case a == "-e" || a == "-f" || a == "--expression" || a == "--file":
				script = false
				i++
			case strings.HasPrefix(a, "--expression=") || strings.HasPrefix(a, "--file="):
				script = false
			case a == "-l" || a == "--line-length":
				i++
			case strings.HasPrefix(a, "--"):
			case strings.HasPrefix(a, "-") && a != "-":
				// Clustered short options: -i, -Ei, -ni.bak; -e/-f inside a
				// cluster take the rest (or the next argument) as the script.
				for j := 1; j < len(a); j++ {
					switch a[j] {
					case 'i':
						inPlace = true
						j = len(a) // -i.bak: the rest is a suffix
					case 'e', 'f':
						script = false
						if j == len(a)-1 {
							i++
						}
						j = len(a)
					}
				}
			default:
				if script {
					script = false
					continue
				}
				files = append(files, rest[i])
			}
		}
		if inPlace {
			w.addWords(files, *dir)
		}
	case "perl":
		w.complete = false // perl -e code, or perl -i editing the files it is given
	case "cp", "mv", "install", "ln", "rsync", "scp":
		takes := map[string]bool{"-t": true, "--target-directory": true, "-S": true, "--suffix": true, "-m": true, "--mode": true,
			"-o": true, "--owner": true, "-g": true, "--group": true, "-e": true}
		ops := wpOperands(rest, takes)
		target := ""
		targetKnown := true
		for i := 0; i < len(rest); i++ {
			switch a := rest[i].val; {
			case (a == "-t" || a == "--target-directory") && i+1 < len(rest):
				target, targetKnown = rest[i+1].val, rest[i+1].known
			case strings.HasPrefix(a, "--target-directory="):
				target, targetKnown = strings.TrimPrefix(a, "--target-directory="), rest[i].known
			case strings.HasPrefix(a, "-t") && len(a) > 2 && !strings.HasPrefix(a, "--"):
				target, targetKnown = a[2:], rest[i].known
			}
		}
		switch {
		case target != "":
			w.add(target, targetKnown && *dir != "?", *dir)
			if name == "mv" {
				w.addWords(ops, *dir)
			}
		case len(ops) > 0:
			w.addWords(ops[len(ops)-1:], *dir)
			if name == "mv" {
				w.addWords(ops[:len(ops)-1], *dir)
			}
		}
	case "dd":
		for _, a := range rest {
			if strings.HasPrefix(a.val, "of=") {
				w.add(strings.TrimPrefix(a.val, "of="), a.known && *dir != "?", *dir)
			}
		}
	case "truncate":
		w.addWords(wpOperands(rest, map[string]bool{"-s": true, "--size": true, "-r": true, "--reference": true}), *dir)
	case "touch", "rm", "unlink", "shred", "rmdir":
		w.addWords(wpOperands(rest, map[string]bool{"-d": true, "-r": name == "touch", "-t": true, "-n": true, "-s": true}), *dir)
	case "find":
		// find ROOTS… -delete / -exec … changes what it finds: its roots are
		// where, and the exact files are unknown.
		var roots []wpWord
		for _, a := range rest {
			if strings.HasPrefix(a.val, "-") || a.val == "(" || a.val == "!" {
				break
			}
			roots = append(roots, a)
		}
		for _, a := range rest {
			switch a.val {
			case "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls":
				w.addWords(roots, *dir)
				w.complete = false
				return
			}
		}
	case "xargs", "parallel":
		w.complete = false // the commands it runs take their arguments from input
	case "eval":
		var parts []string
		for _, a := range rest {
			if !a.known {
				w.complete = false
			}
			parts = append(parts, a.val)
		}
		d := *dir
		w.script(strings.Join(parts, " "), d, depth+1)
	case "source", ".":
		w.complete = false
	default:
		if wpShells[name] {
			for i, a := range rest {
				if a.val == "-c" || (strings.HasPrefix(a.val, "-") && !strings.HasPrefix(a.val, "--") && strings.HasSuffix(a.val, "c")) {
					if i+1 < len(rest) {
						if !rest[i+1].known {
							w.complete = false
						}
						w.script(rest[i+1].val, *dir, depth+1)
					}
					return
				}
			}
			if len(wpOperands(rest, nil)) > 0 {
				w.complete = false // a script file we do not read
			}
			return
		}
		if flag, ok := wpInlineCode[name]; ok {
			if flag == "" {
				w.complete = false // awk programs can print to files
				return
			}
			for _, a := range rest {
				if a.val == flag || strings.HasPrefix(a.val, flag) {
					w.complete = false
				}
			}
		}
	}
}

// wordValue is a word's value when it can be read without running
// anything (quotes removed, escapes resolved); otherwise the word as
// written, and known false.
func wpWordValue(wd *syntax.Word) (string, bool) {
	if wd == nil {
		return "", true
	}
	var b strings.Builder
	known := true
	for _, part := range wd.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(wpUnbackslash(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				// $'…': escapes we do not resolve are left, and marked.
				if strings.Contains(p.Value, `\`) {
					known = false
				}
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					b.WriteString(lit.Value)
					continue
				}
				known = false
				b.WriteString(wpPrinted(q))
			}
		default:
			known = false
			b.WriteString(wpPrinted(part))
		}
	}
	return b.String(), known
}

// unbackslash removes the backslashes of an unquoted literal.
func wpUnbackslash(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func wpPrinted(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return "$?"
	}
	return b.String()
}
