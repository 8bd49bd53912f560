package operator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// gitGlobalWithValue are git's global options that take a separate value.
// git matches global options exactly (no abbreviation).
var gitGlobalWithValue = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path", "--attr-source", "--list-cmds"}

// gitShellConfig are configuration keys whose value git runs through a
// shell; given inline with -c they are analysed as scripts.
var gitShellConfig = map[string]bool{
	"core.pager": true, "core.editor": true, "core.sshcommand": true, "core.askpass": true, "core.fsmonitor": true,
	"sequence.editor": true, "diff.external": true, "gpg.program": true, "credential.helper": true,
	"uploadpack.packobjectshook": true,
}

// gitCall is one git invocation after its global options.
type gitCall struct {
	config map[string]string // -c key=value, keys lowercased
	dir    string            // working directory ("" when unknown)
}

// git strips git's global options (-C dir, -c key=value, --git-dir, …),
// resolves an alias defined inline with -c alias.NAME=…, and reads the
// subcommand with git's own option parser (gitopts.go), recording what the
// invocation would destroy. It returns the normalised words "git SUB ARGS…"
// and what the model concluded; nil words when an alias ran a shell
// command (already analysed).
func (a *analyzer) git(rest []arg, d int, in input, aliasDepth int) ([]string, gitVerdict) {
	call := gitCall{config: map[string]string{}, dir: a.dir}
	aliases := map[string]string{}
	i := 0
	for ; i < len(rest); i++ {
		w := rest[i]
		if !w.known {
			break
		}
		s := w.val
		if !strings.HasPrefix(s, "-") {
			break
		}
		name, value, hasValue := strings.Cut(s, "=")
		if strings.HasPrefix(s, "-C") && len(s) > 2 && !strings.HasPrefix(s, "--") {
			call.dir = joinDir(call.dir, s[2:])
			continue
		}
		if slices.Contains(gitGlobalWithValue, name) && !hasValue {
			if i+1 < len(rest) {
				i++
				value = rest[i].val
				if !rest[i].known {
					call.dir = ""
				}
			}
		}
		switch name {
		case "-C":
			call.dir = joinDir(call.dir, value)
		case "--git-dir", "--work-tree":
			call.dir = "" // paths resolve elsewhere
		case "-c":
			key, v, _ := strings.Cut(value, "=")
			k := strings.ToLower(key)
			if alias, ok := strings.CutPrefix(k, "alias."); ok {
				aliases[alias] = v
			}
			call.config[k] = v
			if gitShellConfig[k] || strings.HasPrefix(k, "pager.") || strings.HasSuffix(k, ".textconv") ||
				strings.HasPrefix(k, "filter.") && (strings.HasSuffix(k, ".clean") || strings.HasSuffix(k, ".smudge") || strings.HasSuffix(k, ".process")) {
				a.script(strings.TrimPrefix(v, "!"), d+1)
			}
		}
	}
	rest = rest[i:]
	if len(rest) == 0 {
		return []string{"git"}, gitVerdict{modelled: true}
	}
	if rest[0].known {
		if def, ok := aliases[strings.ToLower(rest[0].val)]; ok {
			if aliasDepth > MaxDepth {
				a.unknown("git aliases nest too deep", "")
				return nil, gitVerdict{}
			}
			if sh, ok := strings.CutPrefix(def, "!"); ok {
				tail, _ := joinArgs(rest[1:])
				a.script(sh+" "+tail, d+1)
				return nil, gitVerdict{}
			}
			expanded := splitWords(def)
			if len(expanded) == 0 {
				return []string{"git"}, gitVerdict{modelled: true}
			}
			return a.git(append(expanded, rest[1:]...), d, in, aliasDepth+1)
		}
	}
	words := append([]string{"git"}, vals(rest)...)
	if !rest[0].known {
		a.unknown("git subcommand known only at run time", "the shell decides what git "+rest[0].val+" does")
		return words, gitVerdict{}
	}
	return words, a.gitSubcommand(rest[0].val, rest[1:], call, d, in)
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
	labelPushMirror   = "git push --mirror (overwrites and deletes remote refs)"
	labelPushDelete   = "git push --delete (deletes remote refs)"
	labelPushPrune    = "git push --prune (deletes remote refs with no local counterpart)"
	labelPushPlus     = "git push +refspec (force-push to remote)"
	labelPushColon    = "git push :ref (deletes remote refs)"
	labelCheckoutPath = "git checkout <paths> (overwrites uncommitted changes to files)"
	labelCheckoutF    = "git checkout -f (discards uncommitted changes)"
	labelSwitchF      = "git switch --discard-changes (discards uncommitted changes)"
	labelRestore      = "git restore (discards uncommitted changes to files)"
	labelClean        = "git clean -f (deletes untracked files)"
	labelBranchD      = "git branch -D (deletes a branch, merged or not)"
	labelBranchM      = "git branch -M/-C (overwrites an existing branch)"
	labelStashDrop    = "git stash drop/clear (deletes stashed work)"
	labelWorktreeRm   = "git worktree remove --force (deletes a worktree and its uncommitted work)"
	labelReadTree     = "git read-tree -u --reset (overwrites uncommitted changes)"
	labelUpdateRefD   = "git update-ref -d (deletes a ref)"
	labelReflog       = "git reflog expire/delete (drops recovery points)"
	labelGCPrune      = "git gc --prune=now / git prune (deletes unreachable objects)"
	labelFilterBranch = "git filter-branch / filter-repo (rewrites history)"
)

// gitSubcommand reads one subcommand with its option table and decides what
// it would destroy.
func (a *analyzer) gitSubcommand(sub string, args []arg, call gitCall, d int, in input) gitVerdict {
	parse := func(table string) *gitParse { return parseGit(gitTable(table), args) }
	v := gitVerdict{modelled: true}
	// finish turns a parse into a verdict: a parse error or a help request
	// means git prints usage and does nothing at all.
	finish := func(p *gitParse, effects ...gitEffect) gitVerdict {
		switch {
		case p.bad != "":
			return v // git refuses the command line: nothing happens
		case p.help:
			v.effects, v.inert = effects, "help"
		case len(effects) == 0 && p.unknownArgs:
			// A word only the running shell knows may be an option.
			v.unknown = "git " + sub + " with an argument known only at run time"
		default:
			v.effects = effects
		}
		return v
	}
	switch sub {
	case "push":
		p := parse("push")
		var es []gitEffect
		if p.on("force") {
			g := grammarPushForce
			if p.opts["force"].short {
				g = grammarPushF
			}
			es = append(es, gitEffect{label: grammarIrreversible[g].label, outward: true, grammar: g})
		}
		if p.on("force-with-lease") {
			es = append(es, gitEffect{label: grammarIrreversible[grammarPushLease].label, outward: true, grammar: grammarPushLease})
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
		// Configuration given inline can force or mirror too.
		for k, val := range call.config {
			if !strings.HasPrefix(k, "remote.") {
				continue
			}
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
		for _, ref := range refspecs {
			switch {
			case strings.HasPrefix(ref, "+"):
				es = append(es, gitEffect{label: labelPushPlus, outward: true, grammar: -1})
			case strings.HasPrefix(ref, ":") && len(ref) > 1:
				es = append(es, gitEffect{label: labelPushColon, outward: true, grammar: -1})
			}
		}
		v = finish(p, es...)
		if v.inert == "" && p.on("dry-run") && len(v.effects) > 0 {
			v.inert = "dry run"
		}
		return v
	case "reset":
		p := parse("reset")
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
			return finish(p)
		}
		// A hard reset refuses paths: "git reset --hard [<commit>]" only.
		ops := p.positionals
		switch {
		case p.dashdash >= 0 && len(ops) > p.dashdash:
			return finish(p)
		case p.dashdash < 0 && len(ops) > 1:
			return finish(p)
		case p.dashdash < 0 && len(ops) == 1 && call.dir != "" && pathExists(call.dir, ops[0]):
			return finish(p) // a path (or ambiguous): refused
		}
		return finish(p, gitEffect{label: grammarIrreversible[grammarResetHard].label, grammar: grammarResetHard})
	case "checkout":
		return a.gitCheckout(parse("checkout"), call, in, finish)
	case "switch":
		p := parse("switch")
		force := p.on("discard-changes") || p.on("force")
		// Forcing discards changes only on the way to another commit: a
		// new branch or a detached HEAD where we stand keeps them.
		if force && len(p.positionals) > 0 {
			return finish(p, effect(labelSwitchF))
		}
		return finish(p)
	case "restore":
		p := parse("restore")
		worktree := !p.on("staged")
		if p.seen("worktree") {
			worktree = p.on("worktree")
		}
		paths := p.positionals
		if p.dashdash >= 0 {
			paths = paths[p.dashdash:]
		}
		hasPaths := p.on("pathspec-from-file") || anyPathExists(call.dir, paths)
		if !worktree || !hasPaths || p.on("patch") {
			return finish(p)
		}
		return finish(p, effect(labelRestore))
	case "clean":
		p := parse("clean")
		requireForce := !isFalse(call.config["clean.requireforce"])
		if p.on("interactive") && !p.on("dry-run") && p.bad == "" && !p.help {
			v.unknown = "git clean -i deletes what the answers on its input choose"
			return v
		}
		if p.count("force") == 0 && requireForce && !p.on("dry-run") {
			return finish(p) // refuses to clean without -f
		}
		v = finish(p, effect(labelClean))
		if v.inert == "" && p.on("dry-run") {
			v.inert = "dry run"
		}
		return v
	case "branch":
		p := parse("branch")
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
			return finish(p) // incompatible modes: usage, nothing runs
		case del && (p.on("-D") || force) && len(p.positionals) > 0 && !p.on("remotes"):
			// Remote-tracking branches come back with the next fetch.
			return finish(p, effect(labelBranchD))
		case mv && (p.on("-M") || p.on("-C") || force) && len(p.positionals) > 0 && !del:
			return finish(p, effect(labelBranchM))
		}
		return finish(p)
	case "stash":
		return a.gitStash(args, finish)
	case "worktree":
		if len(args) == 0 || !args[0].known || args[0].val != "remove" {
			return v
		}
		p := parseGit(gitTable("worktree remove"), args[1:])
		if p.count("force") > 0 && len(p.positionals) > 0 {
			return finish(p, effect(labelWorktreeRm))
		}
		return finish(p)
	case "read-tree":
		p := parse("read-tree")
		if p.on("-u") && p.on("reset") && len(p.positionals) > 0 {
			v = finish(p, effect(labelReadTree))
			if v.inert == "" && p.on("dry-run") {
				v.inert = "dry run"
			}
			return v
		}
		return finish(p)
	case "rebase":
		p := parse("rebase")
		if p.bad == "" && !p.help {
			for _, script := range p.values["exec"] {
				a.script(script, d+1)
			}
		}
		return finish(p)
	case "update-ref":
		p := parse("update-ref")
		if p.bad == "" && !p.help && p.on("stdin") {
			switch in.kind {
			case literalInput:
				for _, line := range strings.Split(in.text, "\n") {
					if f := strings.Fields(line); len(f) > 0 && f[0] == "delete" {
						return finish(p, effect(labelUpdateRefD))
					}
				}
			case unknownInput, fileInput:
				v.unknown = "git update-ref --stdin runs the updates on its input"
				return v
			}
		}
		if p.on("-d") && len(p.positionals) > 0 {
			return finish(p, effect(labelUpdateRefD))
		}
		return finish(p)
	case "reflog":
		if len(args) == 0 || !args[0].known {
			return v
		}
		switch args[0].val {
		case "expire":
			p := parseGit(gitTable("reflog expire"), args[1:])
			expire := call.config["gc.reflogexpire"] != "" && !isNever(call.config["gc.reflogexpire"]) ||
				call.config["gc.reflogexpireunreachable"] != "" && !isNever(call.config["gc.reflogexpireunreachable"])
			for _, k := range []string{"expire", "expire-unreachable"} {
				if val, ok := p.value(k); ok {
					expire = !isNever(val)
				}
			}
			if !expire {
				return finish(p)
			}
			v = finish(p, effect(labelReflog))
			if v.inert == "" && p.on("dry-run") {
				v.inert = "dry run"
			}
			return v
		case "delete":
			p := parseGit(gitTable("reflog delete"), args[1:])
			// Each entry records the value before it too, so deleting one
			// keeps its commit reachable from the next; --rewrite drops it.
			if len(p.positionals) == 0 || !p.on("rewrite") {
				return finish(p)
			}
			v = finish(p, effect(labelReflog))
			if v.inert == "" && p.on("dry-run") {
				v.inert = "dry run"
			}
			return v
		}
		return v
	case "gc":
		p := parse("gc")
		prune := call.config["gc.pruneexpire"] != "" && !isNever(call.config["gc.pruneexpire"])
		if val, ok := p.value("prune"); ok {
			prune = !isNever(val)
		} else if p.seen("prune") && !p.on("prune") {
			prune = false
		}
		for _, k := range []string{"gc.reflogexpire", "gc.reflogexpireunreachable"} {
			if x := call.config[k]; x != "" && !isNever(x) {
				prune = true
			}
		}
		if prune {
			return finish(p, effect(labelGCPrune))
		}
		return finish(p)
	case "prune":
		p := parse("prune")
		v = finish(p, effect(labelGCPrune))
		if v.inert == "" && p.on("dry-run") {
			v.inert = "dry run"
		}
		return v
	case "filter-branch":
		return a.gitFilterBranch(args, d)
	case "filter-repo":
		return gitVerdict{modelled: true, effects: []gitEffect{effect(labelFilterBranch)}}
	}
	return gitVerdict{}
}

// gitFindings records what the model concluded about one git invocation.
func (a *analyzer) gitFindings(gv gitVerdict) {
	if gv.unknown != "" {
		a.unknown(gv.unknown, "")
	}
	where, note := Executed, ""
	if gv.inert != "" {
		where, note = DryRun, "a "+gv.inert+": changes nothing"
	}
	for _, e := range gv.effects {
		a.add(Finding{Label: "parsed: " + e.label, Outward: e.outward, Where: where, Note: note, grammar: e.grammar})
		if e.grammar == grammarPushLease {
			// The grammar's --force pattern fires on a lease too.
			a.add(Finding{Label: "parsed: " + grammarIrreversible[grammarPushForce].label, Outward: true, Where: where, Note: note, grammar: grammarPushForce})
		}
	}
}

// cd follows a literal directory change for the commands after it; any
// other change leaves the directory unknown.
func (a *analyzer) cd(rest []arg) {
	ops := skipOptions(rest, optSpec{})
	switch {
	case len(ops) == 0:
		a.dir = "" // $HOME
	case !ops[0].known || ops[0].val == "-":
		a.dir = ""
	default:
		a.dir = joinDir(a.dir, ops[0].val)
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

// gitCheckout: "git checkout" either switches branches (destructive only
// when forced) or, given paths, overwrites those files from the index or a
// tree-ish, discarding their uncommitted changes — with "--", with two or
// more operands, with --pathspec-from-file, or with one operand that names
// a file rather than a ref.
func (a *analyzer) gitCheckout(p *gitParse, call gitCall, in input, finish func(*gitParse, ...gitEffect) gitVerdict) gitVerdict {
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
		return finish(p) // cannot update paths and switch branches at once
	case pathMode && p.on("patch"):
		return finish(p)
	case pathMode:
		return finish(p, effect(labelCheckoutPath))
	case force:
		return finish(p, effect(labelCheckoutF))
	case ambiguous && p.bad == "" && !p.help:
		return gitVerdict{modelled: true, unknown: "git checkout " + ops[0] + ": a branch, or a file whose changes it would discard (no working directory to look in)"}
	}
	return finish(p)
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

// gitStash: subcommands are whole words (git does not abbreviate them);
// anything else is an implicit "stash push".
func (a *analyzer) gitStash(args []arg, finish func(*gitParse, ...gitEffect) gitVerdict) gitVerdict {
	if len(args) == 0 || !args[0].known {
		return gitVerdict{modelled: true}
	}
	switch args[0].val {
	case "drop":
		p := parseGit(gitTable("stash drop"), args[1:])
		for _, ref := range p.positionals {
			if !stashRefRe().MatchString(ref) {
				return finish(p) // not a stash: git refuses
			}
		}
		return finish(p, effect(labelStashDrop))
	case "clear":
		p := parseGit(nil, args[1:])
		if len(p.positionals) > 0 {
			return gitVerdict{modelled: true} // refuses arguments
		}
		return finish(p, effect(labelStashDrop))
	}
	return gitVerdict{modelled: true}
}

// stashRefRe: the ways to name a stash entry (stash@{1}, 1, a commit id).
var stashRefRe = lazyRegexp(`^((refs/)?stash(@\{[0-9]+\})?|[0-9]+|@\{[0-9]+\}|[0-9a-fA-F]{4,64})$`)

// gitFilterBranch: a shell script that matches its options word for word;
// its filters are shell code it evaluates.
func (a *analyzer) gitFilterBranch(args []arg, d int) gitVerdict {
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
				a.script(args[i].val, d+1)
			}
		case s == "--setup":
			if i+1 < len(args) {
				i++
				a.script(args[i].val, d+1)
			}
		}
	}
	return v
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
