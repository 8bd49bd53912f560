package shell

import (
	"path/filepath"
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

// programOf is the table: how the analysis reads a command of this name
// (false: a program it does not know). Switches, not a map, so a hook
// process builds nothing to look one up.
func programOf(name string) (program, bool) {
	for _, of := range [...]func(string) (program, bool){wrapperOf, shellOf, builtinOf, modelOf} {
		if p, ok := of(name); ok {
			return p, true
		}
	}
	if dataProgram(name) {
		return program{kind: progData}, true
	}
	return program{}, false
}

// wrapperOf: the wrappers, with the options that take a value and the
// operands before the command they run.
func wrapperOf(name string) (program, bool) {
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
	}
	return program{}, false
}

// shellOf: the shells and the interpreters.
func shellOf(name string) (program, bool) {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish":
		return program{kind: progShell, model: (*analyzer).shellModel}, true
	case "python", "pypy", "node", "nodejs", "deno", "ruby", "perl", "php", "lua", "rscript", "osascript", "pwsh", "powershell", "awk", "gawk", "mawk", "nawk", "tclsh", "julia":
		return program{kind: progInterpreter, model: (*analyzer).interpreterModel}, true
	}
	return program{}, false
}

// builtinOf: the shell's own commands that run, define or change what
// later commands run (eval, source, trap, alias, cd, …).
func builtinOf(name string) (program, bool) {
	switch name {
	case "cd", "pushd":
		return program{kind: progModel, model: (*analyzer).cdModel}, true
	case "eval":
		return program{kind: progModel, model: (*analyzer).evalModel}, true
	case "source", ".":
		return program{kind: progModel, model: (*analyzer).sourceModel}, true
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
	}
	return program{}, false
}

// modelOf: the programs read by a model of their own.
func modelOf(name string) (program, bool) {
	switch name {
	case "rm":
		return program{kind: progModel, model: (*analyzer).rmModel}, true
	case "git":
		return program{kind: progModel, model: (*analyzer).gitModel}, true
	case "find":
		return program{kind: progModel, model: (*analyzer).findModel}, true
	case "xargs":
		return program{kind: progModel, model: (*analyzer).xargsModel}, true
	case "parallel":
		return program{kind: progModel, model: (*analyzer).parallelModel}, true
	case "su", "runuser", "script", "sg":
		return program{kind: progModel, model: (*analyzer).dashCModel}, true
	case "flock":
		return program{kind: progModel, model: (*analyzer).flockModel}, true
	case "ssh":
		return program{kind: progModel, model: (*analyzer).sshModel}, true
	case "watch":
		return program{kind: progModel, model: (*analyzer).watchModel}, true
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
	case "make", "gmake":
		return program{kind: progModel, model: (*analyzer).makeModel}, true
	case "pytest", "py.test":
		return program{kind: progModel, model: (*analyzer).pytestModel}, true
	case "nc", "ncat", "netcat", "socat", "telnet", "sftp":
		return program{kind: progModel, model: (*analyzer).netcatModel}, true
	case "dig", "nslookup", "host", "drill", "ping", "ping6":
		return program{kind: progModel, model: (*analyzer).lookupModel}, true
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
	case "npm", "pnpm", "yarn", "bun", "cargo", "docker", "kubectl", "helm", "terraform", "terragrunt", "gh", "vercel", "netlify", "wrangler", "fly", "twine", "uv", "poetry", "flit", "hatch", "gem", "firebase", "gcloud", "podman", "oc", "tofu", "flyctl", "aws", "az", "heroku", "supabase", "doctl", "pulumi", "mysqladmin":
		return program{kind: progModel, model: (*analyzer).cliModel}, true
	}
	return program{}, false
}

// dataProgram: a program whose arguments are data (echo, grep, ls, …).
func dataProgram(name string) bool {
	switch name {
	case "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "tac", "less", "more", "most", "head",
		"tail", "wc", "sort", "uniq", "cut", "paste", "column", "tr", "jq", "yq", "diff", "cmp", "comm", "ls", "dir", "stat",
		"file", "basename", "dirname", "realpath", "readlink", "test", "[", "[[", "true", "false", ":", "type", "which",
		"whereis", "help", "man", "info", "whatis", "apropos", "tldr", "date", "cal", "sleep", "printenv", "id",
		"whoami", "groups", "hostname", "uname", "pwd", "mkdir", "base64", "base32", "xxd", "od", "hexdump", "strings",
		"md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "b2sum", "nl", "fold", "fmt", "expand", "unexpand", "numfmt",
		"seq", "yes", "tput", "clear", "notify-send", "logger", "wall", "say", "espeak", "fc", "history", "jobs", "disown",
		"wait", "kill", "shift", "exit", "return", "break", "continue", "local", "getopts", "ulimit", "umask", "let", "du",
		"df", "free", "uptime", "ps", "top", "htop", "lsof", "pgrep", "tree", "fd", "locate", "shopt", "popd", "dirs", "tsort",
		"join", "split", "csplit", "iconv", "look", "rev", "shuf", "factor", "expr", "bc", "dc", "sum",
		"whois", "nproc", "lscpu", "env-test":
		return true
	}
	return false
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
		a.walk.script(script, d+1)
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

// modelDecides: programs whose model decides everything about them (the
// text patterns would re-read what it understood).
func modelDecides(name string) bool {
	switch name {
	case "rm", "git":
		return true
	}
	return isCLIModelled(name)
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
		a.withRole(Unknown, in, func() { a.walk.script(c.io.in.text, c.d+1) })
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

// scriptFile runs a program named by its path (./deploy.sh, bin/tool): a
// script is read and analysed with the interpreter its #! line names (sh
// without one); a compiled program, or one installed under node_modules,
// is a program the gate does not know.
func (a *analyzer) scriptFile(file arg, args []arg, d int, io stdio) {
	name := commandName(file.val)
	path, known := a.resolve(file)
	if known && strings.Contains("/"+filepath.ToSlash(path)+"/", "/node_modules/") {
		a.simple(&cmdCall{name: name, args: args, d: d, io: io})
		return
	}
	text, ok, why := a.scriptText(file, io)
	if !ok {
		if why == whyMissing && !a.mayHaveWritten() {
			return // no such file: the shell says so, nothing runs
		}
		a.unknown("runs "+file.val, why)
		return
	}
	if strings.HasPrefix(text, "\x7fELF") || strings.ContainsRune(text[:min(len(text), 512)], 0) {
		a.simple(&cmdCall{name: name, args: args, d: d, io: io})
		return
	}
	interp := []string{"sh"}
	if first, _, _ := strings.Cut(text, "\n"); strings.HasPrefix(first, "#!") {
		interp = strings.Fields(strings.TrimPrefix(first, "#!"))
		if len(interp) > 0 && commandName(interp[0]) == "env" {
			interp = interp[1:]
			for len(interp) > 0 && strings.HasPrefix(interp[0], "-") {
				interp = interp[1:]
			}
		}
		if len(interp) == 0 {
			interp = []string{"sh"}
		}
	}
	in := commandName(interp[0])
	switch p := lookupProgram(in); {
	case isShell(in):
		a.subshell(func() {
			a.sc.positional, a.sc.hasPositional = args, true
			a.walk.script(text, d+1)
		})
	case p != nil && p.kind == progInterpreter:
		a.code(in, text, d)
	default:
		// Another program reads the file (make -f, a custom tool): we
		// do not know what it runs.
		a.unknown("runs "+file.val+" with "+interp[0], "the gate does not know that interpreter")
	}
}
