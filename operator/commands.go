package operator

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

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

var wrappers = map[string]optSpec{
	"sudo":        {short: "CDghpRrTtUu", long: []string{"user", "group", "host", "prompt", "role", "type", "close-from", "chdir", "chroot", "command-timeout", "other-user"}, assigns: true},
	"doas":        {short: "uC"},
	"env":         {short: "uCP", long: []string{"unset", "chdir"}, assigns: true},
	"builtin":     {},
	"exec":        {short: "a"},
	"nohup":       {},
	"setsid":      {},
	"time":        {short: "fo", long: []string{"format", "output"}},
	"nice":        {short: "n", long: []string{"adjustment"}},
	"ionice":      {short: "cnpPtu", long: []string{"class", "classdata"}},
	"stdbuf":      {short: "ioe", long: []string{"input", "output", "error"}},
	"caffeinate":  {short: "tw"},
	"npx":         {short: "p", long: []string{"package"}},
	"bunx":        {short: "p", long: []string{"package"}},
	"pnpx":        {},
	"uvx":         {long: []string{"from", "with", "python"}},
	"dotenv":      {short: "ecv"},
	"proxychains": {short: "f"},
	"unbuffer":    {},
	"xvfb-run":    {short: "nsfe", long: []string{"server-num", "server-args", "auth-file", "error-file"}},
	// Multi-call binaries: the first word is the applet.
	"busybox": {},
	"toybox":  {},
}

// lazyRegexp compiles a pattern on first use, so a hook process pays only
// for the patterns its command needs.
func lazyRegexp(src string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
}

// readsCode are database clients whose standard input is a program (SQL).
var readsCode = map[string]bool{"psql": true, "mysql": true, "mariadb": true, "sqlite": true, "sqlcmd": true, "cockroach": true, "clickhouse-client": true, "clickhouse": true, "duckdb": true, "pgcli": true, "mycli": true, "mongosh": true, "mongo": true}

var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true, "mksh": true, "yash": true, "fish": true}

// isInterpreter: python[N.N], pypy[N], node, ruby, perl, … — programs that
// take code as an argument. (A hand matcher: a regexp here would be
// compiled by every hook process.)
func isInterpreter(name string) bool {
	switch base := strings.TrimRight(name, "0123456789."); base {
	case "python", "pypy":
		return true
	case "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua", "rscript", "osascript", "tclsh", "awk", "gawk", "pwsh", "powershell":
		return base == name
	}
	return false
}

// codeFlags are the options with which an interpreter takes its program as
// an argument.
var codeFlags = map[string][]string{
	"python": {"-c"}, "pypy": {"-c"}, "node": {"-e", "--eval", "-p", "--print"}, "nodejs": {"-e", "--eval", "-p", "--print"},
	"deno": {"eval"}, "bun": {"-e", "--eval", "-p", "--print"}, "ruby": {"-e"}, "perl": {"-e", "-E"}, "php": {"-r"},
	"lua": {"-e"}, "rscript": {"-e"}, "osascript": {"-e"}, "pwsh": {"-c", "-command"}, "powershell": {"-c", "-command"},
}

// command analyses one simple command: its words after expansion.
func (a *analyzer) command(argv []arg, d int, in input) {
	for hop := 0; len(argv) > 0; hop++ {
		if hop > 32 {
			a.unknown("too many wrappers", "")
			return
		}
		if !argv[0].known {
			a.unknown("command name known only at run time", "the shell decides what "+argv[0].val+" runs")
			return
		}
		name := commandName(argv[0].val)
		rest := argv[1:]
		if spec, ok := wrappers[name]; ok {
			if name == "env" {
				for len(rest) > 0 && rest[0].known && rest[0].val == "-" {
					rest = rest[1:] // "env -" is env -i
				}
				if next, handled := a.envSplit(rest, d); handled {
					argv = next
					if argv == nil {
						return
					}
					continue
				}
			}
			argv = skipOptions(rest, spec)
			continue
		}
		switch name {
		case "go":
			if lb := goRunLaserbrain(rest); lb != nil {
				argv = lb
				continue
			}
		case "command":
			if len(rest) > 0 && rest[0].known && (hasShortFlag(rest[0].val, 'v') || hasShortFlag(rest[0].val, 'V')) {
				return // only looks the name up
			}
			argv = skipOptions(rest, optSpec{})
			continue
		case "timeout":
			rest = skipOptions(rest, optSpec{short: "sk", long: []string{"signal", "kill-after"}})
			if len(rest) > 0 {
				rest = rest[1:] // the duration
			}
			argv = rest
			continue
		case "chroot":
			rest = skipOptions(rest, optSpec{long: []string{"userspec", "groups"}})
			if len(rest) > 0 {
				rest = rest[1:] // the new root
			}
			argv = rest
			continue
		case "pnpm", "yarn", "npm":
			if len(rest) > 0 && rest[0].known && (rest[0].val == "exec" || rest[0].val == "dlx" || rest[0].val == "x") {
				argv = skipOptions(rest[1:], optSpec{short: "p", long: []string{"package"}})
				continue
			}
		case "uv", "poetry", "pipx", "bundle", "pdm", "hatch", "rye":
			if len(rest) > 0 && rest[0].known && (rest[0].val == "run" || rest[0].val == "exec") {
				argv = skipOptions(rest[1:], optSpec{long: []string{"with", "from", "python", "env", "spec"}})
				continue
			}
		}
		a.simple(name, rest, d, in)
		return
	}
}

// envSplit handles env -S / --split-string, whose argument is itself a
// command line.
func (a *analyzer) envSplit(rest []arg, d int) ([]arg, bool) {
	for i, w := range rest {
		if !w.known || !strings.HasPrefix(w.val, "-") {
			return nil, false
		}
		var script string
		switch {
		case w.val == "-S" || w.val == "--split-string":
			if i+1 >= len(rest) {
				return nil, false
			}
			script, _ = joinArgs(rest[i+1:])
		case strings.HasPrefix(w.val, "-S"):
			script = w.val[2:] + " " + strings.Join(vals(rest[i+1:]), " ")
		case strings.HasPrefix(w.val, "--split-string="):
			script = strings.TrimPrefix(w.val, "--split-string=") + " " + strings.Join(vals(rest[i+1:]), " ")
		default:
			continue
		}
		a.script(script, d+1)
		return nil, true
	}
	return nil, false
}

// simple analyses a command whose name is known and whose wrappers are gone.
func (a *analyzer) simple(name string, rest []arg, d int, in input) {
	norm := append([]string{name}, vals(rest)...)
	switch {
	case name == "rm":
		// The option model decides; the text pattern would re-read a
		// spelling it has understood (rm --help -rf x deletes nothing).
		a.rm(rest)
		a.packOn(name, strings.Join(norm, " "), Executed)
		return
	case isLaserbrain(name):
		a.laserbrain(rest)
	case name == "git" || strings.HasPrefix(name, "git-") && len(name) > 4:
		if name != "git" {
			// The dashed form (git-push in git's exec path) is the subcommand.
			rest = append([]arg{{val: name[4:], known: true}}, rest...)
		}
		words, gv := a.git(rest, d, in, 0)
		if words == nil {
			return
		}
		if gv.modelled || gv.unknown != "" {
			// The option model decided; the text patterns would only
			// re-read the spelling it has already understood.
			a.gitFindings(gv)
			return
		}
		norm = words
	case name == "cd":
		a.cd(rest)
	case name == "npm" && npmDryRun(rest):
		a.grammarAs(strings.Join(norm, " "), DryRun, "a dry run: changes nothing")
		return
	case name == "find":
		a.find(rest, d)
	case name == "xargs":
		a.xargs(rest, d, in)
	case name == "parallel":
		a.parallel(rest, d, in)
	case shells[name]:
		a.shell(name, rest, d, in)
	case name == "eval":
		text, _ := joinArgs(rest)
		a.script(text, d+1)
	case name == "su" || name == "runuser" || name == "script" || name == "flock":
		a.dashC(rest, d)
	case name == "ssh":
		a.ssh(rest, d)
	case name == "watch":
		a.watch(rest, d)
	case name == "docker" || name == "podman" || name == "kubectl" || name == "oc":
		a.container(name, rest, d, in)
	case isInterpreter(name):
		a.interpreter(name, rest, in)
	}
	// Standard input is a program for a database client, and for an
	// interpreter given no program of its own (awk's input is always data).
	if in.kind == literalInput && (readsCode[strings.TrimRight(name, "0123456789.")] ||
		isInterpreter(name) && name != "awk" && name != "gawk" && readsProgramFromInput(rest)) {
		a.code(name, in.text)
	}
	if a.overTime() {
		return
	}
	text := strings.Join(norm, " ")
	if len(text) > maxCommandText {
		text = text[:maxCommandText]
	}
	a.grammarOn(text)
	a.packOn(name, text, Executed)
}

// grammarOn runs the grammar patterns on one command's normalised text. A
// pattern counts only if it matches at the start, i.e. names this command
// rather than appearing in its arguments.
func (a *analyzer) grammarOn(text string) { a.grammarAs(text, Executed, "") }

// grammarAs is grammarOn for a command that runs in a given role (a dry
// run, for one).
func (a *analyzer) grammarAs(text string, where Where, note string) {
	lower := lowerForPrefilter(text)
	var allow []span
	for _, p := range grammarAllow {
		if p.mayMatch(lower) {
			allow = append(allow, find(p.regexp(), text).spans...)
		}
	}
	for i, p := range grammarIrreversible {
		if !p.mayMatch(lower) {
			continue
		}
		m, err := grammarAtStart[i].regexp().FindStringMatch(text)
		if err != nil {
			a.add(Finding{Label: "parsed: " + p.label, Outward: p.outward, Where: Unknown, Note: errTimeout.Error(), grammar: i})
			continue
		}
		if m == nil {
			continue
		}
		carved := within([]span{{m.Index, m.Index + m.Length}}, allow)
		a.add(Finding{Label: "parsed: " + p.label, Outward: p.outward, Where: where, Note: note, CarvedOut: carved, grammar: i})
	}
}

// code scans program text handed to an interpreter (or SQL to a database
// client): the grammar patterns anywhere in it, and the pack's code rules.
func (a *analyzer) code(name, text string) {
	lower := lowerForPrefilter(text)
	for i, p := range grammarIrreversible {
		if !p.mayMatch(lower) {
			continue
		}
		m := find(p.regexp(), text)
		if !m.found {
			continue
		}
		f := Finding{Label: "parsed: " + p.label, Outward: p.outward, Where: InlineCode, Note: "in code run by " + name, grammar: i}
		if m.timedOut {
			f.Where, f.Note = Unknown, errTimeout.Error()
		}
		a.add(f)
	}
	a.packOn(name, text, InlineCode)
}

// rmRecursiveLabel is a recursive rm without force: an agent's rm has no
// terminal on its standard input, so GNU rm asks nothing (write-protected
// files included) and deletes as much as rm -rf.
const rmRecursiveLabel = "rm -r (recursive delete: with no terminal, rm asks nothing)"

// rm reads rm's options as GNU rm does (abbreviated long options, options
// after operands): recursive and forced is the grammar's rm -rf; recursive
// alone deletes as much when nobody is at a terminal, which an agent never
// is, so it is irreversible too.
func (a *analyzer) rm(rest []arg) {
	r := rmOptions.parse(rest)
	if r.bad || r.set["help"] > 0 || r.set["version"] > 0 || len(r.operands) == 0 {
		return
	}
	recursive, force := r.set["r"]+r.set["R"] > 0, r.set["f"] > 0
	if recursive && force {
		a.add(Finding{Label: "parsed: " + grammarIrreversible[grammarRmRf].label, Where: Executed, grammar: grammarRmRf})
		return
	}
	if recursive {
		a.add(Finding{Label: "parsed: " + rmRecursiveLabel, Where: Executed, grammar: -1})
		return
	}
	if force {
		for _, w := range r.operands {
			if !w.known {
				a.unknown("rm with an argument known only at run time", "it may be the missing -r")
				return
			}
		}
	}
}

// npmDryRun: npm publish (or unpublish) with --dry-run in effect, spelled
// the one way npm documents; anything else is not proof of a dry run.
func npmDryRun(rest []arg) bool {
	sub, dry := "", false
	for _, w := range rest {
		if !w.known {
			return false
		}
		switch w.val {
		case "--dry-run", "--dry-run=true":
			dry = true
		case "--no-dry-run", "--dry-run=false":
			dry = false
		default:
			if sub == "" && !strings.HasPrefix(w.val, "-") {
				sub = w.val
			}
		}
	}
	return dry && sub == "publish"
}

// grammarIndex finds a grammar pattern by the start of its label; the
// structural rules use it to report a parsed form of a grammar class.
func grammarIndex(prefix string) int {
	for i, p := range irreversiblePatterns {
		if strings.HasPrefix(p.Label, prefix) {
			return i
		}
	}
	panic("operator: no grammar pattern labelled " + prefix)
}

var (
	grammarRmRf      = grammarIndex("rm -rf")
	grammarPushForce = grammarIndex("git push --force ")
	grammarPushF     = grammarIndex("git push -f")
	grammarPushLease = grammarIndex("git push --force-with-lease")
	grammarResetHard = grammarIndex("git reset --hard")
)

// findArgs are find's primaries that take one argument (two for -fprintf);
// that argument is never itself a primary (find . -name -delete deletes
// nothing).
var findArgs = map[string]int{
	"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1, "-iregex": 1,
	"-lname": 1, "-ilname": 1, "-type": 1, "-xtype": 1, "-user": 1, "-group": 1, "-uid": 1, "-gid": 1, "-perm": 1,
	"-size": 1, "-mtime": 1, "-atime": 1, "-ctime": 1, "-mmin": 1, "-amin": 1, "-cmin": 1, "-newer": 1, "-anewer": 1,
	"-cnewer": 1, "-samefile": 1, "-inum": 1, "-links": 1, "-maxdepth": 1, "-mindepth": 1, "-fstype": 1, "-used": 1,
	"-printf": 1, "-fprint": 1, "-fprint0": 1, "-fls": 1, "-context": 1, "-regextype": 1, "-files0-from": 1, "-fprintf": 2,
	"-D": 1,
}

// find reads find's expression: -delete and -exec/-ok of a deleter delete
// every match; the command -exec runs is analysed like any other.
func (a *analyzer) find(rest []arg, d int) {
	for i := 0; i < len(rest); i++ {
		s := rest[i].val
		if !rest[i].known {
			continue
		}
		if n, ok := findArgs[s]; ok || len(s) == 10 && strings.HasPrefix(s, "-newer") {
			if !ok {
				n = 1 // -newerXY
			}
			i += n
			continue
		}
		switch s {
		case "-delete":
			a.add(Finding{Label: "parsed: find -delete (deletes every file it matches)", Where: Executed, grammar: -1})
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
				a.add(Finding{Label: "parsed: find " + s + " " + commandName(sub[0].val) + " (deletes every file it matches)", Where: Executed, grammar: -1})
			}
			a.command(sub, d, input{})
		}
	}
}

func isDeleter(name string) bool {
	return name == "rm" || name == "unlink" || name == "shred" || name == "rmdir"
}

// xargs reads xargs's options as GNU xargs does and analyses the command it
// runs with the arguments it will get: when its input is a literal we can
// read (echo …, a heredoc), the items are split the way xargs splits them
// and put into the command line (appended, or in place of the -I string).
func (a *analyzer) xargs(rest []arg, d int, in input) {
	r := xargsOptions.parse(rest)
	if r.bad || r.set["help"] > 0 || r.set["version"] > 0 {
		return
	}
	sub := r.operands
	if len(sub) == 0 {
		return // echo
	}
	replace, hasReplace := r.values["I"], r.set["I"] > 0
	if r.set["i"] > 0 {
		replace, hasReplace = r.values["i"], true
		if replace == "" {
			replace = "{}"
		}
	}
	if r.set["a"] > 0 {
		in = input{kind: fileInput}
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
	a.fedCommand("xargs", sub, replace, hasReplace, items, known, d)
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
			a.add(Finding{Label: "parsed: " + via + " " + name + " (deletes every path it reads)", Where: Executed, grammar: -1})
		}
		if shells[name] || name == "eval" {
			script, hasScript := shellScript(sub[1:])
			fromInput := !hasScript || hasReplace && strings.Contains(script, replace)
			if name == "eval" {
				fromInput = true
			}
			if fromInput {
				if !known {
					a.add(Finding{Label: "parsed: " + via + " runs a shell on its input (runs whatever arrives)", Where: Executed, grammar: -1})
				}
				for _, it := range items {
					a.script(it, d+1)
				}
				if len(items) > 0 {
					a.script(strings.Join(items, " "), d+1)
				}
			}
		}
	}
	switch {
	case !known:
		a.command(sub, d, input{})
	case hasReplace:
		for n, it := range items {
			if n >= 64 || a.overTime() {
				break
			}
			argv := make([]arg, len(sub))
			for k, w := range sub {
				argv[k] = arg{val: strings.ReplaceAll(w.val, replace, it), known: w.known}
			}
			a.command(argv, d, input{})
		}
		if len(items) == 0 {
			a.command(sub, d, input{})
		}
	default:
		argv := append([]arg{}, sub...)
		for _, it := range items {
			argv = append(argv, arg{val: it, known: true})
		}
		a.command(argv, d, input{})
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

// parallel: GNU parallel joins its command words with spaces and runs the
// line through a shell, with each input (::: arguments, :::: files or its
// standard input) put in place of {} or appended. Its long options may be
// abbreviated (Perl's Getopt::Long), so a word after an option we cannot
// place is read both as that option's value and as the command.
func (a *analyzer) parallel(rest []arg, d int, in input) {
	for _, start := range parallelStarts(rest) {
		a.parallelFrom(rest[start:], d, in)
	}
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
	if len(cmd) == 0 {
		// The inputs themselves are the commands.
		for _, it := range items {
			a.script(it, d+1)
		}
		if !known && (in.kind != noInput || fromArgs) {
			a.add(Finding{Label: "parsed: parallel runs commands read from its input (runs whatever arrives)", Where: Executed, grammar: -1})
		}
		return
	}
	// parallel hands its command line to a shell: analyse the line as
	// written, and with each known input in place.
	text, _ := joinArgs(cmd)
	a.script(text, d+1)
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
		a.script(line, d+1)
	}
	replace := ""
	for _, r := range parallelReplace {
		if strings.Contains(text, r) {
			replace = r
		}
	}
	a.fedCommand("parallel", cmd, replace, replace != "", items, known, d)
}

// shell analyses sh/bash/zsh: the -c script, a script read from a heredoc or
// a literal pipe, or a warning when it reads a script nobody can see.
func (a *analyzer) shell(name string, rest []arg, d int, in input) {
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
			return
		}
		// A script with expansions only the running shell knows is parsed
		// with those expansions in place, as the inner shell would see it.
		a.script(operands[0].val, d+1)
	case len(operands) > 0 && !sflag:
		// A script file: its contents are not ours to read.
	default:
		switch in.kind {
		case literalInput:
			a.script(in.text, d+1)
		case unknownInput:
			a.unknown(name+" runs a script from its input", "piped in; the script cannot be read here")
		}
	}
}

// dashC handles commands that run their -c argument through a shell (su,
// runuser, script, flock).
func (a *analyzer) dashC(rest []arg, d int) {
	for i, w := range rest {
		if !w.known {
			continue
		}
		if (w.val == "-c" || w.val == "--command") && i+1 < len(rest) {
			if rest[i+1].known {
				a.script(rest[i+1].val, d+1)
			} else {
				a.unknown("-c with a script known only at run time", "")
			}
			return
		}
		if v, ok := strings.CutPrefix(w.val, "--command="); ok {
			a.script(v, d+1)
			return
		}
	}
}

// ssh runs its trailing words as a shell command on the remote host; what it
// does there is as irreversible as here.
func (a *analyzer) ssh(rest []arg, d int) {
	sub := skipOptions(rest, optSpec{short: "BbcDEeFIiJLlmOoPpQRSWw"})
	if len(sub) < 2 {
		return
	}
	text, _ := joinArgs(sub[1:])
	a.script(text, d+1)
}

func (a *analyzer) watch(rest []arg, d int) {
	exec := false
	for _, w := range rest {
		if w.known && (w.val == "-x" || w.val == "--exec") {
			exec = true
		}
	}
	sub := skipOptions(rest, optSpec{short: "nq", long: []string{"interval"}})
	if len(sub) == 0 {
		return
	}
	if exec {
		a.command(sub, d, input{})
		return
	}
	text, _ := joinArgs(sub)
	a.script(text, d+1)
}

// container follows docker/podman exec and kubectl exec into the command
// they run inside the container.
func (a *analyzer) container(name string, rest []arg, d int, in input) {
	if len(rest) == 0 || !rest[0].known || rest[0].val != "exec" {
		return
	}
	if name == "kubectl" || name == "oc" {
		for i, w := range rest {
			if w.known && w.val == "--" {
				a.command(rest[i+1:], d, in)
				return
			}
		}
		return
	}
	sub := skipOptions(rest[1:], optSpec{short: "euw", long: []string{"env", "env-file", "user", "workdir", "detach-keys"}})
	if len(sub) > 1 {
		a.command(sub[1:], d, in)
	}
}

func (a *analyzer) interpreter(name string, rest []arg, in input) {
	base := strings.TrimRight(name, "0123456789.")
	flags := codeFlags[base]
	if base == "awk" || base == "gawk" {
		// awk's program is its first operand; system() runs a shell.
		for _, w := range rest {
			if w.known && !strings.HasPrefix(w.val, "-") {
				a.code(name, w.val)
				return
			}
		}
		return
	}
	for i, w := range rest {
		if !w.known {
			continue
		}
		for _, f := range flags {
			switch {
			case w.val == f && i+1 < len(rest):
				code, _ := joinArgs(rest[i+1 : i+2])
				a.code(name, code)
				return
			case strings.HasPrefix(f, "-") && len(f) == 2 && strings.HasPrefix(w.val, f) && len(w.val) > 2 && !strings.HasPrefix(w.val, "--"):
				a.code(name, w.val[2:])
				return
			}
		}
		// Combined short flags ending in the code flag: perl -pie, python -Bc.
		if len(w.val) > 2 && w.val[0] == '-' && w.val[1] != '-' && i+1 < len(rest) {
			last := "-" + w.val[len(w.val)-1:]
			if slices.Contains(flags, last) {
				code, _ := joinArgs(rest[i+1 : i+2])
				a.code(name, code)
				return
			}
		}
	}
	if in.kind == unknownInput && readsProgramFromInput(rest) {
		a.unknown(name+" runs a program from its input", "piped in; the program cannot be read here")
	}
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
