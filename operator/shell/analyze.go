package shell

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// MaxDepth bounds recursion into scripts inside scripts (sh -c, eval, a git
// alias, a heredoc fed to a shell, a script file). Deeper nesting fails
// closed.
const MaxDepth = 5

// maxCommands bounds the work on one input; beyond it we fail closed rather
// than keep a hook waiting.
const maxCommands = 5000

// AnalysisBudget bounds the time Analyze spends on one input, every phase
// together (raw scan, parse, analysis, script files read). No new work
// starts once all but one regexp match timeout of it is spent, so a match
// in flight still ends within it; what was not read makes the
// analysis incomplete (unknown: asked when a person is there, refused when
// nobody is), never allowed. It leaves a hook process room to start and
// answer within 250 ms.
const AnalysisBudget = 150 * time.Millisecond

// maxNesting bounds how deeply commands may nest (subshells, substitutions,
// blocks) before the analysis stops following them. A text whose
// parentheses or braces nest deeper is not parsed at all: the parser's cost
// grows with the square of the depth.
const maxNesting = 200

// maxCommandText bounds the text one command's patterns run on; the raw
// scan still sees everything.
const maxCommandText = 64 << 10

// MaxScriptFile is the largest script file a command runs (bash FILE,
// ./FILE, source FILE, python3 FILE) that the analysis reads; a larger one
// is unknown. maxScriptBytes bounds all the files one analysis reads.
const (
	MaxScriptFile  = 256 << 10
	maxScriptBytes = 1 << 20
)

// Analysis is everything the gate reads from one command line, in one walk
// of the parsed program: the findings with the role of each match, the
// paths it writes or deletes, and whether the walk followed everything.
// Decide turns it into the answer; nothing else reads the command again.
type Analysis struct {
	Command string `json:"command"`
	// Dir is the directory the command runs in ("" when unknown).
	Dir string `json:"dir,omitempty"`
	// Classification is the classification of the command declared reversible
	// and inward (Escalate applies another declaration).
	Classification
	Findings []Finding `json:"findings"`
	// Writes are the paths it writes, truncates, moves onto or deletes.
	Writes []Write `json:"writes,omitempty"`
	// Complete: every command the text runs was followed (nothing
	// unknown); Gaps says what was not.
	Complete bool     `json:"complete"`
	Gaps     []string `json:"gaps,omitempty"`

	// parsed are the parsed view's findings, including those merged into
	// a grammar label (a policy rule must cover each one).
	parsed []Finding
	// tool is set for a tool call that is not a shell command (a file
	// write): its name.
	tool string
	// ran are the simple commands the walk read (for the policy's extra
	// publishers).
	ran []Ran
}

// Ran is one simple command the analysis read, as it read it (wrappers
// gone, words normalised), in the role it runs in; Inert when it asks for
// help.
type Ran struct {
	Text  string
	Where Where
	Inert bool
}

// Tool is the name of the tool for a call that is not a shell command (a
// file write; AnalyzeWrite), "" for a command.
func (an Analysis) Tool() string { return an.tool }

// Ran are the simple commands the walk read, in the order it read them.
func (an Analysis) Ran() []Ran { return an.ran }

// Write is one path a command writes or deletes.
type Write struct {
	// Path is the path as the command names it, joined to the directory
	// it runs in and cleaned (absolute when that directory is known).
	// Empty for a program that may write where the gate cannot see.
	Path string `json:"path"`
	// Real is Path with symbolic links followed as far as it exists, when
	// that differs.
	Real string `json:"real,omitempty"`
	// Known is false when the path depends on something only the running
	// shell knows (a variable, a substitution, a directory a cd moved to
	// at run time), or the program may write anywhere.
	Known bool `json:"known"`
	// Delete: the command removes it (rm, unlink, shred, mv's source, find
	// -delete, rsync --delete).
	Delete bool `json:"delete,omitempty"`
	// Tree: somewhere under this directory (tar -x, unzip -d, find).
	Tree bool `json:"tree,omitempty"`
	// Glob: Path holds a pattern the shell expands.
	Glob bool   `json:"glob,omitempty"`
	By   string `json:"by"`
	// expanded: a pattern whose matches (the files that exist) are
	// recorded as writes of their own.
	expanded bool
}

// Expanded: w is a pattern whose matches (the files that exist) are
// writes of their own.
func (w Write) Expanded() bool { return w.expanded }

// Analyze reads a shell command that will run in directory dir (the hook
// event's cwd; "" when unknown): the grammar patterns on the raw text
// first (rule 0: their labels always stand), then one walk of the bash
// parse through everything the text would run — wrappers, lists, pipes,
// substitutions, nested shells, script files, functions, aliases, git
// with the configuration set along the line, find, xargs, interpreters'
// code — recording each finding with its role, each path written or
// deleted, and what it could not follow. Script files the command runs are
// read from dir (up to MaxScriptFile); the git model looks there to tell a
// file from a ref.
func Analyze(command, dir string) Analysis { return analyzeUnder(active, command, dir) }

// analyzeUnder is Analyze under the given limits.
func analyzeUnder(l limits, command, dir string) Analysis {
	deadline := l.start()
	v, raw := classifyRaw(command, true, false, deadline)
	a := newAnalyzer(deadline, dir)
	a.script(command, 0)
	a.uncalledFunctions()
	return a.result(command, dir, v, raw)
}

// AnalyzeWrite is the analysis of a tool that writes files itself (Write,
// Edit, an MCP server's write_file or move_file): no command, only the
// paths, relative ones read against dir.
func AnalyzeWrite(tool, dir string, paths ...string) Analysis {
	a := newAnalyzer(active.start(), dir)
	for _, p := range paths {
		a.addWrite(arg{val: p, known: true}, tool, false)
	}
	an := Analysis{Dir: dir, Classification: Classification{Reversible: true, Labels: []string{}}, Findings: []Finding{}, Writes: a.writes, Complete: true, tool: tool}
	return an
}

// Escalate applies a caller's declaration: classification only ever
// escalates, so a declared irreversible or outward action stays so.
func (an Analysis) Escalate(reversible, outward bool) Classification {
	v := an.Classification
	v.Labels = slices.Clone(v.Labels)
	v.Reversible = reversible && v.Reversible
	v.Outward = outward || v.Outward
	return v
}

// NeedsAuthorization: the command (declared reversible and inward) is
// irreversible or outward.
func (an Analysis) NeedsAuthorization() bool { return an.Classification.NeedsAuthorization() }

// PersonOnly is the first finding of a person's command that would run,
// if any.
func (an Analysis) PersonOnly() (Finding, bool) {
	for _, f := range an.Findings {
		if f.PersonOnly && !f.CarvedOut {
			return f, true
		}
	}
	return Finding{}, false
}

// analyzer walks a parsed command once and records what each command it
// would run does, where it writes, and what it could not follow.
type analyzer struct {
	parser   *syntax.Parser
	start    string // the directory the command starts in ("" unknown)
	src      string // the text being parsed (nested scripts have their own)
	nest     int    // current nesting of statements
	expanded map[*syntax.CmdSubst]arg
	deadline deadline
	expired  bool
	failed   bool // the top-level text did not parse
	commands int

	sc  *scope   // variables, functions, aliases: scoped like the shell's
	cwd cwdState // where a cd moved: scoped like the shell's

	// What persists on disk, whatever the scope: files written in this
	// line (a script written, then run) and git configuration set by
	// git config.
	files   map[string]vfile
	gitConf map[string]configValue

	// role is the role an executed finding gets where it stands: inside
	// code an interpreter runs it is inline code, inside the arguments of
	// a program the gate does not know it is unknown.
	role     Where
	roleNote string

	procs      map[string]*syntax.ProcSubst // process substitutions by their text
	calls      int                          // function calls followed
	called     map[*syntax.FuncDecl]bool
	readBytes  int // script file bytes read
	findings   []Finding
	seen       map[string]bool
	writes     []Write
	seenWrites map[string]bool
	gaps       []string
	// feed: the files a find -exec or xargs hands the command being read
	// (clobber.go).
	feed *feed
	ran  []Ran
}

// cwdState is the directory commands run in: rel is where cd moved
// relative to the start (or absolute), lost once a cd went somewhere only
// the running shell knows.
type cwdState struct {
	rel  string
	lost bool
}

// vfile is a file written earlier in the same command line.
type vfile struct {
	text  string
	known bool
}

type configValue struct {
	val   string
	known bool
}

func newAnalyzer(deadline deadline, dir string) *analyzer {
	return &analyzer{
		start: dir, deadline: deadline, sc: &scope{}, seen: map[string]bool{}, seenWrites: map[string]bool{},
		files: map[string]vfile{}, gitConf: map[string]configValue{}, procs: map[string]*syntax.ProcSubst{},
		called: map[*syntax.FuncDecl]bool{},
	}
}

func (a *analyzer) add(f Finding) {
	if f.Where == Executed && a.role != Executed {
		f.Where = a.role
		if f.Note == "" {
			f.Note = a.roleNote
		}
	}
	key := f.Label + "\x00" + f.Where.String()
	if f.CarvedOut {
		key += "\x00carved"
	}
	if a.seen[key] {
		// The same finding again: it counts once, but a policy rule
		// must cover every command it came from.
		if f.Command != "" {
			for i := range a.findings {
				if a.findings[i].Label == f.Label && a.findings[i].Where == f.Where && a.findings[i].CarvedOut == f.CarvedOut {
					a.findings[i].also = append(a.findings[i].also, Origin{Command: f.Command, Paths: f.Paths, UnknownPath: f.unknownPath})
				}
			}
		}
		return
	}
	a.seen[key] = true
	a.findings = append(a.findings, f)
}

// gap records something the analysis could not follow.
func (a *analyzer) gap(why string) {
	if len(a.gaps) < 32 && !slices.Contains(a.gaps, why) {
		a.gaps = append(a.gaps, why)
	}
}

// overTime reports (and records once) that the analysis ran out of time.
func (a *analyzer) overTime() bool {
	if !a.expired && a.deadline.passed() {
		a.expired = true
		a.unknown("analysis took too long", a.deadline.stopped())
	}
	return a.expired
}

func (a *analyzer) unknown(label, note string) {
	a.add(Finding{Label: "parsed: " + label, Where: Unknown, Note: note})
	a.gap(strings.TrimSpace(label + " " + note))
}

// withRole runs f with executed findings given role w (and note), unless
// a weaker role is already in force: inline code inside the arguments of
// an unknown program stays unknown.
func (a *analyzer) withRole(w Where, note string, f func()) {
	saved, savedNote := a.role, a.roleNote
	if a.role == Executed || w == Unknown && a.role == InlineCode {
		a.role, a.roleNote = w, note
	}
	f()
	a.role, a.roleNote = saved, savedNote
}

// input is what a command reads on standard input (or another
// descriptor), as far as we know it.
type input struct {
	kind int // noInput, literalInput, unknownInput, fileInput
	text string
}

const (
	noInput = iota
	literalInput
	unknownInput
	fileInput
)

// stdio is what one command reads: its standard input and the other
// descriptors its redirections opened for reading (bash 3<<<'…' /dev/fd/3).
type stdio struct {
	in  input
	fds map[int]input
}

// script parses src as bash and analyses every statement in it, in the
// current scope (source FILE, eval); callers that run it in a child shell
// open a scope first.
func (a *analyzer) script(src string, depth int) {
	if depth > MaxDepth {
		a.unknown(fmt.Sprintf("nesting deeper than %d levels", MaxDepth), "scripts inside scripts are not followed further")
		return
	}
	if n := bracketDepth(src); n > maxNesting {
		a.unknown(fmt.Sprintf("nesting deeper than %d levels", maxNesting), "not parsed")
		if depth == 0 {
			a.failed = true
		}
		return
	}
	if a.parser == nil {
		a.parser = syntax.NewParser(syntax.Variant(syntax.LangBash))
	}
	// Parse returns before the walk, so nested scripts can reuse the parser.
	// The reader stops feeding it when the budget is spent.
	f, err := a.parser.Parse(&budgetReader{r: strings.NewReader(src), a: a}, "")
	if err != nil {
		if depth == 0 {
			a.failed = true
		}
		a.unknown("cannot parse", oneLine(err.Error()))
		return
	}
	outer := a.src
	a.src = src
	a.stmts(f.Stmts, depth, stdio{})
	a.src = outer
}

// subshell runs f in a child shell: what it assigns, defines or cd's to
// does not outlive it.
func (a *analyzer) subshell(f func()) {
	saved, cwd := a.sc, a.cwd
	a.sc = &scope{parent: saved}
	f()
	a.sc, a.cwd = saved, cwd
}

// budgetReader hands the parser its input in small pieces and fails once
// the analysis budget is spent, so a slow parse stops too.
type budgetReader struct {
	r *strings.Reader
	a *analyzer
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.a.overTime() {
		return 0, errors.New(b.a.deadline.stopped())
	}
	if len(p) > 4096 {
		p = p[:4096]
	}
	return b.r.Read(p)
}

// bracketDepth is the deepest run of unclosed ( and { in src, quotes or
// not: an upper bound on how deeply the parser would have to recurse.
func bracketDepth(src string) int {
	depth, max := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{':
			depth++
			if depth > max {
				max = depth
			}
		case ')', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return max
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func (a *analyzer) stmts(list []*syntax.Stmt, d int, io stdio) {
	for _, s := range list {
		a.stmt(s, d, io)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt, d int, io stdio) {
	if s == nil {
		return
	}
	if a.overTime() {
		return
	}
	a.nest++
	defer func() { a.nest-- }()
	if a.nest == maxNesting+1 {
		a.unknown(fmt.Sprintf("nesting deeper than %d levels", maxNesting), "not followed further")
	}
	if a.nest > maxNesting {
		return
	}
	a.commands++
	if a.commands == maxCommands {
		a.unknown("too many commands to analyse", fmt.Sprintf("more than %d", maxCommands))
	}
	if a.commands >= maxCommands {
		return
	}
	io = a.redirects(s, d, io)
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		a.call(c, d, io, s)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			// Each side of a pipe runs in a child shell.
			a.subshell(func() { a.stmt(c.X, d, io) })
			out := a.output(c.X)
			a.subshell(func() { a.stmt(c.Y, d, stdio{in: out}) })
		} else {
			a.stmt(c.X, d, io)
			a.stmt(c.Y, d, io)
		}
	case *syntax.Subshell:
		a.subshell(func() { a.stmts(c.Stmts, d, io) })
	case *syntax.Block:
		a.stmts(c.Stmts, d, io)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			a.stmts(ic.Cond, d, io)
			a.stmts(ic.Then, d, io)
		}
	case *syntax.WhileClause:
		a.stmts(c.Cond, d, io)
		if names := readNames(c.Cond); len(names) > 0 && !c.Until {
			// while read f; do …: each line read is one more file.
			if what := a.feedingVars(names, nil, func() { a.stmts(c.Do, d, io) }); what != "" {
				a.add(Finding{Label: "parsed: while read " + names[len(names)-1] + " (" + what + ")", Where: Executed,
					Command: oneLine(a.nodeText(c)), unknownPath: true})
			}
			break
		}
		a.stmts(c.Do, d, io)
	case *syntax.ForClause:
		if c.Loop != nil {
			a.nested(c.Loop, d)
		}
		if wi, ok := c.Loop.(*syntax.WordIter); ok && wi.Name != nil {
			// The loop variable takes each word in turn: one value we
			// know is no value we know.
			a.sc.setVar(wi.Name.Value, arg{})
			one := false
			items := []arg{} // the list's words, nil when not all are literal
			for _, it := range wi.Items {
				for _, f := range a.fields(it) {
					if !f.known || f.glob {
						items = nil
						break
					}
					items = append(items, f)
				}
				if items == nil {
					break
				}
			}
			if len(wi.Items) == 1 {
				if f := a.fields(wi.Items[0]); len(f) == 1 && !f[0].glob && f[0].known {
					a.sc.setVar(wi.Name.Value, f[0])
					one = true
				}
			}
			if len(wi.Items) == 0 && !wi.InPos.IsValid() {
				// for NAME; do …: the positional parameters.
				if ps, ok := a.sc.params(); ok && len(ps) == 1 {
					a.sc.setVar(wi.Name.Value, ps[0])
					one = true
				}
			}
			if !one {
				// Many words, a pattern, or words known at run time:
				// the body runs once for each file.
				if len(wi.Items) == 0 {
					items = nil // the positional parameters
				}
				if what := a.feedingVars([]string{wi.Name.Value}, items, func() { a.stmts(c.Do, d, io) }); what != "" {
					a.add(Finding{Label: "parsed: for " + wi.Name.Value + " in … (" + what + ")", Where: Executed,
						Command: oneLine(a.nodeText(c)), unknownPath: true})
				}
				break
			}
		}
		a.stmts(c.Do, d, io)
	case *syntax.CaseClause:
		if c.Word != nil {
			a.nested(c.Word, d)
		}
		for _, item := range c.Items {
			// The patterns are expanded too: a substitution in one runs.
			for _, p := range item.Patterns {
				a.nested(p, d)
			}
			a.stmts(item.Stmts, d, io)
		}
	case *syntax.FuncDecl:
		names := c.Names
		if c.Name != nil {
			names = append(names, c.Name)
		}
		if len(names) == 0 {
			// An anonymous function runs where it stands.
			a.subshell(func() { a.stmt(c.Body, d, io) })
		}
		for _, n := range names {
			a.sc.setFunc(n.Value, c)
		}
	case *syntax.DeclClause:
		for _, as := range c.Args {
			a.assign(as, d, true)
		}
	case *syntax.TimeClause:
		a.stmt(c.Stmt, d, io)
	case *syntax.CoprocClause:
		a.subshell(func() { a.stmt(c.Stmt, d, io) })
	case *syntax.TestClause:
		a.nested(c, d)
	default:
		// Arithmetic clauses run nothing but their substitutions.
		a.nested(c, d)
	}
}

// redirects reads a statement's redirections: the files they write (and
// their content when it is a literal we can read, so a script written and
// then run is read as written) and what the command reads.
func (a *analyzer) redirects(s *syntax.Stmt, d int, io stdio) stdio {
	for _, r := range s.Redirs {
		if r.Word != nil {
			a.nested(r.Word, d)
		}
		fd := 0
		if r.N != nil {
			fd, _ = strconv.Atoi(r.N.Value)
		}
		var in input
		reads := false
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			reads = true
			in = input{kind: literalInput}
			if r.Hdoc != nil {
				a.nested(r.Hdoc, d)
				body := a.word(r.Hdoc)
				in.text = body.val
			}
		case syntax.WordHdoc:
			reads = true
			w := a.word(r.Word)
			in = input{kind: literalInput, text: w.val + "\n"}
		case syntax.RdrIn:
			reads = true
			in = a.fileInput(a.word(r.Word))
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrInOut:
			// Any descriptor: the shell opens (creates, truncates) the
			// file, and exec 3>>FILE leaves it open for what follows.
			w := a.word(r.Word)
			if a.feed.isItem(w) && (r.Op == syntax.RdrOut || r.Op == syntax.RdrAll || r.Op == syntax.RdrClob) {
				a.itemClobbered() // > "$1" under find -exec sh -c: each file emptied
			}
			a.addWrite(w, "redirection", false)
			content := input{kind: unknownInput}
			if r.N == nil || r.N.Value == "1" || r.N.Value == "2" || r.Op == syntax.RdrAll || r.Op == syntax.AppAll {
				content = a.output(s)
			}
			a.wrote(w, content, r.Op == syntax.AppOut || r.Op == syntax.AppAll)
		case syntax.DplOut:
			// >&FILE (not a descriptor number or "-") sends both streams to FILE.
			if w := a.word(r.Word); w.val != "-" && strings.Trim(w.val, "0123456789") != "" {
				a.addWrite(w, "redirection", false)
				a.wrote(w, input{kind: unknownInput}, false)
			}
		}
		if !reads {
			continue
		}
		if fd == 0 {
			io.in = in
			continue
		}
		if io.fds == nil {
			io.fds = map[int]input{}
		} else {
			io.fds = maps(io.fds)
		}
		io.fds[fd] = in
	}
	return io
}

func maps(m map[int]input) map[int]input {
	out := make(map[int]input, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// fileInput is what a command reads from a file: a file written earlier in
// the line (as written), else a file we do not read.
func (a *analyzer) fileInput(w arg) input {
	if p, ok := a.resolve(w); ok {
		if f, ok := a.files[p]; ok {
			if f.known {
				return input{kind: literalInput, text: f.text}
			}
			return input{kind: unknownInput}
		}
	}
	return input{kind: fileInput, text: w.val}
}

// nested analyses the command and process substitutions inside a node: they
// run wherever they appear (arguments, assignments, redirections,
// unquoted heredocs), each in a child shell.
func (a *analyzer) nested(n syntax.Node, d int) {
	syntax.Walk(n, func(node syntax.Node) bool {
		switch x := node.(type) {
		case *syntax.CmdSubst:
			a.subshell(func() { a.stmts(x.Stmts, d, stdio{}) })
			return false
		case *syntax.ProcSubst:
			if x.Pos().IsValid() && x.End().IsValid() {
				s, e := int(x.Pos().Offset()), int(x.End().Offset())
				if 0 <= s && s <= e && e <= len(a.src) {
					a.procs[a.src[s:e]] = x
				}
			}
			a.subshell(func() { a.stmts(x.Stmts, d, stdio{}) })
			return false
		}
		return true
	})
}

// assign records a variable assignment (record false: a prefix assignment
// that only sets one command's environment).
func (a *analyzer) assign(as *syntax.Assign, d int, record bool) {
	if as == nil {
		return
	}
	if as.Value != nil {
		a.nested(as.Value, d)
	}
	if as.Array != nil {
		a.nested(as.Array, d)
	}
	if !record || as.Name == nil {
		return
	}
	if as.Value == nil && as.Array == nil && !as.Naked {
		a.sc.setVar(as.Name.Value, arg{known: true})
		return
	}
	if as.Value == nil || as.Array != nil || as.Index != nil {
		if as.Naked {
			return // declare NAME, export NAME: the value stays
		}
		a.sc.setVar(as.Name.Value, arg{})
		return
	}
	w := a.word(as.Value)
	if as.Append {
		old, ok := a.sc.lookup(as.Name.Value)
		w = arg{val: old.val + w.val, known: ok && old.known && w.known}
	}
	a.sc.setVar(as.Name.Value, w)
}

// env is the environment a command gets from assignments before it (and
// env's or sudo's NAME=VALUE words): what git reads of it matters.
type env map[string]arg

func (a *analyzer) call(c *syntax.CallExpr, d int, io stdio, s *syntax.Stmt) {
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			a.assign(as, d, true)
		}
		return
	}
	// Assignments before a command only set its environment.
	var e env
	for _, as := range c.Assigns {
		a.assign(as, d, false)
		if as.Name != nil {
			if e == nil {
				e = env{}
			}
			if as.Value != nil {
				e[as.Name.Value] = a.word(as.Value)
			} else {
				e[as.Name.Value] = arg{known: true}
			}
		}
	}
	var argv []arg
	for i, w := range c.Args {
		if i%64 == 63 && a.overTime() {
			return
		}
		a.nested(w, d)
		words := []*syntax.Word{w}
		if n := braceCount(w); n > maxBraceGroups {
			// More brace groups than make a bounded number of words:
			// unknown, without expanding them.
			words = []*syntax.Word{{Parts: []syntax.WordPart{&syntax.CmdSubst{}}}}
		} else if n > 0 && syntax.SplitBraces(w) {
			words = a.braces(w)
		}
		for _, bw := range words {
			fs := a.fields(bw)
			if i == 0 && len(fs) > 0 && isPlainWord(bw) {
				fs[0].plain = true
			}
			argv = append(argv, fs...)
		}
	}
	if len(argv) == 0 {
		return
	}
	// An alias defined earlier replaces the command word (an unquoted
	// one: a quoted or escaped word bypasses it, as in the shell).
	if argv[0].plain && argv[0].known {
		if def, ok := a.sc.alias(argv[0].val); ok && d <= MaxDepth {
			rest, _ := joinArgs(argv[1:])
			a.script(def+" "+rest, d+1)
			return
		}
	}
	// IFS=x before eval, source or a function is in force while it runs
	// (before any other command it only reaches the child's environment,
	// and a child shell resets IFS).
	if v, ok := e["IFS"]; ok && argv[0].known {
		_, fn := a.sc.function(argv[0].val)
		if fn || argv[0].val == "eval" || argv[0].val == "source" || argv[0].val == "." {
			saved := a.sc
			a.sc = &scope{parent: saved}
			a.sc.setVar("IFS", v)
			defer func() { a.sc = saved }()
		}
	}
	// A function defined earlier runs its body with these arguments.
	if argv[0].known {
		if fn, ok := a.sc.function(argv[0].val); ok {
			a.callFunction(fn, argv[1:], d, io)
			return
		}
	}
	a.command(argv, d, io, e)
}

// maxBraceGroups bounds the { in one word the analysis expands: more make
// more words than maxBraceWords anyway.
const maxBraceGroups = 16

// braceCount counts the { in a word's unquoted literal parts.
func braceCount(w *syntax.Word) int {
	n := 0
	for _, p := range w.Parts {
		if lit, ok := p.(*syntax.Lit); ok {
			n += strings.Count(lit.Value, "{")
		}
	}
	return n
}

// isPlainWord: the word is unquoted literal text (alias expansion applies
// only to such a word).
func isPlainWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok || strings.Contains(lit.Value, `\`) {
			return false
		}
	}
	return true
}

// callFunction follows a call of a function defined earlier: its body
// runs with the call's arguments as $1, $2, … (a bounded number of
// calls; recursion stops at MaxDepth).
func (a *analyzer) callFunction(fn *syntax.FuncDecl, args []arg, d int, io stdio) {
	a.called[fn] = true
	a.calls++
	if a.calls > 64 || d > MaxDepth {
		a.unknown("too many function calls to follow", "")
		return
	}
	saved := a.sc
	a.sc = &scope{parent: saved, positional: args, hasPositional: true}
	a.stmt(fn.Body, d+1, io)
	a.sc = saved
}

// uncalledFunctions analyses the body of each function the script defines
// but does not call (a trap or a later line may): its arguments unknown.
func (a *analyzer) uncalledFunctions() {
	for sc := a.sc; sc != nil; sc = sc.parent {
		for _, fn := range sc.funcs {
			if fn != nil && !a.called[fn] {
				a.called[fn] = true
				a.subshell(func() { a.stmt(fn.Body, 1, stdio{}) })
			}
		}
	}
}

// output is what a pipeline stage writes, when it is a literal we can read:
// echo or printf of known words, or cat of a heredoc or of a file written
// earlier in the line.
func (a *analyzer) output(s *syntax.Stmt) input {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return input{kind: unknownInput}
	}
	var argv []string
	for _, w := range call.Args {
		for _, f := range a.fields(w) {
			if !f.known {
				return input{kind: unknownInput}
			}
			argv = append(argv, f.val)
		}
	}
	switch commandName(argv[0]) {
	case "echo", "printf":
		rest := argv[1:]
		escapes := commandName(argv[0]) == "printf"
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && len(rest[0]) <= 3 {
			if strings.Contains(rest[0], "e") {
				escapes = true
			}
			rest = rest[1:]
		}
		text := strings.Join(rest, " ")
		if escapes {
			text = strings.NewReplacer(`\n`, "\n", `%s`, " ", `\t`, "\t").Replace(text)
		}
		return input{kind: literalInput, text: text + "\n"}
	case "cat":
		if len(argv) == 1 {
			for _, r := range s.Redirs {
				if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil {
					return input{kind: literalInput, text: a.word(r.Hdoc).val}
				}
				if r.Op == syntax.WordHdoc {
					return input{kind: literalInput, text: a.word(r.Word).val + "\n"}
				}
			}
		}
		if len(argv) == 2 {
			if in := a.fileInput(arg{val: argv[1], known: true}); in.kind == literalInput {
				return in
			}
		}
	}
	return input{kind: unknownInput}
}

// resolve is where a path the command names lies: joined to the directory
// the command runs in. ok is false when that is not known.
func (a *analyzer) resolve(w arg) (string, bool) {
	p := w.val
	if !w.known || p == "" {
		return p, false
	}
	if strings.HasPrefix(p, "~") {
		return p, false
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), true
	}
	if a.cwd.lost {
		return p, false
	}
	base := a.cwd.rel
	if !filepath.IsAbs(base) && a.start != "" {
		base = filepath.Join(a.start, base)
	}
	return filepath.Join(base, p), true
}

// dirNow is the directory commands run in now, "" when unknown.
func (a *analyzer) dirNow() string {
	if a.cwd.lost {
		return ""
	}
	if filepath.IsAbs(a.cwd.rel) {
		return a.cwd.rel
	}
	if a.start == "" {
		return ""
	}
	return filepath.Join(a.start, a.cwd.rel)
}

// cd follows a directory change (cd, pushd) for the commands after it; a
// change to somewhere only the running shell knows loses the directory.
func (a *analyzer) cd(rest []arg) {
	ops := skipOptions(rest, optSpec{})
	switch {
	case len(ops) == 0:
		a.cwd = cwdState{lost: true} // $HOME
	case !ops[0].known || ops[0].val == "-" || strings.HasPrefix(ops[0].val, "~") || strings.HasPrefix(ops[0].val, "+") || ops[0].glob:
		a.cwd = cwdState{lost: true}
	case filepath.IsAbs(ops[0].val):
		a.cwd = cwdState{rel: filepath.Clean(ops[0].val)}
	case !a.cwd.lost:
		a.cwd.rel = filepath.Join(a.cwd.rel, ops[0].val)
	}
}
