package shell

import (
	"strings"
	"sync"
)

// git's own option parser (parse-options.c), modelled so the gate reads a
// git command line the way git will: a long option may be any unambiguous
// prefix of its name (--mirr is --mirror), --no-NAME negates, short flags
// cluster and a short option's value may be glued on (-bfeature is -b
// feature), options may follow positionals, and "--" or --end-of-options
// ends them. An ambiguous prefix, an unknown option or a missing value is
// an error: git prints usage and does nothing.

// gitOptionTables are the option tables of the git subcommands the policy
// covers, transcribed from git 2.39 (`git CMD -h` for short letters and
// values, `git CMD --git-completion-helper-all` for hidden options and which
// options take --no-). TestGitOptionTables checks them against the git on
// PATH. Syntax per option: [s,]long, or s alone for a short-only option;
// "=" after the name: takes a value, "=?": takes an optional value (glued
// on only); "!": cannot be negated with --no-. An array of constants, not
// a map: the compiler lays it out, where a map is built at package init in
// every hook process; it is looked up only when a subcommand's table is
// first parsed (gitTable).
var gitOptionTables = [...]struct{ sub, spec string }{
	{"push", `v,verbose q,quiet repo= all mirror d,delete tags n,dry-run porcelain f,force force-with-lease=? force-if-includes recurse-submodules= thin receive-pack= exec= u,set-upstream progress prune no-verify follow-tags signed=? atomic o,push-option= 4,ipv4 6,ipv6`},
	{"reset", `q,quiet no-refresh mixed soft hard merge keep recurse-submodules=? p,patch N,intent-to-add pathspec-from-file= pathspec-file-nul`},
	{"checkout", `guess overlay q,quiet recurse-submodules=? progress m,merge conflict= d,detach t,track=? f,force orphan= overwrite-ignore ignore-other-worktrees 2,ours! 3,theirs! p,patch ignore-skip-worktree-bits pathspec-from-file= pathspec-file-nul b= B= l`},
	{"switch", `c,create= C,force-create= guess discard-changes q,quiet recurse-submodules=? progress m,merge conflict= d,detach t,track=? f,force orphan= overwrite-ignore ignore-other-worktrees`},
	{"restore", `s,source= S,staged W,worktree ignore-unmerged overlay q,quiet recurse-submodules=? progress m,merge conflict= 2,ours! 3,theirs! p,patch ignore-skip-worktree-bits pathspec-from-file= pathspec-file-nul`},
	{"clean", `q,quiet n,dry-run f,force i,interactive e,exclude=! d x X`},
	{"branch", `v,verbose q,quiet t,track=? u,set-upstream-to= unset-upstream color=? r,remotes contains=? no-contains=? abbrev=? a,all d,delete m,move c,copy l,list show-current create-reflog edit-description f,force merged=? no-merged=? column=? sort= points-at= i,ignore-case recurse-submodules format= set-upstream with=?! without=?! D M C`},
	{"stash drop", `q,quiet`},
	{"stash clear", ``},
	{"stash pop", `q,quiet index`},
	{"stash apply", `q,quiet index`},
	{"stash push", `k,keep-index S,staged p,patch q,quiet u,include-untracked a,all m,message= pathspec-from-file= pathspec-file-nul`},
	{"stash save", `k,keep-index S,staged p,patch q,quiet u,include-untracked a,all m,message=`},
	{"worktree remove", `f,force`},
	{"worktree prune", `n,dry-run v,verbose expire=`},
	{"read-tree", `index-output=! empty v,verbose trivial aggressive reset prefix=! exclude-per-directory=! n,dry-run no-sparse-checkout debug-unpack recurse-submodules=? q,quiet m u i`},
	{"rebase", `onto= keep-base no-verify q,quiet v,verbose n,no-stat signoff committer-date-is-author-date reset-author-date ignore-whitespace whitespace= f,force-rebase no-ff continue! skip! abort! quit! edit-todo! show-current-patch! apply! m,merge! i,interactive! rerere-autoupdate empty=! autosquash update-refs S,gpg-sign=? autostash x,exec= r,rebase-merges=? fork-point s,strategy= X,strategy-option= root reschedule-failed-exec reapply-cherry-picks allow-empty-message ignore-date keep-empty preserve-merges C=`},
	{"update-ref", `no-deref stdin create-reflog m= d z`},
	{"reflog expire", `dry-run rewrite updateref verbose expire=! expire-unreachable=! stale-fix all single-worktree`},
	{"reflog delete", `dry-run rewrite updateref verbose`},
	{"gc", `q,quiet prune=? cruft aggressive auto force keep-largest-pack`},
	{"prune", `n,dry-run v,verbose progress expire= exclude-promisor-objects`},
	{"checkout-index", `u,index q,quiet f,force a,all n,no-create ignore-skip-worktree-bits stdin temp prefix= stage=! z`},
	{"rm", `n,dry-run q,quiet cached f,force r ignore-unmatch sparse pathspec-from-file= pathspec-file-nul`},
	{"send-pack", `v,verbose q,quiet receive-pack= exec= remote= all n,dry-run mirror f,force signed=? push-option= progress thin atomic stateless-rpc stdin helper-status force-with-lease=? force-if-includes`},
	{"maintenance run", `auto schedule= quiet task=!`},
}

// gitOpt is one entry of a subcommand's option table.
type gitOpt struct {
	long  string // without "--"; "" for a short-only option
	short byte
	arg   optArg
	noNeg bool
}

// key names an option in parse results: its long name, or "-x" for a
// short-only option.
func (o *gitOpt) key() string {
	if o.long != "" {
		return o.long
	}
	return "-" + string(o.short)
}

func parseOptTable(spec string) []gitOpt {
	var out []gitOpt
	for _, tok := range strings.Fields(spec) {
		var o gitOpt
		if strings.HasSuffix(tok, "!") {
			o.noNeg, tok = true, tok[:len(tok)-1]
		}
		switch {
		case strings.HasSuffix(tok, "=?"):
			o.arg, tok = optionalValue, tok[:len(tok)-2]
		case strings.HasSuffix(tok, "="):
			o.arg, tok = needsValue, tok[:len(tok)-1]
		}
		if len(tok) > 1 && tok[1] == ',' {
			o.short, tok = tok[0], tok[2:]
		} else if len(tok) == 1 {
			o.short, tok = tok[0], ""
		}
		o.long = tok
		out = append(out, o)
	}
	return out
}

// gitOptionSpec is a subcommand's entry of gitOptionTables ("" when the
// table has none: it takes no options).
func gitOptionSpec(sub string) (string, bool) {
	for _, t := range gitOptionTables {
		if t.sub == sub {
			return t.spec, true
		}
	}
	return "", false
}

var (
	gitTablesMu sync.Mutex
	// gitTablesParsed is made on first use, not at package init.
	gitTablesParsed map[string][]gitOpt
)

// gitTable is a subcommand's option table, parsed on first use.
func gitTable(name string) []gitOpt {
	gitTablesMu.Lock()
	defer gitTablesMu.Unlock()
	t, ok := gitTablesParsed[name]
	if !ok {
		spec, _ := gitOptionSpec(name)
		t = parseOptTable(spec)
		if gitTablesParsed == nil {
			gitTablesParsed = map[string][]gitOpt{}
		}
		gitTablesParsed[name] = t
	}
	return t
}

// gitOptValue is an option as parsed: set or negated (--no-), and its value.
type gitEvent struct {
	key   string
	unset bool
	short bool
}

type gitOptValue struct {
	set   bool
	count int // how many times set since the last --no- (OPT__FORCE counts)
	value string
	has   bool // a value was given
	short bool // last set through its short letter
}

// gitParse is a subcommand's arguments as git's parser sees them.
type gitParse struct {
	opts        map[string]*gitOptValue
	events      []gitEvent // every option in the order given, repeats kept
	values      map[string][]string
	positionals []string
	dashdash    int  // index in positionals where "--" stood, or -1
	help        bool // -h or --help: usage, nothing runs
	bad         string
	unknownArgs bool // a word only the running shell knows
}

func (p *gitParse) on(key string) bool {
	v := p.opts[key]
	return v != nil && v.set
}

func (p *gitParse) count(key string) int {
	if v := p.opts[key]; v != nil && v.set {
		return v.count
	}
	return 0
}

func (p *gitParse) value(key string) (string, bool) {
	v := p.opts[key]
	if v == nil || !v.set || !v.has {
		return "", false
	}
	return v.value, true
}

// seen reports whether an option was given at all (set or negated).
func (p *gitParse) seen(key string) bool { return p.opts[key] != nil }

// parseGit runs git's option parser over args with a subcommand's table.
// Parsing stops at the first error, as git does (it exits 129 before
// acting); the error is in bad.
func parseGit(table []gitOpt, args []arg) *gitParse {
	p := &gitParse{opts: map[string]*gitOptValue{}, values: map[string][]string{}, dashdash: -1}
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			// Only the running shell knows this word: it may be an option.
			p.unknownArgs = true
			p.positionals = append(p.positionals, w.val)
			continue
		}
		s := w.val
		switch {
		case s == "--" || s == "--end-of-options":
			p.dashdash = len(p.positionals)
			for _, r := range args[i+1:] {
				p.positionals = append(p.positionals, r.val)
				if !r.known {
					p.unknownArgs = true
				}
			}
			return p
		case s == "--help" || s == "--help-all":
			p.help = true
			return p
		case strings.HasPrefix(s, "--"):
			next, ok := p.long(table, s[2:], args, i)
			if !ok {
				return p
			}
			i = next
		case len(s) > 1 && s[0] == '-':
			next, ok := p.shortCluster(table, s[1:], args, i)
			if !ok {
				return p
			}
			i = next
		default:
			p.positionals = append(p.positionals, s)
		}
	}
	return p
}

func (p *gitParse) record(o *gitOpt, unset bool, value string, has bool, short bool) {
	k := o.key()
	v := p.opts[k]
	if v == nil {
		v = &gitOptValue{}
		p.opts[k] = v
	}
	if unset {
		*v = gitOptValue{}
	} else {
		v.set = true
		v.count++
		v.short = short
		if has {
			v.value, v.has = value, true
			p.values[k] = append(p.values[k], value)
		}
	}
	p.events = append(p.events, gitEvent{key: k, unset: unset, short: short})
}

// long resolves one long option the way parse_long_opt does: an exact name
// (or --no-name) wins; otherwise a unique abbreviation; two candidates are
// ambiguous. It returns the index of the last word consumed.
func (p *gitParse) long(table []gitOpt, arg string, args []arg, i int) (int, bool) {
	name, value, hasValue := strings.Cut(arg, "=")
	var abbrev, ambiguous *gitOpt
	abbrevUnset := false
	for k := range table {
		o := &table[k]
		if o.long == "" {
			continue
		}
		for _, form := range longForms(o) {
			switch {
			case name == form.name:
				return p.take(o, form.unset, value, hasValue, args, i)
			case strings.HasPrefix(form.name, name):
				if abbrev != nil && abbrev != o {
					ambiguous = o
				}
				if abbrev != o || !form.unset {
					abbrev, abbrevUnset = o, form.unset
				}
			}
		}
	}
	switch {
	case ambiguous != nil:
		p.bad = "ambiguous option --" + name
		return i, false
	case abbrev == nil:
		p.bad = "unknown option --" + name
		return i, false
	}
	return p.take(abbrev, abbrevUnset, value, hasValue, args, i)
}

type longForm struct {
	name  string
	unset bool
}

// longForms are the spellings an option answers to: its name, and unless
// it cannot be negated, "no-" + name (or, for an option named no-X, X).
func longForms(o *gitOpt) []longForm {
	forms := []longForm{{o.long, false}}
	if o.noNeg {
		return forms
	}
	if rest, ok := strings.CutPrefix(o.long, "no-"); ok {
		return append(forms, longForm{rest, true}, longForm{"no-" + o.long, true})
	}
	return append(forms, longForm{"no-" + o.long, true})
}

// take applies a resolved long option and its value.
func (p *gitParse) take(o *gitOpt, unset bool, value string, hasValue bool, args []arg, i int) (int, bool) {
	switch {
	case unset && hasValue:
		p.bad = "--no-" + o.long + " takes no value"
		return i, false
	case unset:
		p.record(o, true, "", false, false)
		return i, true
	}
	switch o.arg {
	case noValue:
		if hasValue {
			p.bad = "--" + o.long + " takes no value"
			return i, false
		}
		p.record(o, false, "", false, false)
	case optionalValue:
		p.record(o, false, value, hasValue, false)
	case needsValue:
		if !hasValue {
			if i+1 >= len(args) {
				p.bad = "--" + o.long + " requires a value"
				return i, false
			}
			i++
			value = args[i].val
		}
		p.record(o, false, value, true, false)
	}
	return i, true
}

// shortCluster parses "-abc": each letter an option; a letter that takes a
// value takes the rest of the word, or the next word.
func (p *gitParse) shortCluster(table []gitOpt, cluster string, args []arg, i int) (int, bool) {
	for j := 0; j < len(cluster); j++ {
		c := cluster[j]
		var o *gitOpt
		for k := range table {
			if table[k].short == c {
				o = &table[k]
				break
			}
		}
		if o == nil {
			if c == 'h' {
				p.help = true
			} else {
				p.bad = "unknown switch -" + string(c)
			}
			return i, false
		}
		rest := cluster[j+1:]
		switch o.arg {
		case noValue:
			p.record(o, false, "", false, true)
			continue
		case optionalValue:
			p.record(o, false, rest, rest != "", true)
			return i, true
		case needsValue:
			if rest == "" {
				if i+1 >= len(args) {
					p.bad = "-" + string(c) + " requires a value"
					return i, false
				}
				i++
				rest = args[i].val
			}
			p.record(o, false, rest, true, true)
			return i, true
		}
	}
	return i, true
}
