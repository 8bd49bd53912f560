package shell

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// gitGlobalWithValue are git's global options that take a separate value.
// git matches global options exactly (no abbreviation).
var gitGlobalWithValue = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path", "--attr-source", "--list-cmds"}

// gitShellKey reports whether git runs a configuration key's value as a
// command (through a shell, or as a program): the pager, the editor, ssh,
// the askpass helper, the external diff, textconv and filter drivers,
// credential helpers, merge drivers, difftool and mergetool commands.
func gitShellKey(k string) bool {
	switch k {
	case "core.pager", "core.editor", "core.sshcommand", "core.askpass", "core.fsmonitor", "core.gitproxy", "sequence.editor",
		"diff.external", "gpg.program", "credential.helper", "uploadpack.packobjectshook", "sendemail.tocmd", "sendemail.cccmd",
		"sendemail.smtpserver", "web.browser":
		return true
	}
	parts := strings.Split(k, ".")
	last := parts[len(parts)-1]
	switch parts[0] {
	case "pager":
		return true
	case "filter":
		return last == "clean" || last == "smudge" || last == "process"
	case "diff":
		return last == "command" || last == "textconv"
	case "difftool", "mergetool", "browser", "man":
		return last == "cmd" || last == "path"
	case "merge":
		return last == "driver"
	case "gpg", "credential":
		return last == "program" || last == "helper"
	}
	return last == "textconv"
}

// gitFileKey: configuration that makes git read another file, whose
// content the gate does not see (includes, a hooks directory, templates).
func gitFileKey(k string) bool {
	return k == "include.path" || strings.HasPrefix(k, "includeif.") && strings.HasSuffix(k, ".path") || k == "core.hookspath" || k == "init.templatedir"
}

// gitRunsVars are environment variables whose value git runs as a command.
var gitRunsVars = []string{"GIT_SSH_COMMAND", "GIT_SSH", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_EXTERNAL_DIFF",
	"GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "EDITOR", "VISUAL", "PAGER"}

// gitCall is one git invocation after its global options.
type gitCall struct {
	config map[string]configValue // every layer, keys lowercased
	dir    string                 // working directory ("" when unknown)
}

// envVar is a variable a command sees: set before it on its line (or by
// env/sudo), or assigned earlier in the script (read as exported: fail
// closed).
func (a *analyzer) envVar(e env, name string) (arg, bool) {
	if v, ok := e[name]; ok {
		return v, true
	}
	return a.sc.lookup(name)
}

// gitConfigFrom collects git's configuration for one invocation, lowest
// precedence first: what git config set earlier in the line, then the
// environment (GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n/VALUE_n, and
// GIT_CONFIG_PARAMETERS); -c and --config-env come after, in git().
func (a *analyzer) gitConfigFrom(e env) map[string]configValue {
	conf := map[string]configValue{}
	for k, v := range a.gitConf {
		conf[k] = v
	}
	if n, ok := a.envVar(e, "GIT_CONFIG_COUNT"); ok {
		count := 0
		if !n.known {
			a.unknown("git configuration from GIT_CONFIG_COUNT known only at run time", "")
		} else {
			count, _ = strconv.Atoi(strings.TrimSpace(n.val))
		}
		for i := 0; i < count && i < 64; i++ {
			k, okk := a.envVar(e, "GIT_CONFIG_KEY_"+strconv.Itoa(i))
			v, okv := a.envVar(e, "GIT_CONFIG_VALUE_"+strconv.Itoa(i))
			if !okk || !okv {
				continue
			}
			if !k.known {
				a.unknown("git configuration key GIT_CONFIG_KEY_"+strconv.Itoa(i)+" known only at run time", "")
				continue
			}
			conf[strings.ToLower(k.val)] = configValue{val: v.val, known: v.known}
		}
	}
	if p, ok := a.envVar(e, "GIT_CONFIG_PARAMETERS"); ok {
		if !p.known {
			a.unknown("git configuration from GIT_CONFIG_PARAMETERS known only at run time", "")
		}
		for k, v := range parseConfigParameters(p.val) {
			conf[k] = configValue{val: v, known: p.known}
		}
	}
	return conf
}

// parseConfigParameters reads GIT_CONFIG_PARAMETERS as git writes it:
// single-quoted 'key'='value' pairs (or older 'key=value') separated by
// blanks.
func parseConfigParameters(s string) map[string]string {
	out := map[string]string{}
	var words []string
	var cur strings.Builder
	inQuote, started := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' && !inQuote:
			inQuote, started = true, true
		case c == '\'' && inQuote:
			inQuote = false
		case c == '\\' && !inQuote && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case (c == ' ' || c == '\t' || c == '\n') && !inQuote:
			if started {
				words = append(words, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteByte(c)
			started = true
		}
	}
	if started {
		words = append(words, cur.String())
	}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			v = "true"
		}
		out[strings.ToLower(k)] = v
	}
	return out
}

// setGitConfig takes one configuration entry into account where git will
// act on it: a key git runs is read as a script, a file git reads is
// unknown, an alias is what the next invocation may call.
func (a *analyzer) configEffect(k string, v configValue, d int) {
	switch {
	case gitShellKey(k):
		if !v.known {
			a.unknown("git runs "+k+", set to something known only at run time", "")
			return
		}
		if k == "core.fsmonitor" && (isFalse(v.val) || strings.EqualFold(v.val, "true")) {
			return
		}
		script := strings.TrimPrefix(v.val, "!")
		a.subshell(func() { a.walk.script(script, d+1) })
	case gitFileKey(k):
		a.unknown("git reads "+k+" = "+v.val, "the gate does not read that file")
	case strings.HasPrefix(k, "alias.") && !v.known:
		a.unknown("git "+k+" set to something known only at run time", "")
	}
}

// gitModel: git, and its dashed commands (git-push).
func (a *analyzer) gitModel(c *cmdCall) bool {
	rest := c.args
	for _, w := range rest {
		if w.known && strings.HasPrefix(w.val, "ext::") {
			// git-remote-ext runs the command the address spells (when
			// protocol.ext.allow lets it, which the line may set):
			// followed whether or not it is allowed.
			a.walk.command(extArgv(strings.TrimPrefix(w.val, "ext::")), c.d+1, stdio{}, nil)
		}
	}
	words, gv, explained := a.git(rest, c.d, c.io.in, 0, c.env)
	if words == nil {
		return true
	}
	if !explained {
		a.walk.unknownProgram(&cmdCall{name: "git", args: rest, d: c.d, io: c.io, env: c.env}, commandText("git", rest))
		return true
	}
	a.gitFindings(gv, commandText("git", rest))
	a.gitOutput(rest)
	return true
}

// gitOutput: git's diff-family commands write their output over the file
// --output names (in the directory git runs in).
func (a *analyzer) gitOutput(rest []arg) {
	sub := ""
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		switch {
		case sub == "" && w.known && !strings.HasPrefix(w.val, "-"):
			sub = w.val
		case sub == "" && w.known && (w.val == "-C" || w.val == "-c") && i+1 < len(rest):
			return // a directory or configuration before the subcommand: not followed here
		case sub == "":
		case w.val == "--":
			return
		case strings.HasPrefix(w.val, "--output="):
			a.gitOutputFile(arg{val: strings.TrimPrefix(w.val, "--output="), known: w.known}, sub, rest)
		case w.val == "--output" && i+1 < len(rest):
			a.gitOutputFile(rest[i+1], sub, rest)
			i++
		}
	}
}

func (a *analyzer) gitOutputFile(f arg, sub string, rest []arg) {
	switch sub {
	case "diff", "log", "show", "whatchanged", "diff-files", "diff-index", "diff-tree", "range-diff":
		a.addWrite(f, "git "+sub+" --output", false)
		a.losesWork(f, "git "+sub+" --output", commandText("git", rest))
	}
}

// extArgv splits an ext:: address's command as git-remote-ext does:
// words at unescaped spaces, "% " a space inside a word, "%%" a percent
// sign (its %s, %S, %G and %V placeholders stay as written).
func extArgv(s string) []arg {
	var out []arg
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '%' && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '%'):
			b.WriteByte(s[i+1])
			i++
		case s[i] == ' ':
			if b.Len() > 0 {
				out = append(out, arg{val: b.String(), known: true})
				b.Reset()
			}
		default:
			b.WriteByte(s[i])
		}
	}
	if b.Len() > 0 {
		out = append(out, arg{val: b.String(), known: true})
	}
	return out
}

// git strips git's global options (-C dir, -c key=value, --config-env,
// --git-dir, …), gathers the configuration in force (git config earlier
// in the line, the environment, -c), follows the variables git runs,
// resolves aliases (inline, from the environment, set earlier, or in the
// repository's and the user's config files), and reads the subcommand
// with git's own option parser (gitopts.go), recording what the invocation
// would destroy. It returns the normalised words "git SUB ARGS…", what the
// model concluded, and whether the subcommand is one the model explains
// (a builtin it reads or knows to take data); nil words when an alias ran
// a shell command (already analysed).
func (a *analyzer) git(rest []arg, d int, in input, aliasDepth int, e env) ([]string, gitVerdict, bool) {
	call := gitCall{config: a.gitConfigFrom(e), dir: a.dirNow()}
	a.gitEnvironment(&call, e, d)
	rest = a.gitGlobals(rest, &call, e, d)
	if len(rest) == 0 {
		return []string{"git"}, gitVerdict{modelled: true}, true
	}
	words := append([]string{"git"}, vals(rest)...)
	if !rest[0].known {
		a.unknown("git subcommand known only at run time", "the shell decides what git "+rest[0].val+" does")
		return words, gitVerdict{}, true
	}
	sub := rest[0].val
	// An alias: git ignores one that shadows a builtin command.
	if !gitBuiltins(sub) {
		return a.gitAlias(words, rest, call, d, in, aliasDepth, e)
	}
	gv := a.gitSubcommand(sub, rest[1:], call, d, in)
	return words, gv, gv.modelled || gitDataCommands(sub)
}

// gitEnvironment follows what the environment makes git run or read: the
// commands in its variables (GIT_SSH_COMMAND, GIT_EDITOR, …), files named
// by GIT_CONFIG_GLOBAL and its kin, and the configuration gathered for
// this invocation that git config earlier in the line did not set. A
// GIT_DIR or GIT_WORK_TREE moves where paths resolve.
func (a *analyzer) gitEnvironment(call *gitCall, e env, d int) {
	for _, name := range gitRunsVars {
		if v, ok := a.envVar(e, name); ok {
			if !v.known {
				a.unknown("git runs $"+name+", known only at run time", "")
				continue
			}
			if v.val != "" {
				a.subshell(func() { a.walk.script(v.val, d+1) })
			}
		}
	}
	for _, name := range []string{"GIT_DIR", "GIT_WORK_TREE"} {
		if _, ok := a.envVar(e, name); ok {
			call.dir = ""
		}
	}
	for _, name := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR"} {
		if v, ok := a.envVar(e, name); ok && (!v.known || v.val != "/dev/null" && v.val != "") {
			a.unknown("git reads $"+name+"="+v.val, "the gate does not read what it names")
		}
	}
	for k, v := range call.config {
		if _, ok := a.gitConf[k]; !ok || a.gitConf[k] != v {
			a.configEffect(k, v, d)
		}
	}
}

// gitGlobals reads git's global options, as git does (exactly, no
// abbreviation): -C moves the directory, --git-dir and --work-tree lose
// it, -c and --config-env add configuration (followed at once), and
// --exec-path runs git's commands from a directory the gate does not
// read. It returns the words from the subcommand on.
func (a *analyzer) gitGlobals(rest []arg, call *gitCall, e env, d int) []arg {
	i := 0
	for ; i < len(rest); i++ {
		w := rest[i]
		if !w.known || !strings.HasPrefix(w.val, "-") {
			break
		}
		s := w.val
		name, value, hasValue := strings.Cut(s, "=")
		valueKnown := true
		if strings.HasPrefix(s, "-C") && len(s) > 2 && !strings.HasPrefix(s, "--") {
			call.dir = joinDir(call.dir, s[2:])
			continue
		}
		if slices.Contains(gitGlobalWithValue, name) && !hasValue {
			if i+1 < len(rest) {
				i++
				value, valueKnown = rest[i].val, rest[i].known
				if !valueKnown {
					call.dir = ""
				}
			}
		}
		switch name {
		case "-C":
			call.dir = joinDir(call.dir, value)
		case "--git-dir", "--work-tree":
			call.dir = "" // paths resolve elsewhere
		case "--exec-path":
			if hasValue || i < len(rest) {
				a.unknown("git --exec-path="+value, "git runs its commands from a directory the gate does not read")
			}
		case "-c":
			key, v, _ := strings.Cut(value, "=")
			k := strings.ToLower(key)
			cv := configValue{val: v, known: valueKnown}
			call.config[k] = cv
			a.configEffect(k, cv, d)
		case "--config-env":
			// --config-env=KEY=ENVVAR: the value is the variable's.
			key, envName, _ := strings.Cut(value, "=")
			k := strings.ToLower(key)
			v, ok := a.envVar(e, envName)
			cv := configValue{val: v.val, known: ok && v.known}
			if !ok {
				cv = configValue{val: "$" + envName}
			}
			call.config[k] = cv
			a.configEffect(k, cv, d)
		}
	}
	return rest[i:]
}

// gitAlias reads a subcommand that is not git's own: an alias (inline, in
// the environment, set earlier in the line, or in the repository's and
// the user's config files) is what it runs — a shell command, or git with
// its words — and anything else is git-SUB from PATH, a program the gate
// does not know.
func (a *analyzer) gitAlias(words []string, rest []arg, call gitCall, d int, in input, aliasDepth int, e env) ([]string, gitVerdict, bool) {
	sub := rest[0].val
	def, ok := call.config["alias."+strings.ToLower(sub)]
	if !ok {
		if v, found := a.gitConfigFileAlias(call.dir, sub); found {
			def, ok = configValue{val: v, known: true}, true
		}
	}
	if !ok {
		return words, gitVerdict{}, false
	}
	if aliasDepth > MaxDepth {
		a.unknown("git aliases nest too deep", "")
		return nil, gitVerdict{}, true
	}
	if !def.known {
		a.unknown("git alias "+sub+" known only at run time", "")
		return nil, gitVerdict{}, true
	}
	if sh, ok := strings.CutPrefix(def.val, "!"); ok {
		tail, _ := joinArgs(rest[1:])
		a.subshell(func() { a.walk.script(sh+" "+tail, d+1) })
		return nil, gitVerdict{}, true
	}
	expanded := splitWords(def.val)
	if len(expanded) == 0 {
		return []string{"git"}, gitVerdict{modelled: true}, true
	}
	return a.git(append(expanded, rest[1:]...), d, in, aliasDepth+1, e)
}

// joinDir resolves a directory change against the current one; the result
// is unknown ("") when either is.
func joinDir(dir, to string) string {
	switch {
	case to == "":
		return dir
	case filepath.IsAbs(to):
		return to
	case dir == "":
		return ""
	}
	return filepath.Join(dir, to)
}

// gitEffect is one irreversible thing a git invocation would do.
type gitEffect struct {
	label   string
	outward bool
	grammar int // the grammar pattern this is a parsed form of, or -1
}

// gitVerdict is what the model concluded about one git invocation.
type gitVerdict struct {
	modelled bool        // the subcommand is one the model reads
	effects  []gitEffect // what it would destroy
	// inert says why nothing happens even though effects is what the words
	// ask for: a dry run or a help request.
	inert   string
	unknown string // cannot tell (a file or a ref? input we cannot see)
}

func effect(label string) gitEffect { return gitEffect{label: label, grammar: -1} }

// Labels of the git effects the model reports.
const (
	labelPushMirror    = "git push --mirror (overwrites and deletes remote refs)"
	labelPushDelete    = "git push --delete (deletes remote refs)"
	labelPushPrune     = "git push --prune (deletes remote refs with no local counterpart)"
	labelPushPlus      = "git push +refspec (force-push to remote)"
	labelPushColon     = "git push :ref (deletes remote refs)"
	labelCheckoutPath  = "git checkout <paths> (overwrites uncommitted changes to files)"
	labelCheckoutF     = "git checkout -f (discards uncommitted changes)"
	labelSwitchF       = "git switch --discard-changes (discards uncommitted changes)"
	labelRestore       = "git restore (discards uncommitted changes to files)"
	labelClean         = "git clean -f (deletes untracked files)"
	labelBranchD       = "git branch -D (deletes a branch, merged or not)"
	labelBranchM       = "git branch -M/-C (overwrites an existing branch)"
	labelStashDrop     = "git stash drop/clear (deletes stashed work)"
	labelWorktreeRm    = "git worktree remove --force (deletes a worktree and its uncommitted work)"
	labelReadTree      = "git read-tree -u --reset (overwrites uncommitted changes)"
	labelUpdateRefD    = "git update-ref -d (deletes a ref)"
	labelReflog        = "git reflog expire/delete (drops recovery points)"
	labelGCPrune       = "git gc --prune=now / git prune (deletes unreachable objects)"
	labelFilterBranch  = "git filter-branch / filter-repo (rewrites history)"
	labelCheckoutIndex = "git checkout-index -f (overwrites uncommitted changes to files)"
	labelGitRmForce    = "git rm -f (deletes files with uncommitted changes)"
)

// gitRead is one git subcommand being read: its words after the
// subcommand, the invocation's configuration and directory, and what it
// reads on its input.
type gitRead struct {
	a    *analyzer
	sub  string
	args []arg
	call gitCall
	d    int
	in   input
}

// parse reads the subcommand's words with the option table of table.
func (r *gitRead) parse(table string) *gitParse { return parseGit(gitTable(table), r.args) }

// finish turns a parse into a verdict: a parse error or a help request
// means git prints usage and does nothing at all.
func (r *gitRead) finish(p *gitParse, effects ...gitEffect) gitVerdict {
	v := gitVerdict{modelled: true}
	switch {
	case p.bad != "":
		return v // git refuses the command line: nothing happens
	case p.help:
		v.effects, v.inert = effects, "help"
	case len(effects) == 0 && p.unknownArgs:
		// A word only the running shell knows may be an option.
		v.unknown = "git " + r.sub + " with an argument known only at run time"
	default:
		v.effects = effects
	}
	return v
}

// finishDry is finish for a subcommand whose --dry-run changes nothing.
func (r *gitRead) finishDry(p *gitParse, effects ...gitEffect) gitVerdict {
	v := r.finish(p, effects...)
	if v.inert == "" && p.on("dry-run") && len(v.effects) > 0 {
		v.inert = "dry run"
	}
	return v
}

// gitSubcommand reads one subcommand with its option table and decides what
// it would destroy.
func (a *analyzer) gitSubcommand(sub string, args []arg, call gitCall, d int, in input) gitVerdict {
	r := &gitRead{a: a, sub: sub, args: args, call: call, d: d, in: in}
	switch sub {
	case "push":
		return r.push()
	case "reset":
		return r.reset()
	case "checkout":
		return r.checkout(r.parse("checkout"))
	case "switch":
		return r.switchBranch()
	case "restore":
		return r.restore()
	case "clean":
		return r.clean()
	case "branch":
		return r.branch()
	case "stash":
		return r.stash()
	case "worktree":
		return r.worktree()
	case "read-tree":
		return r.readTree()
	case "rebase":
		return r.rebase()
	case "update-ref":
		return r.updateRef()
	case "reflog":
		return r.reflog()
	case "gc":
		return r.gc()
	case "prune":
		return r.finishDry(r.parse("prune"), effect(labelGCPrune))
	case "checkout-index":
		return r.checkoutIndex()
	case "rm":
		return r.rm()
	case "send-pack":
		return r.sendPack()
	case "maintenance":
		return r.maintenance()
	case "config":
		a.gitConfigCommand(args, d)
		return gitVerdict{modelled: true}
	case "bisect", "submodule", "difftool", "mergetool":
		r.runs()
		return gitVerdict{modelled: true}
	case "filter-branch":
		return r.filterBranch()
	case "filter-repo":
		return gitVerdict{modelled: true, effects: []gitEffect{effect(labelFilterBranch)}}
	}
	return gitVerdict{}
}

// push: a force (or a lease), a mirror, deleted refs, a prune, and
// refspecs that force or delete; configuration given inline can force or
// mirror too.
func (r *gitRead) push() gitVerdict {
	p := r.parse("push")
	var es []gitEffect
	if p.on("force") {
		g := grammarPushForce
		if p.opts["force"].short {
			g = grammarPushF
		}
		es = append(es, gitEffect{label: irreversiblePatterns[g].Label, outward: true, grammar: g})
	}
	if p.on("force-with-lease") {
		es = append(es, gitEffect{label: irreversiblePatterns[grammarPushLease].Label, outward: true, grammar: grammarPushLease})
	}
	refspecs := p.positionals
	if len(refspecs) > 0 {
		refspecs = refspecs[1:] // the first operand is the remote
	}
	switch {
	case p.on("mirror"):
		if len(refspecs) == 0 && !p.on("all") && !p.on("tags") && !p.on("delete") {
			es = append(es, gitEffect{label: labelPushMirror, outward: true, grammar: -1})
		} else {
			es = nil // --mirror with refspecs is refused
		}
	case p.on("delete"):
		if len(refspecs) == 0 {
			es = nil // --delete without refs is refused
		} else {
			es = append(es, gitEffect{label: labelPushDelete, outward: true, grammar: -1})
		}
	}
	for k, cv := range r.call.config {
		if !strings.HasPrefix(k, "remote.") {
			continue
		}
		val := cv.val
		switch {
		case strings.HasSuffix(k, ".mirror") && !isFalse(val) && len(refspecs) == 0 && !p.on("delete"):
			es = append(es, gitEffect{label: labelPushMirror, outward: true, grammar: -1})
		case strings.HasSuffix(k, ".push") && strings.HasPrefix(val, "+") && len(refspecs) == 0:
			es = append(es, gitEffect{label: labelPushPlus, outward: true, grammar: -1})
		}
	}
	if p.on("prune") {
		es = append(es, gitEffect{label: labelPushPrune, outward: true, grammar: -1})
	}
	es = append(es, refspecEffects(refspecs)...)
	return r.finishDry(p, es...)
}

// refspecEffects are what push's and send-pack's refspecs destroy: a +ref
// forces, a :ref deletes.
func refspecEffects(refspecs []string) []gitEffect {
	var es []gitEffect
	for _, ref := range refspecs {
		switch {
		case strings.HasPrefix(ref, "+"):
			es = append(es, gitEffect{label: labelPushPlus, outward: true, grammar: -1})
		case strings.HasPrefix(ref, ":") && len(ref) > 1:
			es = append(es, gitEffect{label: labelPushColon, outward: true, grammar: -1})
		}
	}
	return es
}

// reset: only a hard reset destroys, and it refuses paths ("git reset
// --hard [<commit>]" only).
func (r *gitRead) reset() gitVerdict {
	p := r.parse("reset")
	mode := ""
	for _, e := range p.events {
		switch e.key {
		case "soft", "mixed", "hard", "merge", "keep":
			mode = e.key
			if e.unset {
				mode = ""
			}
		}
	}
	if mode != "hard" || p.on("patch") || p.on("pathspec-from-file") {
		return r.finish(p)
	}
	ops := p.positionals
	switch {
	case p.dashdash >= 0 && len(ops) > p.dashdash:
		return r.finish(p)
	case p.dashdash < 0 && len(ops) > 1:
		return r.finish(p)
	case p.dashdash < 0 && len(ops) == 1 && r.call.dir != "" && pathExists(r.call.dir, ops[0]):
		return r.finish(p) // a path (or ambiguous): refused
	}
	return r.finish(p, gitEffect{label: irreversiblePatterns[grammarResetHard].Label, grammar: grammarResetHard})
}

// switchBranch: forcing discards changes only on the way to another
// commit; a new branch or a detached HEAD where we stand keeps them.
func (r *gitRead) switchBranch() gitVerdict {
	p := r.parse("switch")
	force := p.on("discard-changes") || p.on("force")
	if force && len(p.positionals) > 0 {
		return r.finish(p, effect(labelSwitchF))
	}
	return r.finish(p)
}

// restore: paths restored in the working tree lose their changes.
func (r *gitRead) restore() gitVerdict {
	p := r.parse("restore")
	worktree := !p.on("staged")
	if p.seen("worktree") {
		worktree = p.on("worktree")
	}
	paths := p.positionals
	if p.dashdash >= 0 {
		paths = paths[p.dashdash:]
	}
	hasPaths := p.on("pathspec-from-file") || anyPathExists(r.call.dir, paths)
	if !worktree || !hasPaths || p.on("patch") {
		return r.finish(p)
	}
	r.a.gitWorktreeWrites(r.call, paths)
	return r.finish(p, effect(labelRestore))
}

// clean deletes untracked files when forced (or configured not to need
// it); -i deletes what the answers on its input choose.
func (r *gitRead) clean() gitVerdict {
	p := r.parse("clean")
	requireForce := !isFalse(r.call.config["clean.requireforce"].val)
	if p.on("interactive") && !p.on("dry-run") && p.bad == "" && !p.help {
		return gitVerdict{modelled: true, unknown: "git clean -i deletes what the answers on its input choose"}
	}
	if p.count("force") == 0 && requireForce && !p.on("dry-run") {
		return r.finish(p) // refuses to clean without -f
	}
	return r.finishDry(p, effect(labelClean))
}

// branch: a forced delete, or a forced move or copy onto a branch; two
// modes at once is usage, and nothing runs.
func (r *gitRead) branch() gitVerdict {
	p := r.parse("branch")
	force := p.on("force")
	del := p.on("delete") || p.on("-D")
	mv := p.on("move") || p.on("-M") || p.on("copy") || p.on("-C")
	modes := 0
	for _, m := range []bool{del, mv, p.on("list"), p.on("show-current"), p.on("edit-description"), p.on("unset-upstream"), p.on("set-upstream-to")} {
		if m {
			modes++
		}
	}
	switch {
	case modes > 1:
		return r.finish(p)
	case del && (p.on("-D") || force) && len(p.positionals) > 0 && !p.on("remotes"):
		// Remote-tracking branches come back with the next fetch.
		return r.finish(p, effect(labelBranchD))
	case mv && (p.on("-M") || p.on("-C") || force) && len(p.positionals) > 0 && !del:
		return r.finish(p, effect(labelBranchM))
	}
	return r.finish(p)
}

// worktree remove --force deletes a worktree with its uncommitted work.
func (r *gitRead) worktree() gitVerdict {
	if len(r.args) == 0 || !r.args[0].known || r.args[0].val != "remove" {
		return gitVerdict{modelled: true}
	}
	p := parseGit(gitTable("worktree remove"), r.args[1:])
	if p.count("force") > 0 && len(p.positionals) > 0 {
		return r.finish(p, effect(labelWorktreeRm))
	}
	return r.finish(p)
}

// readTree -u --reset overwrites the working tree.
func (r *gitRead) readTree() gitVerdict {
	p := r.parse("read-tree")
	if p.on("-u") && p.on("reset") && len(p.positionals) > 0 {
		return r.finishDry(p, effect(labelReadTree))
	}
	return r.finish(p)
}

// rebase runs each --exec script.
func (r *gitRead) rebase() gitVerdict {
	p := r.parse("rebase")
	if p.bad == "" && !p.help {
		for _, script := range p.values["exec"] {
			r.a.walk.script(script, r.d+1)
		}
	}
	return r.finish(p)
}

// updateRef -d deletes a ref; with --stdin the updates are its input.
func (r *gitRead) updateRef() gitVerdict {
	p := r.parse("update-ref")
	if p.bad == "" && !p.help && p.on("stdin") {
		switch r.in.kind {
		case literalInput:
			for _, line := range strings.Split(r.in.text, "\n") {
				if f := strings.Fields(line); len(f) > 0 && f[0] == "delete" {
					return r.finish(p, effect(labelUpdateRefD))
				}
			}
		case unknownInput, fileInput:
			return gitVerdict{modelled: true, unknown: "git update-ref --stdin runs the updates on its input"}
		}
	}
	if p.on("-d") && len(p.positionals) > 0 {
		return r.finish(p, effect(labelUpdateRefD))
	}
	return r.finish(p)
}

// reflog expire drops recovery points unless every expiry is never;
// reflog delete keeps each entry's commit reachable from the next unless
// --rewrite.
func (r *gitRead) reflog() gitVerdict {
	if len(r.args) == 0 || !r.args[0].known {
		return gitVerdict{modelled: true}
	}
	switch r.args[0].val {
	case "expire":
		p := parseGit(gitTable("reflog expire"), r.args[1:])
		conf := r.call.config
		expire := conf["gc.reflogexpire"].val != "" && !isNever(conf["gc.reflogexpire"].val) ||
			conf["gc.reflogexpireunreachable"].val != "" && !isNever(conf["gc.reflogexpireunreachable"].val)
		for _, k := range []string{"expire", "expire-unreachable"} {
			if val, ok := p.value(k); ok {
				expire = !isNever(val)
			}
		}
		if !expire {
			return r.finish(p)
		}
		return r.finishDry(p, effect(labelReflog))
	case "delete":
		p := parseGit(gitTable("reflog delete"), r.args[1:])
		if len(p.positionals) == 0 || !p.on("rewrite") {
			return r.finish(p)
		}
		return r.finishDry(p, effect(labelReflog))
	}
	return gitVerdict{modelled: true}
}

// gc prunes unreachable objects when configured or told to.
func (r *gitRead) gc() gitVerdict {
	p := r.parse("gc")
	prune := gcPrunes(r.call)
	if val, ok := p.value("prune"); ok {
		prune = !isNever(val)
	} else if p.seen("prune") && !p.on("prune") {
		prune = false
	}
	for _, k := range []string{"gc.reflogexpire", "gc.reflogexpireunreachable"} {
		if x := r.call.config[k].val; x != "" && !isNever(x) {
			prune = true
		}
	}
	if prune {
		return r.finish(p, effect(labelGCPrune))
	}
	return r.finish(p)
}

// checkoutIndex -f overwrites the files it checks out in place.
func (r *gitRead) checkoutIndex() gitVerdict {
	p := r.parse("checkout-index")
	force := p.on("force") && !p.on("temp") && !p.on("no-create")
	_, prefixed := p.value("prefix")
	if force && !prefixed && (p.on("all") || p.on("stdin") || anyPathExists(r.call.dir, p.positionals)) {
		return r.finish(p, effect(labelCheckoutIndex))
	}
	return r.finish(p)
}

// rm -f deletes files with their uncommitted changes (--cached keeps the
// files).
func (r *gitRead) rm() gitVerdict {
	p := r.parse("rm")
	if p.count("force") > 0 && !p.on("cached") && (len(p.positionals) > 0 || p.on("pathspec-from-file")) {
		return r.finishDry(p, effect(labelGitRmForce))
	}
	return r.finish(p)
}

// sendPack is push's plumbing: a force, a mirror and refspecs.
func (r *gitRead) sendPack() gitVerdict {
	p := r.parse("send-pack")
	var es []gitEffect
	if p.on("force") || p.on("force-with-lease") {
		es = append(es, gitEffect{label: irreversiblePatterns[grammarPushForce].Label, outward: true, grammar: grammarPushForce})
	}
	if p.on("mirror") {
		es = append(es, gitEffect{label: labelPushMirror, outward: true, grammar: -1})
	}
	if len(p.positionals) > 1 {
		es = append(es, refspecEffects(p.positionals[1:])...)
	}
	return r.finishDry(p, es...)
}

// maintenance run: its gc task prunes when configured to.
func (r *gitRead) maintenance() gitVerdict {
	if len(r.args) == 0 || !r.args[0].known || r.args[0].val != "run" {
		return gitVerdict{modelled: true}
	}
	p := parseGit(gitTable("maintenance run"), r.args[1:])
	tasks := p.values["task"]
	gc := len(tasks) == 0 && !isFalse(r.call.config["maintenance.gc.enabled"].val) || slices.Contains(tasks, "gc")
	if gc && gcPrunes(r.call) {
		return r.finish(p, effect(labelGCPrune))
	}
	return r.finish(p)
}

// runs follows the commands a subcommand runs: bisect run CMD at each
// step, submodule foreach CMD in each submodule, difftool's and
// mergetool's -x/--extcmd.
func (r *gitRead) runs() {
	a, args, d := r.a, r.args, r.d
	switch r.sub {
	case "bisect":
		if len(args) > 1 && args[0].known && args[0].val == "run" {
			a.walk.command(args[1:], d, stdio{}, nil)
		}
	case "submodule":
		for i, w := range args {
			if w.known && w.val == "foreach" {
				sub := skipOptions(args[i+1:], optSpec{})
				if text, _ := joinArgs(sub); text != "" {
					a.subshell(func() { a.walk.script(text, d+1) })
				}
				return
			}
		}
	case "difftool", "mergetool":
		for i, w := range args {
			switch {
			case w.known && (w.val == "-x" || w.val == "--extcmd") && i+1 < len(args):
				script := args[i+1].val
				a.subshell(func() { a.walk.script(script, d+1) })
			case w.known && strings.HasPrefix(w.val, "--extcmd="):
				script := strings.TrimPrefix(w.val, "--extcmd=")
				a.subshell(func() { a.walk.script(script, d+1) })
			}
		}
	}
}

// gitFindings records what the model concluded about one git invocation.
func (a *analyzer) gitFindings(gv gitVerdict, text string) {
	if gv.unknown != "" {
		a.unknown(gv.unknown, "")
	}
	where, note := Executed, ""
	if gv.inert != "" {
		where, note = DryRun, "a "+gv.inert+": changes nothing"
	}
	for _, e := range gv.effects {
		a.add(Finding{Label: "parsed: " + e.label, Outward: e.outward, Where: where, Note: note, grammarNo: e.grammar + 1, Command: text})
		if e.grammar == grammarPushLease {
			// The grammar's --force pattern fires on a lease too.
			a.add(Finding{Label: "parsed: " + irreversiblePatterns[grammarPushForce].Label, Outward: true, Where: where, Note: note, grammarNo: grammarPushForce + 1, Command: text})
		}
	}
}

// gitWorktreeWrites records the working-tree files a git command writes
// from the index or a commit (checkout and restore of paths): a protected
// file checked out is written like any other.
func (a *analyzer) gitWorktreeWrites(call gitCall, paths []string) {
	for _, p := range paths {
		if call.dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(call.dir, p)
		}
		a.addWrite(arg{val: p, known: !pathMagic(p) || p == "."}, "git", false)
	}
}

// gcPrunes: configuration makes gc (and maintenance's gc task) prune
// unreachable objects or reflogs before they expire.
func gcPrunes(call gitCall) bool {
	for _, k := range []string{"gc.pruneexpire", "gc.reflogexpire", "gc.reflogexpireunreachable"} {
		if x := call.config[k].val; x != "" && !isNever(x) {
			return true
		}
	}
	return false
}

// gitConfigCommand reads git config: a value it sets is configuration
// every later git command in the line sees (and the repository keeps), so
// one git runs is read as a script now and an alias as what it runs.
func (a *analyzer) gitConfigCommand(args []arg, d int) {
	var ops []arg
	unset := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case !w.known:
			ops = append(ops, w)
		case w.val == "-f" || w.val == "--file" || w.val == "--blob" || w.val == "--type" || w.val == "--default" || w.val == "--comment" || w.val == "--value":
			i++
		case w.val == "--unset" || w.val == "--unset-all" || w.val == "--remove-section" || w.val == "--rename-section":
			unset = true
		case w.val == "--get" || w.val == "--get-all" || w.val == "--get-regexp" || w.val == "--get-urlmatch" || w.val == "-l" || w.val == "--list" ||
			w.val == "--get-color" || w.val == "--get-colorbool" || w.val == "--show-origin" && len(ops) == 0:
			return
		case w.val == "-e" || w.val == "--edit":
			a.unknown("git config --edit runs an editor on the configuration", "")
			return
		case strings.HasPrefix(w.val, "-"):
		default:
			ops = append(ops, w)
		}
	}
	if len(ops) > 0 && ops[0].known {
		switch ops[0].val {
		case "set":
			ops = ops[1:]
		case "unset":
			unset, ops = true, ops[1:]
		case "get", "list", "edit", "rename-section", "remove-section":
			if ops[0].val == "edit" {
				a.unknown("git config edit runs an editor on the configuration", "")
			}
			return
		}
	}
	if len(ops) >= 2 && ops[0].known && strings.HasPrefix(strings.ToLower(ops[0].val), "alias.") && ops[1].known && strings.HasPrefix(ops[1].val, "!") {
		script := strings.TrimPrefix(ops[1].val, "!")
		a.subshell(func() { a.walk.script(script, d+1) })
	}
	if unset || len(ops) < 2 {
		if unset && len(ops) > 0 {
			delete(a.gitConf, strings.ToLower(ops[0].val))
		}
		return
	}
	if !ops[0].known {
		a.unknown("git config of a key known only at run time", "")
		return
	}
	k := strings.ToLower(ops[0].val)
	v := configValue{val: ops[1].val, known: ops[1].known}
	a.gitConf[k] = v
	a.configEffect(k, v, d)
	if alias, ok := strings.CutPrefix(k, "alias."); ok && v.known && !strings.HasPrefix(v.val, "!") && !gitBuiltins(alias) {
		// A git alias set now runs as written the next time it is
		// called, in this line or a later one.
		words, gv, explained := a.git(splitWords(v.val), d, input{}, 1, nil)
		if words != nil && explained {
			a.gitFindings(gv, "git "+v.val)
		}
	}
}

// isNever: an expiry that keeps everything.
func isNever(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return s == "never" || s == "false"
}

func isFalse(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}

// checkout: "git checkout" either switches branches (destructive only
// when forced) or, given paths, overwrites those files from the index or a
// tree-ish, discarding their uncommitted changes — with "--", with two or
// more operands, with --pathspec-from-file, or with one operand that names
// a file rather than a ref.
func (r *gitRead) checkout(p *gitParse) gitVerdict {
	call := r.call
	newBranch := p.on("-b") || p.on("-B") || p.on("orphan") || p.on("detach")
	force := p.on("force")
	ops := p.positionals
	var paths []string
	pathMode := p.on("pathspec-from-file")
	ambiguous := false
	switch {
	case p.dashdash >= 0:
		paths = ops[p.dashdash:]
		pathMode = pathMode || len(paths) > 0
	case len(ops) >= 2:
		paths, pathMode = ops[1:], true
		if call.dir != "" && pathExists(call.dir, ops[0]) {
			paths = ops
		}
	case len(ops) == 1 && ops[0] != "-" && !newBranch:
		switch {
		case pathMagic(ops[0]):
			paths, pathMode = ops, true
		case call.dir == "":
			ambiguous = true
		case pathExists(call.dir, ops[0]):
			paths, pathMode = ops, true
		}
	}
	if pathMode && !p.on("pathspec-from-file") && !anyPathExists(call.dir, paths) {
		pathMode = false // git refuses: the pathspec matches nothing
	}
	switch {
	case pathMode && newBranch:
		return r.finish(p) // cannot update paths and switch branches at once
	case pathMode && p.on("patch"):
		return r.finish(p)
	case pathMode:
		r.a.gitWorktreeWrites(call, paths)
		return r.finish(p, effect(labelCheckoutPath))
	case force:
		return r.finish(p, effect(labelCheckoutF))
	case ambiguous && p.bad == "" && !p.help:
		return gitVerdict{modelled: true, unknown: "git checkout " + ops[0] + ": a branch, or a file whose changes it would discard (no working directory to look in)"}
	}
	return r.finish(p)
}

// pathMagic: a pathspec git expands itself (".", globs, ":(magic)").
func pathMagic(s string) bool {
	return s == "." || strings.HasPrefix(s, ":") || strings.ContainsAny(s, "*?[")
}

func pathExists(dir, p string) bool {
	if pathMagic(p) {
		return true
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	_, err := os.Lstat(p)
	return err == nil
}

// anyPathExists: some pathspec may match a file. With no working directory
// to look in, every pathspec may.
func anyPathExists(dir string, paths []string) bool {
	for _, p := range paths {
		if dir == "" || pathExists(dir, p) {
			return true
		}
	}
	return false
}

// stash: subcommands are whole words (git does not abbreviate them);
// anything else is an implicit "stash push".
func (r *gitRead) stash() gitVerdict {
	args := r.args
	if len(args) == 0 || !args[0].known {
		return gitVerdict{modelled: true}
	}
	switch args[0].val {
	case "drop":
		p := parseGit(gitTable("stash drop"), args[1:])
		for _, ref := range p.positionals {
			if !stashRefRe.Get().MatchString(ref) {
				return r.finish(p) // not a stash: git refuses
			}
		}
		return r.finish(p, effect(labelStashDrop))
	case "clear":
		p := parseGit(nil, args[1:])
		if len(p.positionals) > 0 {
			return gitVerdict{modelled: true} // refuses arguments
		}
		return r.finish(p, effect(labelStashDrop))
	}
	return gitVerdict{modelled: true}
}

// stashRefRe: the ways to name a stash entry (stash@{1}, 1, a commit id).
// It is compiled on first use: few commands name a stash.
var stashRefRe = firstuse.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`^((refs/)?stash(@\{[0-9]+\})?|[0-9]+|@\{[0-9]+\}|[0-9a-fA-F]{4,64})$`)
}}

// filterBranch: a shell script that matches its options word for word;
// its filters are shell code it evaluates.
func (r *gitRead) filterBranch() gitVerdict {
	a, args, d := r.a, r.args, r.d
	v := gitVerdict{modelled: true, effects: []gitEffect{effect(labelFilterBranch)}}
	for i := 0; i < len(args); i++ {
		s := args[i].val
		switch {
		case s == "--":
			return v
		case s == "-h" || s == "--help":
			v.inert = "help"
			return v
		case strings.HasSuffix(s, "-filter") && strings.HasPrefix(s, "--") && s != "--subdirectory-filter":
			if i+1 < len(args) {
				i++
				a.walk.script(args[i].val, d+1)
			}
		case s == "--setup":
			if i+1 < len(args) {
				i++
				a.walk.script(args[i].val, d+1)
			}
		}
	}
	return v
}

// gitBuiltins are git 2.39's own commands (git --list-cmds=builtins,main)
// and the external ones the model reads: an alias of one of these names
// is ignored, as git ignores it.
var gitBuiltinsList = [...]string{
	"add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bugreport", "bundle", "cat-file",
	"check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout", "checkout-index", "cherry",
	"cherry-pick", "clean", "clone", "column", "commit", "commit-graph", "commit-tree", "config", "count-objects",
	"credential", "credential-cache", "credential-store", "daemon", "describe", "diagnose", "diff", "diff-files",
	"diff-index", "diff-tree", "difftool", "fast-export", "fast-import", "fetch", "fetch-pack", "filter-branch",
	"filter-repo", "fmt-merge-msg", "for-each-ref", "for-each-repo", "format-patch", "fsck", "fsck-objects",
	"fsmonitor--daemon", "gc", "get-tar-commit-id", "grep", "hash-object", "help", "hook", "http-backend", "http-fetch",
	"http-push", "imap-send", "index-pack", "init", "init-db", "instaweb", "interpret-trailers", "log", "ls-files",
	"ls-remote", "ls-tree", "mailinfo", "mailsplit", "maintenance", "merge", "merge-base", "merge-file", "merge-index",
	"merge-octopus", "merge-one-file", "merge-ours", "merge-recursive", "merge-resolve", "merge-subtree", "merge-tree",
	"mergetool", "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes", "pack-objects", "pack-redundant",
	"pack-refs", "patch-id", "prune", "prune-packed", "pull", "push", "quiltimport", "range-diff", "read-tree",
	"rebase", "receive-pack", "reflog", "remote", "repack", "replace", "request-pull", "rerere", "reset", "restore",
	"rev-list", "rev-parse", "revert", "rm", "send-pack", "shell", "shortlog", "show", "show-branch", "show-index",
	"show-ref", "sparse-checkout", "stage", "stash", "status", "stripspace", "submodule", "subtree", "switch",
	"symbolic-ref", "tag", "unpack-file", "unpack-objects", "update-index", "update-ref", "update-server-info",
	"upload-archive", "upload-pack", "var", "verify-commit", "verify-pack", "verify-tag", "version", "web--browse",
	"whatchanged", "worktree", "write-tree",
}

// gitBuiltins reports whether name is in the list (sorted: a binary search, no
// table built per process).
func gitBuiltins(name string) bool {
	_, ok := slices.BinarySearch(gitBuiltinsList[:], name)
	return ok
}

// gitDataCommands are the builtins whose arguments are data (a commit
// message, a pattern, paths, refs) and that run nothing else; the rest
// either have a model or run what the gate cannot read (git hook run,
// git for-each-repo, git instaweb).
var gitDataCommandsList = [...]string{
	"add", "am", "annotate", "apply", "archive", "blame", "bugreport", "bundle", "cat-file", "check-attr",
	"check-ignore", "check-mailmap", "check-ref-format", "cherry", "cherry-pick", "clone", "column", "commit",
	"commit-graph", "commit-tree", "count-objects", "describe", "diagnose", "diff", "diff-files", "diff-index",
	"diff-tree", "fast-export", "fast-import", "fetch", "fetch-pack", "fmt-merge-msg", "for-each-ref", "format-patch",
	"fsck", "fsck-objects", "get-tar-commit-id", "grep", "hash-object", "help", "index-pack", "init", "init-db",
	"interpret-trailers", "log", "ls-files", "ls-remote", "ls-tree", "mailinfo", "mailsplit", "merge", "merge-base",
	"merge-file", "merge-tree", "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes", "pack-objects",
	"pack-redundant", "pack-refs", "patch-id", "pull", "range-diff", "remote", "repack", "replace", "request-pull",
	"rerere", "rev-list", "rev-parse", "revert", "shortlog", "show", "show-branch", "show-index", "show-ref",
	"sparse-checkout", "stage", "status", "stripspace", "symbolic-ref", "tag", "unpack-file", "unpack-objects",
	"update-index", "update-server-info", "var", "verify-commit", "verify-pack", "verify-tag", "version", "whatchanged",
	"write-tree",
}

// gitDataCommands reports whether name is in the list (sorted: a binary search, no
// table built per process).
func gitDataCommands(name string) bool {
	_, ok := slices.BinarySearch(gitDataCommandsList[:], name)
	return ok
}

// gitConfigFileAlias looks an alias up in the configuration files git
// reads for a command run in dir: the repository's (.git/config, a linked
// worktree's common directory), the user's (~/.gitconfig, the XDG one).
func (a *analyzer) gitConfigFileAlias(dir, name string) (string, bool) {
	var files []string
	if dir != "" {
		if gd := findGitDir(dir); gd != "" {
			files = append(files, filepath.Join(gd, "config"))
		}
	}
	if home, ok := a.home(); ok {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	if cfg, ok := a.configDir(); ok {
		files = append(files, filepath.Join(cfg, "git", "config"))
	}
	for _, f := range files {
		data, err := readScript(f)
		if err != nil {
			continue
		}
		if v, ok := iniValue(string(data), "alias", strings.ToLower(name)); ok {
			return v, true
		}
	}
	return "", false
}

// findGitDir finds the git directory of the repository containing dir
// (following a .git file and a linked worktree's commondir).
func findGitDir(dir string) string {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				return p
			}
			data, err := readScript(p)
			if err != nil {
				return ""
			}
			gd, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
			if !ok {
				return ""
			}
			gd = strings.TrimSpace(gd)
			if !filepath.IsAbs(gd) {
				gd = filepath.Join(d, gd)
			}
			if c, err := readScript(filepath.Join(gd, "commondir")); err == nil {
				cd := strings.TrimSpace(string(c))
				if !filepath.IsAbs(cd) {
					cd = filepath.Join(gd, cd)
				}
				return filepath.Clean(cd)
			}
			return gd
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// iniValue reads key in [section] of a git config file (the last value
// wins), with git's quoting and escapes.
func iniValue(text, section, key string) (string, bool) {
	cur := ""
	val, found := "", false
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimSpace(lines[i])
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			cur = strings.ToLower(strings.TrimSpace(line[1:end]))
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if cur != section {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		if strings.ToLower(strings.TrimSpace(k)) != key {
			continue
		}
		val, found = gitConfigValue(strings.TrimSpace(v)), true
	}
	return val, found
}

// gitConfigValue undoes a config value's quoting: "…" groups, \" \\ \n
// \t escapes, and a comment after # or ; outside quotes.
func gitConfigValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
