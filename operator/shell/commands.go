package shell

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/internal/shellquote"
)

// The models of the programs the table marks modelled (programs.go): each
// reads its program's options the way the program does and records what
// it runs, destroys and writes. A model returns false when what its program
// runs is not explained, so the arguments are read as an unknown
// program's.

// rmRecursiveLabel is a recursive rm without force: an agent's rm has no
// terminal on its standard input, so GNU rm asks nothing (write-protected
// files included) and deletes as much as rm -rf.
const rmRecursiveLabel = "rm -r (recursive delete: with no terminal, rm asks nothing)"

// rmModel reads rm's options as GNU rm does (abbreviated long options,
// options after operands): recursive and forced is the grammar's rm -rf;
// recursive alone deletes as much when nobody is at a terminal, which an
// agent never is, so it is irreversible too.
func (a *analyzer) rmModel(c *cmdCall) bool {
	r := rmOptions.parse(c.args)
	if r.bad || r.set["help"] > 0 || r.set["version"] > 0 || len(r.operands) == 0 {
		return true
	}
	paths, known := a.deletes(r.operands, "rm", r.set["r"]+r.set["R"] > 0)
	text := commandText("rm", c.args)
	recursive, force := r.set["r"]+r.set["R"] > 0, r.set["f"] > 0
	f := Finding{Where: Executed, Command: text, Paths: paths, unknownPath: !known}
	switch {
	case recursive && force:
		f.Label, f.grammarNo = "parsed: "+irreversiblePatterns[grammarRmRf].Label, grammarRmRf+1
		a.add(f)
	case recursive:
		f.Label = "parsed: " + rmRecursiveLabel
		a.add(f)
	case force:
		for _, w := range r.operands {
			if !w.known {
				a.unknown("rm with an argument known only at run time", "it may be the missing -r")
				return true
			}
		}
	}
	if !recursive {
		for _, w := range r.operands {
			a.losesWork(w, "rm", text)
		}
	}
	return true
}

// deletes records the paths a deleting command removes and returns them
// resolved, and whether all are known.
func (a *analyzer) deletes(ops []arg, by string, tree bool) ([]string, bool) {
	var paths []string
	known := true
	for _, w := range ops {
		i := a.addWrite(w, by, true)
		if i < 0 {
			known = false
			continue
		}
		wr := &a.writes[i]
		if tree {
			wr.Tree = true
		}
		if !wr.Known {
			known = false
		}
		p := wr.Path
		if wr.Real != "" {
			p = wr.Real
		}
		paths = append(paths, p)
	}
	return paths, known
}

func (a *analyzer) cdModel(c *cmdCall) bool {
	a.cd(c.args)
	return true
}

// findArgs is how many arguments a find primary takes: one (two for
// -fprintf), or ok false for a primary that takes none. That argument is
// never itself a primary (find . -name -delete deletes nothing).
func findArgs(primary string) (n int, ok bool) {
	switch primary {
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
		"-lname", "-ilname", "-type", "-xtype", "-user", "-group", "-uid", "-gid", "-perm",
		"-size", "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin", "-newer", "-anewer",
		"-cnewer", "-samefile", "-inum", "-links", "-maxdepth", "-mindepth", "-fstype", "-used",
		"-printf", "-fprint", "-fprint0", "-fls", "-context", "-regextype", "-files0-from",
		"-D":
		return 1, true
	case "-fprintf":
		return 2, true
	}
	return 0, false
}

// findModel reads find's expression: -delete and -exec/-ok of a deleter
// delete every match under its roots; the command -exec runs is analysed
// like any other; -fprint and friends write their file.
func (a *analyzer) findModel(c *cmdCall) bool {
	rest := c.args
	var roots []arg
	for _, w := range rest {
		if w.known && (strings.HasPrefix(w.val, "-") || w.val == "(" || w.val == "!") {
			break
		}
		roots = append(roots, w)
	}
	if len(roots) == 0 {
		roots = []arg{{val: ".", known: true}}
	}
	text := commandText("find", rest)
	deleted := func(label string) {
		paths, known := a.deletes(roots, "find", true)
		a.add(Finding{Label: label, Where: Executed, Command: text, Paths: paths, unknownPath: !known})
	}
	for i := 0; i < len(rest); i++ {
		s := rest[i].val
		if !rest[i].known {
			continue
		}
		if n, ok := findArgs(s); ok || len(s) == 10 && strings.HasPrefix(s, "-newer") {
			if !ok {
				n = 1 // -newerXY
			}
			switch s {
			case "-fprint", "-fprint0", "-fls", "-fprintf":
				if i+1 < len(rest) {
					a.addWrite(rest[i+1], "find", false)
				}
			}
			i += n
			continue
		}
		switch s {
		case "-delete":
			deleted("parsed: find -delete (deletes every file it matches)")
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(rest) && rest[j].val != ";" && rest[j].val != "+" {
				j++
			}
			sub := rest[i+1 : j]
			i = j
			if len(sub) == 0 {
				continue
			}
			if sub[0].known && isDeleter(commandName(sub[0].val)) {
				deleted("parsed: find " + s + " " + commandName(sub[0].val) + " (deletes every file it matches)")
			}
			if what := a.feeding("{}", func() { a.walk.command(sub, c.d, stdio{}, nil) }); what != "" {
				paths, known := a.roots(roots)
				a.add(Finding{Label: "parsed: find " + s + " " + commandName(sub[0].val) + " (" + what + ")", Where: Executed,
					Command: text, Paths: paths, unknownPath: !known})
			}
		}
	}
	return true
}

// roots are find's roots resolved, and whether all are known.
func (a *analyzer) roots(roots []arg) ([]string, bool) {
	var paths []string
	known := true
	for _, w := range roots {
		p, ok := a.resolve(w)
		if !ok || w.glob {
			known = false
			continue
		}
		paths = append(paths, filepath.Clean(p))
	}
	return paths, known
}

func isDeleter(name string) bool {
	return name == "rm" || name == "unlink" || name == "shred" || name == "rmdir"
}

// xargsModel reads xargs's options as GNU xargs does and analyses the
// command it runs with the arguments it will get: when its input is a
// literal we can read (echo …, a heredoc), the items are split the way
// xargs splits them and put into the command line (appended, or in place
// of the -I string).
func (a *analyzer) xargsModel(c *cmdCall) bool {
	in := c.io.in
	r := xargsOptions.parse(c.args)
	if r.bad || r.set["help"] > 0 || r.set["version"] > 0 {
		return true
	}
	sub := r.operands
	if len(sub) == 0 {
		return true // echo
	}
	replace, hasReplace := r.values["I"], r.set["I"] > 0
	if r.set["i"] > 0 {
		replace, hasReplace = r.values["i"], true
		if replace == "" {
			replace = "{}"
		}
	}
	if r.set["a"] > 0 {
		in = a.fileInput(arg{val: r.values["a"], known: true})
	}
	var items []string
	known := in.kind == literalInput
	if known {
		switch {
		case hasReplace || r.set["L"] > 0 || r.set["l"] > 0:
			for _, line := range strings.Split(in.text, "\n") {
				if line = strings.TrimLeft(line, " \t"); line != "" {
					items = append(items, line)
				}
			}
		case r.set["0"] > 0:
			items = strings.Split(strings.TrimRight(in.text, "\x00"), "\x00")
		case r.set["d"] > 0 && r.values["d"] != "":
			items = strings.Split(in.text, r.values["d"][:1])
		default:
			items = xargsSplit(in.text)
		}
	}
	a.fedCommand("xargs", sub, replace, hasReplace, items, known, c.d)
	return true
}

// fedCommand analyses a command that xargs or parallel runs with arguments
// from its input. Known items are put into the command line as the tool
// would; a deleter on unseen input deletes whatever arrives; a shell whose
// script comes from the input (no -c script, or one holding the replace
// string) runs whatever arrives, and with a literal input that text is
// also read as the script it will be.
func (a *analyzer) fedCommand(via string, sub []arg, replace string, hasReplace bool, items []string, known bool, d int) {
	if sub[0].known {
		name := commandName(sub[0].val)
		if isDeleter(name) && !known {
			a.add(Finding{Label: "parsed: " + via + " " + name + " (deletes every path it reads)", Where: Executed,
				Command: commandText(via, sub), unknownPath: true})
			a.addWrite(arg{val: "", known: false}, via, true)
		}
		if isShell(name) || name == "eval" {
			script, hasScript := shellScript(sub[1:])
			fromInput := !hasScript || hasReplace && strings.Contains(script, replace)
			if name == "eval" {
				fromInput = true
			}
			if fromInput {
				if !known {
					a.add(Finding{Label: "parsed: " + via + " runs a shell on its input (runs whatever arrives)", Where: Executed, Command: commandText(via, sub)})
				}
				for _, it := range items {
					a.subshell(func() { a.walk.script(it, d+1) })
				}
				if len(items) > 0 {
					a.subshell(func() { a.walk.script(strings.Join(items, " "), d+1) })
				}
			}
		}
	}
	switch {
	case !known && hasReplace:
		if what := a.feeding(replace, func() { a.walk.command(sub, d, stdio{}, nil) }); what != "" {
			a.add(Finding{Label: "parsed: " + via + " " + commandName(sub[0].val) + " (" + what + ")", Where: Executed,
				Command: commandText(via, sub), unknownPath: true})
		}
	case !known:
		// The items are appended: the files a truncation or a shell's
		// script is given are each one it reads.
		name := commandName(sub[0].val)
		if _, script := shellScript(sub[1:]); sub[0].known && (name == "truncate" || name == "chmod" || name == "cp" || isShell(name) && script) {
			fed := append(slices.Clone(sub), arg{val: "{}", known: true})
			if what := a.feeding("{}", func() { a.walk.command(fed, d, stdio{}, nil) }); what != "" {
				a.add(Finding{Label: "parsed: " + via + " " + name + " (" + what + ")", Where: Executed,
					Command: commandText(via, sub), unknownPath: true})
			}
			return
		}
		// The command gets words only the input spells: an operand the
		// gate cannot read (git checkout -- on what arrives discards the
		// changes of whatever files those are).
		a.walk.command(append(slices.Clone(sub), arg{val: "$" + strings.ToUpper(via) + "_INPUT"}), d, stdio{}, nil)
	case hasReplace:
		for n, it := range items {
			if n >= 64 || a.overTime() {
				break
			}
			argv := make([]arg, len(sub))
			for k, w := range sub {
				argv[k] = arg{val: strings.ReplaceAll(w.val, replace, it), known: w.known}
			}
			a.walk.command(argv, d, stdio{}, nil)
		}
		if len(items) == 0 {
			a.walk.command(sub, d, stdio{}, nil)
		}
	default:
		argv := append([]arg{}, sub...)
		for _, it := range items {
			argv = append(argv, arg{val: it, known: true})
		}
		a.walk.command(argv, d, stdio{}, nil)
	}
}

// shellScript finds the -c script of a shell's arguments.
func shellScript(rest []arg) (string, bool) {
	for i, w := range rest {
		if !w.known {
			return "", false
		}
		s := w.val
		if s == "--" || len(s) < 2 || s[0] != '-' && s[0] != '+' {
			return "", false
		}
		if s[0] == '-' && s[1] != '-' && strings.IndexByte(s, 'c') > 0 {
			if i+1 < len(rest) {
				return rest[i+1].val, true
			}
			return "", false
		}
	}
	return "", false
}

var parallelSpec = optSpec{short: "jSadEICnNLsX", long: []string{"jobs", "sshlogin", "arg-file", "delimiter", "colsep", "joblog", "results", "tmpdir", "timeout", "delay", "retries", "env", "tag-string", "max-args", "max-replace-args", "max-lines", "workdir", "wd", "basefile", "transfer", "return", "load", "memfree", "shebang-wrap", "sshloginfile", "slf", "eof", "replace", "extensionreplace", "basenamereplace", "dirnamereplace", "basenameextensionreplace", "seqreplace", "arg-sep", "arg-file-sep", "profile", "termseq", "tagstring", "halt", "nice", "block", "block-size", "header", "recend", "recstart", "rpl", "shellquote", "sqlmaster", "sqlworker", "sql", "sqlandworker", "limit", "fifo", "cat", "trc", "ssh", "controlmaster", "plus", "resume", "resume-failed", "retry-failed", "tee", "pipepart", "pipe", "semaphorename", "id", "fg", "bg", "wait"}}

// parallelReplace are GNU parallel's replacement strings.
var parallelReplace = []string{"{}", "{.}", "{/}", "{//}", "{/.}", "{#}", "{%}", "{1}", "{2}", "{3}"}

// parallelModel: GNU parallel joins its command words with spaces and runs
// the line through a shell, with each input (::: arguments, :::: files or
// its standard input) put in place of {} or appended. Its long options may
// be abbreviated (Perl's Getopt::Long), so a word after an option we cannot
// place is read both as that option's value and as the command.
func (a *analyzer) parallelModel(c *cmdCall) bool {
	for _, start := range parallelStarts(c.args) {
		a.parallelFrom(c.args[start:], c.d, c.io.in)
	}
	return true
}

// parallelStarts are the possible indexes of parallel's command.
func parallelStarts(rest []arg) []int {
	var starts []int
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		s := w.val
		switch {
		case !w.known || s == "--" || !strings.HasPrefix(s, "-") || strings.HasPrefix(s, ":::"):
			if s == "--" {
				i++
			}
			return append(starts, i)
		case strings.HasPrefix(s, "--"):
			name, _, hasValue := strings.Cut(s[2:], "=")
			if hasValue {
				continue
			}
			if slices.Contains(parallelSpec.long, name) {
				i++
				continue
			}
			exact := false
			for _, l := range parallelSpec.long {
				if strings.HasPrefix(l, name) && name != "" {
					exact = true
				}
			}
			if exact {
				// Perhaps an abbreviation of an option with a value:
				// the next word may be the command.
				starts = append(starts, i+1)
				i++
			}
		default:
			for j := 1; j < len(s); j++ {
				if strings.IndexByte(parallelSpec.short, s[j]) >= 0 {
					if j == len(s)-1 {
						i++
					}
					break
				}
			}
		}
	}
	return append(starts, len(rest))
}

func (a *analyzer) parallelFrom(sub []arg, d int, in input) {
	var cmd []arg
	var inputs []arg
	fromArgs := false
	for i, w := range sub {
		if w.known && strings.HasPrefix(w.val, ":::") { // ::: and :::: (and :::+) start the inputs
			cmd, inputs, fromArgs = sub[:i], sub[i+1:], true
			break
		}
	}
	if !fromArgs {
		cmd = sub
	}
	var items []string
	known := fromArgs
	for _, w := range inputs {
		if strings.HasPrefix(w.val, "::::") {
			known = false // inputs from files
		}
		if strings.HasPrefix(w.val, ":::") {
			continue
		}
		if !w.known {
			known = false
		}
		items = append(items, w.val)
	}
	if !fromArgs && in.kind == literalInput {
		known = true
		for _, line := range strings.Split(in.text, "\n") {
			if line != "" {
				items = append(items, line)
			}
		}
	}
	run := func(s string) { a.subshell(func() { a.walk.script(s, d+1) }) }
	if len(cmd) == 0 {
		// The inputs themselves are the commands.
		for _, it := range items {
			run(it)
		}
		if !known && (in.kind != noInput || fromArgs) {
			a.add(Finding{Label: "parsed: parallel runs commands read from its input (runs whatever arrives)", Where: Executed, Command: commandText("parallel", sub)})
		}
		return
	}
	// parallel hands its command line to a shell: analyse the line as
	// written, and with each known input in place.
	text, _ := joinArgs(cmd)
	run(text)
	for n, it := range items {
		if n >= 64 || a.overTime() {
			break
		}
		line, replaced := text, false
		for _, r := range parallelReplace {
			if strings.Contains(line, r) {
				line, replaced = strings.ReplaceAll(line, r, it), true
			}
		}
		if !replaced {
			line += " " + it
		}
		run(line)
	}
	replace := ""
	for _, r := range parallelReplace {
		if strings.Contains(text, r) {
			replace = r
		}
	}
	a.fedCommand("parallel", cmd, replace, replace != "", items, known, d)
}

// shellModel analyses sh/bash/zsh: the -c script, a script file (read and
// analysed as a script), a script read from a heredoc, a here-string, a
// literal pipe or a descriptor, or an unknown finding when it runs a
// script nobody can see.
func (a *analyzer) shellModel(c *cmdCall) bool {
	name, rest, d, in := c.name, c.args, c.d, c.io.in
	cflag, sflag := false, false
	i := 0
	for ; i < len(rest); i++ {
		w := rest[i]
		if !w.known {
			break
		}
		s := w.val
		if s == "--" || s == "-" {
			i++
			break
		}
		if strings.HasPrefix(s, "--") {
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
			if s == "--command" { // fish
				cflag = true
			}
			continue
		}
		if len(s) < 2 || (s[0] != '-' && s[0] != '+') {
			break
		}
		if s[0] == '-' && strings.IndexByte(s, 'c') > 0 {
			cflag = true
		}
		if s[0] == '-' && strings.IndexByte(s, 's') > 0 {
			sflag = true
		}
		if strings.IndexByte(s, 'o') > 0 || strings.IndexByte(s, 'O') > 0 {
			i++
		}
	}
	operands := rest[min(i, len(rest)):]
	switch {
	case cflag:
		if len(operands) == 0 {
			return true
		}
		// A script with expansions only the running shell knows is parsed
		// with those expansions in place, as the inner shell would see it.
		a.subshell(func() {
			// sh -c SCRIPT NAME ARGS…: NAME is $0, ARGS are $1….
			a.sc.positional, a.sc.hasPositional = operands[min(2, len(operands)):], true
			if len(operands) > 1 {
				a.sc.setVar("0", operands[1])
			}
			a.walk.script(operands[0].val, d+1)
		})
	case len(operands) > 0 && !sflag:
		a.runScriptFile(name, operands[0], operands[1:], c.io, d, false)
	default:
		switch in.kind {
		case literalInput:
			a.subshell(func() { a.walk.script(in.text, d+1) })
		case unknownInput:
			a.unknown(name+" runs a script from its input", "piped in; the script cannot be read here")
		case fileInput:
			if text, ok, why := a.scriptText(arg{val: in.text, known: true}, stdio{}); ok {
				a.subshell(func() { a.walk.script(text, d+1) })
			} else {
				a.unknown(name+" runs a script from its input", "read from "+in.text+": "+why)
			}
		}
	}
	return true
}

// evalModel: eval runs its arguments, joined, as a script in this shell.
func (a *analyzer) evalModel(c *cmdCall) bool {
	text, _ := joinArgs(c.args)
	a.walk.script(text, c.d+1)
	return true
}

// sourceModel: source FILE (and . FILE) runs a script in this shell: what
// it assigns and defines stays.
func (a *analyzer) sourceModel(c *cmdCall) bool {
	if len(c.args) == 0 {
		return true
	}
	a.runScriptFile(c.name, c.args[0], c.args[1:], c.io, c.d, true)
	return true
}

// dashCModel handles commands that run their -c argument through a shell
// (su, runuser, script, sg).
func (a *analyzer) dashCModel(c *cmdCall) bool {
	rest := c.args
	for i, w := range rest {
		if !w.known {
			continue
		}
		if (w.val == "-c" || w.val == "--command") && i+1 < len(rest) {
			if rest[i+1].known {
				a.subshell(func() { a.walk.script(rest[i+1].val, c.d+1) })
			} else {
				a.unknown("-c with a script known only at run time", "")
			}
			return true
		}
		if v, ok := strings.CutPrefix(w.val, "--command="); ok {
			a.subshell(func() { a.walk.script(v, c.d+1) })
			return true
		}
	}
	if c.name == "runuser" && slices.ContainsFunc(rest, func(w arg) bool {
		return w.known && (w.val == "-u" || w.val == "--user" || strings.HasPrefix(w.val, "--user="))
	}) {
		// runuser -u USER [--] COMMAND…: the command runs as it is.
		if cmd := skipOptions(rest, optSpec{short: "ugGw", long: []string{"user", "group", "supp-group", "whitelist-environment"}}); len(cmd) > 0 {
			a.walk.command(cmd, c.d+1, c.io, nil)
		}
		return true
	}
	if c.name == "sg" && len(rest) > 1 {
		// sg GROUP COMMAND: the command is run by a shell.
		text, _ := joinArgs(rest[1:])
		a.subshell(func() { a.walk.script(text, c.d+1) })
		return true
	}
	// su and script without -c run an interactive shell (or write a
	// typescript file): nothing we can read runs.
	return c.name != "script" || len(rest) == 0 || !slices.ContainsFunc(rest, func(w arg) bool { return !strings.HasPrefix(w.val, "-") })
}

// flockModel: flock [options] FILE COMMAND… or FILE -c SCRIPT (flock FD
// takes no command).
func (a *analyzer) flockModel(c *cmdCall) bool {
	rest := c.args
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if !w.known {
			return false
		}
		switch {
		case w.val == "-c" || w.val == "--command":
			if i+1 < len(rest) {
				a.subshell(func() { a.walk.script(rest[i+1].val, c.d+1) })
			}
			return true
		case w.val == "-w" || w.val == "--timeout" || w.val == "-E" || w.val == "--conflict-exit-code":
			i++
		case strings.HasPrefix(w.val, "-"):
		default:
			// The lock file; the rest is the command (or -c SCRIPT).
			sub := rest[i+1:]
			if len(sub) > 0 && sub[0].known && (sub[0].val == "-c" || sub[0].val == "--command") {
				if len(sub) > 1 {
					a.subshell(func() { a.walk.script(sub[1].val, c.d+1) })
				}
				return true
			}
			if len(sub) > 0 {
				a.walk.command(sub, c.d, c.io, c.env)
			}
			return true
		}
	}
	return true
}

// sshModel: ssh runs its trailing words as a shell command on the remote
// host; what it does there is as irreversible as here. ProxyCommand and
// LocalCommand options run here.
func (a *analyzer) sshModel(c *cmdCall) bool {
	rest := c.args
	for i, w := range rest {
		if !w.known {
			continue
		}
		opt := ""
		switch {
		case w.val == "-o" && i+1 < len(rest):
			opt = rest[i+1].val
		case strings.HasPrefix(w.val, "-o") && len(w.val) > 2:
			opt = w.val[2:]
		}
		if k, v, ok := strings.Cut(opt, "="); ok {
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "proxycommand", "localcommand", "knownhostscommand":
				a.subshell(func() { a.walk.script(v, c.d+1) })
			}
		}
	}
	sub := skipOptions(rest, optSpec{short: "BbcDEeFIiJLlmOoPpQRSWw"})
	if len(sub) < 2 {
		return true
	}
	text, _ := joinArgs(sub[1:])
	a.subshell(func() { a.walk.script(text, c.d+1) })
	return true
}

func (a *analyzer) watchModel(c *cmdCall) bool {
	exec := false
	for _, w := range c.args {
		if w.known && (w.val == "-x" || w.val == "--exec") {
			exec = true
		}
	}
	sub := skipOptions(c.args, optSpec{short: "nq", long: []string{"interval"}})
	if len(sub) == 0 {
		return true
	}
	if exec {
		a.walk.command(sub, c.d, stdio{}, nil)
		return true
	}
	text, _ := joinArgs(sub)
	a.subshell(func() { a.walk.script(text, c.d+1) })
	return true
}

// trapModel: trap 'SCRIPT' SIGNAL… runs SCRIPT when the signal (or EXIT)
// comes: it is read as a script of this shell.
func (a *analyzer) trapModel(c *cmdCall) bool {
	rest := c.args
	for len(rest) > 0 && rest[0].known && strings.HasPrefix(rest[0].val, "-") {
		if rest[0].val == "-p" || rest[0].val == "-l" {
			return true
		}
		if rest[0].val == "--" || rest[0].val == "-" {
			if rest[0].val == "-" {
				return true // reset
			}
			rest = rest[1:]
			break
		}
		rest = rest[1:]
	}
	if len(rest) < 2 {
		return true
	}
	if !rest[0].known {
		a.unknown("trap with an action known only at run time", "")
		return true
	}
	a.walk.script(rest[0].val, c.d+1)
	return true
}

// aliasModel records alias NAME=VALUE definitions; a later command word
// NAME is replaced by VALUE (call).
func (a *analyzer) aliasModel(c *cmdCall) bool {
	for _, w := range c.args {
		name, def, ok := strings.Cut(w.val, "=")
		if !ok || strings.HasPrefix(name, "-") {
			continue
		}
		if !w.known {
			a.unknown("alias "+name+" defined as something known only at run time", "")
			continue
		}
		d := def
		a.sc.setAlias(name, &d)
	}
	return true
}

// hashModel: hash -p PATH NAME makes NAME run PATH from then on, like
// an alias of it (hash alone, or -r, -d, -t, changes nothing that runs).
func (a *analyzer) hashModel(c *cmdCall) bool {
	for i, w := range c.args {
		if w.known && w.val == "-p" && i+2 < len(c.args) {
			path, name := c.args[i+1], c.args[i+2]
			if !path.known || !name.known {
				a.unknown("hash -p with a path or a name known only at run time", "")
				return true
			}
			def := shellquote.Word(path.val)
			a.sc.setAlias(name.val, &def)
			return true
		}
	}
	return true
}

func (a *analyzer) unaliasModel(c *cmdCall) bool {
	for _, w := range c.args {
		if w.known && !strings.HasPrefix(w.val, "-") {
			a.sc.setAlias(w.val, nil)
		}
	}
	return true
}

func (a *analyzer) unsetModel(c *cmdCall) bool {
	funcs := false
	for _, w := range c.args {
		switch {
		case !w.known:
		case w.val == "-f":
			funcs = true
		case w.val == "-v" || strings.HasPrefix(w.val, "-"):
		case funcs:
			a.sc.setFunc(w.val, nil)
		case w.val == "IFS":
			a.sc.setVar(w.val, arg{val: defaultIFS, known: true}) // unset IFS splits as the default does
		default:
			a.sc.setVar(w.val, arg{known: true})
		}
	}
	return true
}

// setModel: set -- ARGS (or set ARGS after options) sets the positional
// parameters.
func (a *analyzer) setModel(c *cmdCall) bool {
	for i, w := range c.args {
		if !w.known {
			return true
		}
		if w.val == "--" || !strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "+") {
			args := c.args[i:]
			if w.val == "--" {
				args = c.args[i+1:]
			}
			a.sc.positional, a.sc.hasPositional = args, true
			return true
		}
		if w.val == "-o" || w.val == "+o" {
			return true
		}
	}
	return true
}

// printfVar: printf -v NAME FORMAT… sets NAME (printf stays a data
// program: it prints nothing then). Its value is the format when that
// holds no % or \ and no arguments follow, else known only at run time.
func (a *analyzer) printfVar(args []arg) {
	if len(args) < 2 || !args[0].known {
		return
	}
	name, rest := "", args[1:]
	switch {
	case args[0].val == "-v":
		name, rest = args[1].val, args[2:]
	case strings.HasPrefix(args[0].val, "-v"):
		name = args[0].val[2:]
	default:
		return
	}
	if len(rest) > 0 && rest[0].known && rest[0].val == "--" {
		rest = rest[1:]
	}
	v := arg{}
	if len(rest) == 1 && rest[0].known && !strings.ContainsAny(rest[0].val, `%\`) {
		v = rest[0]
	}
	a.sc.setVar(name, v)
}

// readModel: read NAME… (and mapfile) sets variables to what it reads,
// which only the running shell knows.
func (a *analyzer) readModel(c *cmdCall) bool {
	// The options that take a value: read's, or mapfile's.
	valued := "adinNptu"
	if c.name == "mapfile" || c.name == "readarray" {
		valued = "dnOsuCc"
	}
	for i := 0; i < len(c.args); i++ {
		w := c.args[i]
		switch {
		case !w.known:
		case strings.HasPrefix(w.val, "-"):
			if len(w.val) == 2 && strings.ContainsAny(w.val[1:], valued) {
				i++
			}
		default:
			a.sc.setVar(w.val, arg{})
		}
	}
	if c.name == "mapfile" || c.name == "readarray" {
		a.sc.setVar("MAPFILE", arg{})
	} else {
		a.sc.setVar("REPLY", arg{})
	}
	return true
}

// commandModel: command [-p] CMD runs CMD (skipping functions and
// aliases); command -v and -V only look it up.
func (a *analyzer) commandModel(c *cmdCall) bool {
	rest := c.args
	if len(rest) > 0 && rest[0].known && (hasShortFlag(rest[0].val, 'v') || hasShortFlag(rest[0].val, 'V')) {
		return true
	}
	sub := skipOptions(rest, optSpec{})
	if len(sub) > 0 {
		a.walk.command(sub, c.d, c.io, c.env)
	}
	return true
}

// goModel: go run of a laserbrain command is laserbrain.
func (a *analyzer) goModel(c *cmdCall) bool {
	if lb := goRunLaserbrain(c.args); lb != nil {
		a.walk.command(lb, c.d, c.io, c.env)
		return true
	}
	if len(c.args) > 0 && c.args[0].known && c.args[0].val == "test" {
		a.goTest(c.args[1:], c)
	}
	a.mayWrite("go")
	return true
}

// sedModel reads sed's options and script: -i edits its files in place,
// w/W write files, and the e command (or s///e) runs the pattern space as
// a shell command, which only the running sed knows.
func (a *analyzer) sedModel(c *cmdCall) bool {
	rest := c.args
	inPlace := false
	var scripts []string
	scriptGiven := false
	var files []arg
	for i := 0; i < len(rest); i++ {
		w := rest[i].val
		switch {
		case !rest[i].known:
			if !scriptGiven {
				a.unknown("sed with a script known only at run time", "")
				return true
			}
			files = append(files, rest[i])
		case w == "--in-place" || strings.HasPrefix(w, "--in-place="):
			inPlace = true
		case w == "-e" || w == "--expression":
			scriptGiven = true
			if i+1 < len(rest) {
				i++
				scripts = append(scripts, rest[i].val)
			}
		case w == "-f" || w == "--file":
			scriptGiven = true
			if i+1 < len(rest) {
				i++
				scripts = append(scripts, a.readText(rest[i]))
			}
		case strings.HasPrefix(w, "--expression="):
			scriptGiven = true
			scripts = append(scripts, strings.TrimPrefix(w, "--expression="))
		case strings.HasPrefix(w, "--file="):
			scriptGiven = true
			scripts = append(scripts, a.readText(arg{val: strings.TrimPrefix(w, "--file="), known: true}))
		case w == "-l" || w == "--line-length":
			i++
		case strings.HasPrefix(w, "--"):
		case strings.HasPrefix(w, "-") && w != "-":
			// Clustered short options: -i, -Ei, -ni.bak; -e/-f inside a
			// cluster take the rest (or the next argument) as the script.
			for j := 1; j < len(w); j++ {
				switch w[j] {
				case 'i':
					inPlace = true
					j = len(w) // -i.bak: the rest is a suffix
				case 'e', 'f':
					scriptGiven = true
					v := w[j+1:]
					if v == "" && i+1 < len(rest) {
						i++
						v = rest[i].val
					}
					if w[j] == 'f' {
						v = a.readText(arg{val: v, known: true})
					}
					scripts = append(scripts, v)
					j = len(w)
				}
			}
		default:
			if !scriptGiven {
				scriptGiven = true
				scripts = append(scripts, w)
				continue
			}
			files = append(files, rest[i])
		}
	}
	if inPlace {
		for _, f := range files {
			a.addWrite(f, "sed", false)
		}
	}
	for _, s := range scripts {
		runs, writes := sedScript(s)
		for _, w := range writes {
			a.addWrite(arg{val: w, known: true}, "sed", false)
		}
		for _, r := range runs {
			if r == "" {
				a.unknown("sed runs its pattern space as a command (e)", "what it runs is only known as sed reads its input")
				continue
			}
			a.subshell(func() { a.walk.script(r, c.d+1) })
		}
	}
	return true
}

// sedScript finds what a sed script runs and writes: the e command's
// argument ("" for a bare e or an s///e, which run the pattern space) and
// the files of w, W and s///w.
func sedScript(s string) (runs, writes []string) {
	for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ';' }) {
		cmd := strings.TrimLeft(line, " \t0123456789,$/!~+")
		cmd = strings.TrimLeft(cmd, " \t")
		if cmd == "" {
			continue
		}
		switch cmd[0] {
		case 'e':
			runs = append(runs, strings.TrimSpace(cmd[1:]))
		case 'w', 'W':
			if f := strings.TrimSpace(cmd[1:]); f != "" && f != "/dev/stdout" && f != "/dev/stderr" {
				writes = append(writes, f)
			}
		case 's':
			if len(cmd) < 2 {
				continue
			}
			delim := cmd[1]
			parts, n := 0, 2
			for ; n < len(cmd) && parts < 2; n++ {
				if cmd[n] == '\\' {
					n++
					continue
				}
				if cmd[n] == delim {
					parts++
				}
			}
			flags := cmd[min(n, len(cmd)):]
			if i := strings.IndexByte(flags, 'w'); i >= 0 {
				if f := strings.TrimSpace(flags[i+1:]); f != "" {
					writes = append(writes, f)
				}
				flags = flags[:i]
			}
			if strings.ContainsRune(flags, 'e') {
				runs = append(runs, "")
			}
		}
	}
	return runs, writes
}
