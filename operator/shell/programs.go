package shell

import (
	"slices"
	"strings"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// The one table of programs: how the analysis reads each command it meets.
// A wrapper runs the rest of its words as a command after its own options;
// a shell runs a script (-c, a file, its input); an interpreter runs
// program code (-c/-e, a file, its input); a data program treats its
// arguments as data (echo, grep, a commit message); a modelled program is
// read by its own model (git, rm, find, xargs, the publishers). Every other
// program is one the gate does not know: a destructive command spelled in
// its arguments may be run by it, so such a finding is unknown (asked when
// a person is there, refused when nobody is), never data.

type progKind uint8

const (
	progUnknown progKind = iota
	progData
	progWrapper
	progShell
	progInterpreter
	progModel
)

// program is one entry of the table.
type program struct {
	kind progKind
	// opts are a wrapper's options (those taking a value), skip the
	// operands before its command (timeout's duration, chroot's root).
	opts optSpec
	skip int
	// model reads a modelled program; it returns false when what the
	// program runs is not explained (docker run's command): the
	// arguments are then read as an unknown program's.
	model func(a *analyzer, c *cmdCall) bool
}

// cmdCall is one simple command with its wrappers gone.
type cmdCall struct {
	name string
	args []arg
	d    int
	io   stdio
	env  env
}

// programOf is the table: how the analysis reads a command of this name
// (false: a program it does not know). A switch, not a map, so a hook
// process builds nothing to look one up.
func programOf(name string) (program, bool) {
	switch name {
	case "sudo":
		return program{kind: progWrapper, opts: optSpec{short: "CDghpRrTtUu", long: []string{"user", "group", "host", "prompt", "role", "type", "close-from", "chdir", "chroot", "command-timeout", "other-user"}, assigns: true}}, true
	case "doas":
		return program{kind: progWrapper, opts: optSpec{short: "uC"}}, true
	case "env":
		return program{kind: progWrapper, opts: optSpec{short: "uCP", long: []string{"unset", "chdir"}, assigns: true}}, true
	case "builtin":
		return program{kind: progWrapper, opts: optSpec{}}, true
	case "exec":
		return program{kind: progWrapper, opts: optSpec{short: "a"}}, true
	case "nohup":
		return program{kind: progWrapper, opts: optSpec{}}, true
	case "setsid":
		return program{kind: progWrapper, opts: optSpec{}}, true
	case "time":
		return program{kind: progWrapper, opts: optSpec{short: "fo", long: []string{"format", "output"}}}, true
	case "nice":
		return program{kind: progWrapper, opts: optSpec{short: "n", long: []string{"adjustment"}}}, true
	case "ionice":
		return program{kind: progWrapper, opts: optSpec{short: "cnpPtu", long: []string{"class", "classdata"}}}, true
	case "stdbuf":
		return program{kind: progWrapper, opts: optSpec{short: "ioe", long: []string{"input", "output", "error"}}}, true
	case "caffeinate":
		return program{kind: progWrapper, opts: optSpec{short: "tw"}}, true
	case "npx":
		return program{kind: progWrapper, opts: optSpec{short: "p", long: []string{"package"}}}, true
	case "bunx":
		return program{kind: progWrapper, opts: optSpec{short: "p", long: []string{"package"}}}, true
	case "pnpx":
		return program{kind: progWrapper, opts: optSpec{}}, true
	case "uvx":
		return program{kind: progWrapper, opts: optSpec{long: []string{"from", "with", "python", "index", "index-url"}}}, true
	case "dotenv":
		return program{kind: progWrapper, opts: optSpec{short: "ecv"}}, true
	case "proxychains":
		return program{kind: progWrapper, opts: optSpec{short: "f"}}, true
	case "proxychains4":
		return program{kind: progWrapper, opts: optSpec{short: "f"}}, true
	case "unbuffer":
		return program{kind: progWrapper, opts: optSpec{}}, true
	case "xvfb-run":
		return program{kind: progWrapper, opts: optSpec{short: "nsfe", long: []string{"server-num", "server-args", "auth-file", "error-file"}}}, true
	case "chronic":
		return program{kind: progWrapper, opts: optSpec{}}, true
	case "torsocks":
		return program{kind: progWrapper, opts: optSpec{}}, true
	case "busybox":
		return program{kind: progWrapper, opts: optSpec{}}, true
	case "toybox":
		return program{kind: progWrapper, opts: optSpec{}}, true
	case "timeout":
		return program{kind: progWrapper, opts: optSpec{short: "sk", long: []string{"signal", "kill-after"}}, skip: 1}, true
	case "chroot":
		return program{kind: progWrapper, opts: optSpec{long: []string{"userspec", "groups"}}, skip: 1}, true
	case "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish":
		return program{kind: progShell, model: (*analyzer).shellModel}, true
	case "python", "pypy", "node", "nodejs", "deno", "ruby", "perl", "php", "lua", "rscript", "osascript", "pwsh", "powershell", "awk", "gawk", "mawk", "nawk", "tclsh", "julia":
		return program{kind: progInterpreter, model: (*analyzer).interpreterModel}, true
	case "rm":
		return program{kind: progModel, model: (*analyzer).rmModel}, true
	case "git":
		return program{kind: progModel, model: (*analyzer).gitModel}, true
	case "cd", "pushd":
		return program{kind: progModel, model: (*analyzer).cdModel}, true
	case "find":
		return program{kind: progModel, model: (*analyzer).findModel}, true
	case "xargs":
		return program{kind: progModel, model: (*analyzer).xargsModel}, true
	case "parallel":
		return program{kind: progModel, model: (*analyzer).parallelModel}, true
	case "eval":
		return program{kind: progModel, model: (*analyzer).evalModel}, true
	case "source", ".":
		return program{kind: progModel, model: (*analyzer).sourceModel}, true
	case "su", "runuser", "script", "sg":
		return program{kind: progModel, model: (*analyzer).dashCModel}, true
	case "flock":
		return program{kind: progModel, model: (*analyzer).flockModel}, true
	case "ssh":
		return program{kind: progModel, model: (*analyzer).sshModel}, true
	case "watch":
		return program{kind: progModel, model: (*analyzer).watchModel}, true
	case "trap":
		return program{kind: progModel, model: (*analyzer).trapModel}, true
	case "alias":
		return program{kind: progModel, model: (*analyzer).aliasModel}, true
	case "hash":
		return program{kind: progModel, model: (*analyzer).hashModel}, true
	case "unalias":
		return program{kind: progModel, model: (*analyzer).unaliasModel}, true
	case "unset":
		return program{kind: progModel, model: (*analyzer).unsetModel}, true
	case "set":
		return program{kind: progModel, model: (*analyzer).setModel}, true
	case "read", "mapfile", "readarray":
		return program{kind: progModel, model: (*analyzer).readModel}, true
	case "command":
		return program{kind: progModel, model: (*analyzer).commandModel}, true
	case "sed", "gsed":
		return program{kind: progModel, model: (*analyzer).sedModel}, true
	case "laserbrain", "laserbrain-gate":
		return program{kind: progModel, model: (*analyzer).laserbrainModel}, true
	case "go":
		return program{kind: progModel, model: (*analyzer).goModel}, true
	case "tee":
		return program{kind: progModel, model: (*analyzer).teeModel}, true
	case "cp", "mv", "install", "ln", "scp":
		return program{kind: progModel, model: (*analyzer).copyModel}, true
	case "dd":
		return program{kind: progModel, model: (*analyzer).ddModel}, true
	case "truncate":
		return program{kind: progModel, model: (*analyzer).truncateModel}, true
	case "touch", "unlink", "shred", "rmdir":
		return program{kind: progModel, model: (*analyzer).fileArgsModel}, true
	case "chmod", "chown", "chgrp":
		return program{kind: progModel, model: (*analyzer).modeModel}, true
	case "curl":
		return program{kind: progModel, model: (*analyzer).curlModel}, true
	case "wget":
		return program{kind: progModel, model: (*analyzer).wgetModel}, true
	case "tar":
		return program{kind: progModel, model: (*analyzer).tarModel}, true
	case "unzip":
		return program{kind: progModel, model: (*analyzer).unzipModel}, true
	case "zip":
		return program{kind: progModel, model: (*analyzer).zipModel}, true
	case "patch":
		return program{kind: progModel, model: (*analyzer).patchModel}, true
	case "redis-cli":
		return program{kind: progModel, model: (*analyzer).redisModel}, true
	case "rsync":
		return program{kind: progModel, model: (*analyzer).rsyncModel}, true
	case "psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "sqlcmd", "cockroach", "clickhouse-client", "pgcli", "mycli", "mongosh", "mongo":
		return program{kind: progModel, model: (*analyzer).sqlModel}, true
	case "npm", "pnpm", "yarn", "bun", "cargo", "docker", "kubectl", "helm", "terraform", "terragrunt", "gh", "vercel", "netlify", "wrangler", "fly", "twine", "uv", "poetry", "flit", "hatch", "gem", "firebase", "gcloud", "podman", "oc", "tofu", "flyctl":
		return program{kind: progModel, model: (*analyzer).cliModel}, true
	case "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "tac", "less", "more", "most", "head",
		"tail", "wc", "sort", "uniq", "cut", "paste", "column", "tr", "jq", "yq", "diff", "cmp", "comm", "ls", "dir", "stat",
		"file", "basename", "dirname", "realpath", "readlink", "test", "[", "[[", "true", "false", ":", "type", "which",
		"whereis", "help", "man", "info", "whatis", "apropos", "tldr", "date", "cal", "sleep", "printenv", "id",
		"whoami", "groups", "hostname", "uname", "pwd", "mkdir", "base64", "base32", "xxd", "od", "hexdump", "strings",
		"md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "b2sum", "nl", "fold", "fmt", "expand", "unexpand", "numfmt",
		"seq", "yes", "tput", "clear", "notify-send", "logger", "wall", "say", "espeak", "fc", "history", "jobs", "disown",
		"wait", "kill", "shift", "exit", "return", "break", "continue", "local", "getopts", "ulimit", "umask", "let", "du",
		"df", "free", "uptime", "ps", "top", "htop", "lsof", "pgrep", "tree", "fd", "locate", "shopt", "popd", "dirs", "tsort",
		"join", "split", "csplit", "iconv", "look", "rev", "shuf", "factor", "expr", "bc", "dc", "sum", "ping", "dig",
		"nslookup", "host", "whois", "nproc", "lscpu", "env-test":
		return program{kind: progData}, true
	}
	return program{}, false
}

// lookupProgram finds a program by its command name; python3.11 is python.
func lookupProgram(name string) *program {
	if p, ok := programOf(name); ok {
		return &p
	}
	if base := strings.TrimRight(name, "0123456789."); base != name {
		if p, ok := programOf(base); ok && p.kind == progInterpreter {
			return &p
		}
	}
	return nil
}

// interesting: the analysis has something to say about a command of this
// name (anything but a data program or one it does not know), so a word
// naming it in an unknown program's arguments is followed.
func interesting(name string) bool {
	if p := lookupProgram(name); p != nil {
		return p.kind != progData
	}
	commands := packCommands.Get()
	return commands[name] || commands[strings.TrimRight(name, "0123456789.")] || commands[strings.SplitN(name, ".", 2)[0]]
}

// packCommands are the commands the pack's command rules apply to, built
// when an unknown program's arguments are first looked at.
var packCommands = firstuse.Value[map[string]bool]{New: func() map[string]bool {
	m := map[string]bool{}
	for i := range packRules {
		if packRules[i].Scope == "command" {
			for _, c := range packRules[i].Commands {
				m[c] = true
			}
		}
	}
	return m
}}

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

// command analyses one simple command: its words after expansion.
func (a *analyzer) command(argv []arg, d int, io stdio, e env) {
	for hop := 0; len(argv) > 0; hop++ {
		if hop > 32 {
			a.unknown("too many wrappers", "")
			return
		}
		if !argv[0].known {
			a.unknown("command name known only at run time", "the shell decides what "+argv[0].val+" runs")
			return
		}
		if argv[0].glob {
			a.unknown("command name is a pattern", "the shell expands "+argv[0].val+" against file names")
			return
		}
		name := commandName(argv[0].val)
		rest := argv[1:]
		p := lookupProgram(name)
		if p != nil && p.kind == progWrapper {
			if name == "env" {
				for len(rest) > 0 && rest[0].known && rest[0].val == "-" {
					rest = rest[1:] // "env -" is env -i
				}
				if a.envSplit(rest, d) {
					return
				}
			}
			if p.opts.assigns {
				e = withAssignments(e, rest)
			}
			rest = skipOptions(rest, p.opts)
			if len(rest) >= p.skip {
				rest = rest[p.skip:]
			} else {
				rest = nil
			}
			argv = rest
			continue
		}
		// Runners that run a package's program: npm exec, uv run, ….
		if next, ok := runnerCommand(name, rest); ok {
			argv = next
			continue
		}
		// A file the command names by its path is a script we read,
		// unless it is a program we know by name.
		if p == nil && strings.Contains(argv[0].val, "/") {
			a.scriptFile(argv[0], rest, d, io)
			return
		}
		a.simple(&cmdCall{name: name, args: rest, d: d, io: io, env: e})
		return
	}
}

// withAssignments adds a wrapper's NAME=VALUE words (env, sudo) to the
// command's environment.
func withAssignments(e env, rest []arg) env {
	for _, w := range rest {
		if !w.known || !isAssignment(w.val) {
			if w.known && strings.HasPrefix(w.val, "-") {
				continue
			}
			break
		}
		if e == nil {
			e = env{}
		}
		name, val, _ := strings.Cut(w.val, "=")
		e[name] = arg{val: val, known: true}
	}
	return e
}

// runnerCommand: package runners that run a program of a package (npm
// exec, pnpm dlx, uv run, uv tool run, poetry run, …); the words they run.
func runnerCommand(name string, rest []arg) ([]arg, bool) {
	if len(rest) == 0 || !rest[0].known {
		return nil, false
	}
	switch name {
	case "pnpm", "yarn", "npm", "bun":
		if rest[0].val == "exec" || rest[0].val == "dlx" || rest[0].val == "x" {
			return skipOptions(rest[1:], optSpec{short: "p", long: []string{"package"}}), true
		}
	case "uv", "poetry", "pipx", "bundle", "pdm", "hatch", "rye":
		spec := optSpec{long: []string{"with", "from", "python", "env", "spec", "index", "index-url", "directory", "project", "package"}}
		if rest[0].val == "run" || rest[0].val == "exec" {
			return skipOptions(rest[1:], spec), true
		}
		if name == "uv" && rest[0].val == "tool" && len(rest) > 1 && rest[1].known && rest[1].val == "run" {
			return skipOptions(rest[2:], spec), true
		}
	}
	return nil, false
}

// envSplit handles env -S / --split-string, whose argument is itself a
// command line.
func (a *analyzer) envSplit(rest []arg, d int) bool {
	for i, w := range rest {
		if !w.known || !strings.HasPrefix(w.val, "-") {
			return false
		}
		var script string
		switch {
		case w.val == "-S" || w.val == "--split-string":
			if i+1 >= len(rest) {
				return false
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
		return true
	}
	return false
}

// simple analyses a command whose name is known and whose wrappers are
// gone: its model, then the grammar patterns and the pack on its words.
func (a *analyzer) simple(c *cmdCall) {
	name := c.name
	p := lookupProgram(name)
	text := commandText(name, c.args)
	if len(a.ran) < 256 {
		inert := slices.ContainsFunc(c.args, func(w arg) bool { return w.known && (w.val == "--help" || w.val == "-h") })
		a.ran = append(a.ran, Ran{Text: text, Where: a.role, Inert: inert})
	}
	if name == "printf" {
		a.printfVar(c.args)
	}
	explained := true
	switch {
	case p == nil:
		explained = false
	case p.model != nil:
		explained = p.model(a, c)
	}
	// Standard input is a program for a database client (its model reads
	// it) and for an interpreter given no program of its own (awk's input
	// is data).
	if c.io.in.kind == literalInput && p != nil && p.kind == progInterpreter && !isAwk(name) && readsProgramFromInput(c.args) {
		a.code(name, c.io.in.text, c.d)
	}
	if a.overTime() {
		return
	}
	if !explained {
		a.unknownProgram(c, text)
	}
	if p != nil && (p.kind == progData || p.kind == progModel && modelDecides(name)) {
		// A data program's words are data; a model that decides has read
		// the spelling itself (rm --help -rf x deletes nothing).
		return
	}
	if refusedLine(name, c.args) {
		note := name + " refuses this command line (an option it does not know, or help): nothing runs"
		a.grammarAs(text, DryRun, note, text)
		a.packAs(name, text, DryRun, note, text)
		return
	}
	if helpRequest(c.args) {
		// --help prints usage and exits, whatever else the line says.
		a.grammarAs(text, DryRun, "a help request: changes nothing", text)
		a.packAs(name, text, DryRun, "a help request: changes nothing", text)
		return
	}
	a.grammarOn(text, text)
	a.packOn(name, text, Executed, text)
}

// refusedLine: a tool whose options are modelled (getopt) rejects the
// command line, or is asked for help or its version: it exits having done
// nothing (shred -h is an invalid option, not help).
func refusedLine(name string, args []arg) bool {
	if name != "shred" {
		return false
	}
	for _, w := range args {
		if !w.known {
			return false
		}
	}
	r := shredOptions.parse(args)
	return r.bad || r.set["help"] > 0 || r.set["version"] > 0
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

// modelDecides: programs whose model decides everything about them (the
// text patterns would re-read what it understood).
func modelDecides(name string) bool {
	switch name {
	case "rm", "git":
		return true
	}
	return isCLIModelled(name)
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

// unknownProgram reads the arguments of a program the gate does not know
// (or a subcommand its model does not explain): a destructive command
// spelled in them may be what it runs (flock, strace, docker run, …), so
// each one found is unknown, never data; and it may write anywhere.
func (a *analyzer) unknownProgram(c *cmdCall, text string) {
	a.mayWrite(c.name)
	note := "in the arguments of " + c.name + ", which the gate does not know: it may run them"
	a.grammarAnywhere(text, Unknown, note, text)
	if a.role == Unknown || c.d >= MaxDepth {
		return
	}
	if c.io.in.kind == literalInput && c.io.in.text != "" {
		// What it reads on standard input is no more data than its
		// arguments: at, batch and make -f - run what they read.
		in := "on the standard input of " + c.name + ", which the gate does not know: it may run it"
		a.grammarAnywhere(c.io.in.text, Unknown, in, text)
		a.withRole(Unknown, in, func() { a.script(c.io.in.text, c.d+1) })
	}
	a.withRole(Unknown, note, func() {
		starts := 0
		for i, w := range c.args {
			if starts >= 8 || a.overTime() {
				break
			}
			if !w.known || w.glob || strings.HasPrefix(w.val, "-") || !interesting(commandName(w.val)) {
				continue
			}
			starts++
			a.command(c.args[i:], c.d+1, stdio{}, nil)
		}
	})
}

// grammarOn runs the grammar patterns on one command's normalised text. A
// pattern counts only if it matches at the start, i.e. names this command
// rather than appearing in its arguments.
func (a *analyzer) grammarOn(text, command string) { a.grammarAs(text, Executed, "", command) }

// grammarAs is grammarOn for a command that runs in a given role (a dry
// run, for one).
func (a *analyzer) grammarAs(text string, where Where, note, command string) {
	lower := lowerForPrefilter(text)
	var allow []span
	for i := range allowPatterns {
		if p := allowPattern(i); p.mayMatch(lower) {
			allow = append(allow, find(p.regexp(a.deadline.timeout()), text).spans...)
		}
	}
	for i := range irreversiblePatterns {
		p := atStartPattern(i)
		if !p.mayMatch(lower) || a.overTime() {
			continue
		}
		m, err := p.regexp(a.deadline.timeout()).FindStringMatch(text)
		if err != nil {
			a.add(Finding{Label: "parsed: " + p.Label, Outward: p.Outward, Where: Unknown, Note: errTimeout.Error(), grammarNo: i + 1, Command: command})
			continue
		}
		if m == nil {
			continue
		}
		carved := within([]span{{m.Index, m.Index + m.Length}}, allow)
		a.add(Finding{Label: "parsed: " + p.Label, Outward: p.Outward, Where: where, Note: note, CarvedOut: carved, grammarNo: i + 1, Command: command})
	}
}

// grammarAnywhere runs the grammar patterns anywhere in text, each match a
// finding in role w.
func (a *analyzer) grammarAnywhere(text string, w Where, note, command string) {
	lower := lowerForPrefilter(text)
	for i := range irreversiblePatterns {
		p := irreversiblePattern(i)
		if !p.mayMatch(lower) || a.overTime() {
			continue
		}
		m := find(p.regexp(a.deadline.timeout()), text)
		if !m.found {
			continue
		}
		f := Finding{Label: "parsed: " + p.Label, Outward: p.Outward, Where: w, Note: note, grammarNo: i + 1, Command: command}
		if m.timedOut {
			f.Where, f.Note = Unknown, errTimeout.Error()
		}
		a.add(f)
	}
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish":
		return true
	}
	return false
}

func isAwk(name string) bool {
	switch name {
	case "awk", "gawk", "mawk", "nawk":
		return true
	}
	return false
}

// codeFlags are the options with which an interpreter takes its program as
// an argument, by the interpreter's name without version digits. The
// lists are package-level slices of constants, which the compiler lays
// out statically (returned from a switch as literals they would be
// allocated on every call; as a map they were built at package init).
func codeFlags(base string) []string {
	switch base {
	case "python", "pypy":
		return flagsC
	case "node", "nodejs", "bun":
		return flagsNode
	case "deno":
		return flagsEval
	case "ruby", "lua", "rscript", "osascript":
		return flagsE
	case "perl":
		return flagsPerl
	case "php":
		return flagsR
	case "pwsh", "powershell":
		return flagsPowerShell
	}
	return nil
}

var (
	flagsC          = []string{"-c"}
	flagsNode       = []string{"-e", "--eval", "-p", "--print"}
	flagsEval       = []string{"eval"}
	flagsE          = []string{"-e"}
	flagsPerl       = []string{"-e", "-E"}
	flagsR          = []string{"-r"}
	flagsPowerShell = []string{"-c", "-command"}
)
