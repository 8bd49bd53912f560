package shell

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
func Analyze(command, dir string) Analysis { return analyzeUnder(active, command, dir, Session{}) }

// AnalyzeIn is Analyze for a command of the session s: home, $NAME in
// paths, git's and go's settings files are the ones the command will see,
// and a test file is the project's own only when it is as it was both in
// the index and when the session started.
func AnalyzeIn(command, dir string, s Session) Analysis {
	return analyzeUnder(active, command, dir, s)
}

// analyzeUnder is Analyze under the given limits.
func analyzeUnder(l limits, command, dir string, s Session) Analysis {
	deadline := l.start()
	if len(command) > MaxCommand {
		// Past the size the gate reads within its budget: unknown,
		// without parsing it (asked attended, refused unattended).
		a := newAnalyzer(deadline, dir, s)
		a.unknown(fmt.Sprintf("a command longer than %d KiB", MaxCommand>>10), "the gate reads commands up to that size: put a longer one in a script file")
		return a.result(command, dir, Classification{Reversible: true, Labels: []string{}}, nil)
	}
	v, raw := classifyRaw(command, true, false, deadline)
	a := newAnalyzer(deadline, dir, s)
	a.script(command, 0)
	a.uncalledFunctions()
	return a.result(command, dir, v, raw)
}

// AnalyzeWrite is the analysis of a tool that writes files itself (Write,
// Edit, an MCP server's write_file or move_file): no command, only the
// paths, relative ones read against dir.
func AnalyzeWrite(tool, dir string, paths ...string) Analysis {
	a := newAnalyzer(active.start(), dir, Session{})
	for _, p := range paths {
		a.addWrite(arg{val: p, known: true}, tool, false)
	}
	an := Analysis{Dir: dir, Classification: Classification{Reversible: true, Labels: []string{}}, Findings: []Finding{}, Writes: a.writes, Complete: true, tool: tool}
	return an
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
		a.unknown("cannot parse", firstLine(err.Error()))
		return
	}
	if depth == 0 {
		a.words, _ = literalWords(f)
	}
	outer := a.src
	a.src = src
	a.stmts(f.Stmts, depth, stdio{})
	a.src = outer
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

func (a *analyzer) stmts(list []*syntax.Stmt, d int, io stdio) {
	for _, s := range list {
		a.stmt(s, d, io)
	}
}

// stmt analyses one statement: its redirections, then its command, within
// the limits on nesting and on the number of commands.
func (a *analyzer) stmt(s *syntax.Stmt, d int, io stdio) {
	if s == nil {
		return
	}
	if a.overTime() {
		return
	}
	a.nest++
	defer func() { a.nest-- }()
	if !a.withinLimits() {
		return
	}
	io = a.redirects(s, d, io)
	a.cmd(s, d, io)
}

// withinLimits counts one more statement and says whether it is within
// the nesting and command limits (the first past each is recorded as
// unknown).
func (a *analyzer) withinLimits() bool {
	if a.nest == maxNesting+1 {
		a.unknown(fmt.Sprintf("nesting deeper than %d levels", maxNesting), "not followed further")
	}
	if a.nest > maxNesting {
		return false
	}
	a.commands++
	if a.commands == maxCommands {
		a.unknown("too many commands to analyse", fmt.Sprintf("more than %d", maxCommands))
	}
	return a.commands < maxCommands
}

// cmd analyses a statement's command, each kind as the shell runs it.
func (a *analyzer) cmd(s *syntax.Stmt, d int, io stdio) {
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		a.call(c, d, io, s)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			// Each side of a pipe runs in a child shell.
			a.subshell(func() { a.stmt(c.X, d, io) })
			out := a.output(c.X)
			if out.kind == unknownInput {
				out.src = a.nodeText(c.X)
			}
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
		a.whileLoop(c, d, io)
	case *syntax.ForClause:
		a.forLoop(c, d, io)
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
	default:
		// A test clause, an arithmetic clause: they run nothing but their
		// substitutions.
		a.nested(c, d)
	}
}

// whileLoop: while read f; do …: each line read is one more file.
func (a *analyzer) whileLoop(c *syntax.WhileClause, d int, io stdio) {
	a.stmts(c.Cond, d, io)
	if names := readNames(c.Cond); len(names) > 0 && !c.Until {
		if what := a.feedingVars(names, nil, func() { a.stmts(c.Do, d, io) }); what != "" {
			a.add(Finding{Label: "parsed: while read " + names[len(names)-1] + " (" + what + ")", Where: Executed,
				Command: firstLine(a.nodeText(c)), unknownPath: true})
		}
		return
	}
	a.stmts(c.Do, d, io)
}

// forLoop: the loop variable takes each word in turn; one value we know
// is no value we know. With many words, a pattern, or words known at run
// time the body runs once for each file.
func (a *analyzer) forLoop(c *syntax.ForClause, d int, io stdio) {
	if c.Loop != nil {
		a.nested(c.Loop, d)
	}
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok || wi.Name == nil || a.loopValue(wi) {
		a.stmts(c.Do, d, io)
		return
	}
	var items []arg // the list's words, nil when not all are literal
	if len(wi.Items) > 0 {
		items = a.literalItems(wi.Items)
	}
	if what := a.feedingVars([]string{wi.Name.Value}, items, func() { a.stmts(c.Do, d, io) }); what != "" {
		a.add(Finding{Label: "parsed: for " + wi.Name.Value + " in … (" + what + ")", Where: Executed,
			Command: firstLine(a.nodeText(c)), unknownPath: true})
	}
}

// loopValue sets a for loop's variable: to its one value when the loop
// has one (one literal word, or one positional parameter), else to a
// value known only at run time. It says whether there was one.
func (a *analyzer) loopValue(wi *syntax.WordIter) bool {
	a.sc.setVar(wi.Name.Value, arg{})
	if len(wi.Items) == 1 {
		if f := a.fields(wi.Items[0]); len(f) == 1 && !f[0].glob && f[0].known {
			a.sc.setVar(wi.Name.Value, f[0])
			return true
		}
	}
	if len(wi.Items) == 0 && !wi.InPos.IsValid() {
		// for NAME; do …: the positional parameters.
		if ps, ok := a.sc.params(); ok && len(ps) == 1 {
			a.sc.setVar(wi.Name.Value, ps[0])
			return true
		}
	}
	return false
}

// literalItems are a word list's fields when every one is a literal the
// shell does not expand; nil otherwise.
func (a *analyzer) literalItems(words []*syntax.Word) []arg {
	items := []arg{}
	for _, it := range words {
		for _, f := range a.fields(it) {
			if !f.known || f.glob {
				return nil
			}
			items = append(items, f)
		}
	}
	return items
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
			a.devNet(w, s)
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
		io = io.with(fd, in)
	}
	// N<&M: descriptor N reads what M does (read after the others, so
	// bash <&3 3<<<'…' is read as its text whichever order bash takes).
	for _, r := range s.Redirs {
		if r.Op != syntax.DplIn {
			continue
		}
		fd, from := 0, a.word(r.Word)
		if r.N != nil {
			fd, _ = strconv.Atoi(r.N.Value)
		}
		io = io.with(fd, a.descriptor(io, from))
	}
	if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) == 1 && a.word(call.Args[0]).val == "exec" {
		// exec with redirections only: the descriptors stay open for
		// what follows.
		a.openFds = io.fds
	}
	return io
}

// with is io with descriptor fd reading in.
func (io stdio) with(fd int, in input) stdio {
	if fd == 0 {
		io.in = in
		return io
	}
	if io.fds == nil {
		io.fds = map[int]input{}
	} else {
		io.fds = maps(io.fds)
	}
	io.fds[fd] = in
	return io
}

// descriptor is what descriptor w (a number, for <&N) reads: the
// command's own, or one exec left open; unknown otherwise.
func (a *analyzer) descriptor(io stdio, w arg) input {
	n, err := strconv.Atoi(w.val)
	switch {
	case !w.known || err != nil:
		return input{kind: unknownInput}
	case n == 0:
		return io.in
	}
	if in, ok := io.fds[n]; ok {
		return in
	}
	if in, ok := a.openFds[n]; ok {
		return in
	}
	return input{kind: unknownInput}
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

// Classify is the classification of a shell command with the caller's
// declaration: Analyze, then Escalate. It only ever escalates: a match
// forces irreversible (and ORs its outward flag); nothing relaxes a
// declaration.
func Classify(command string, reversible, outward bool) Classification {
	return Analyze(command, "").Escalate(reversible, outward)
}

// result turns the walk into the Analysis: the raw matches first, in
// grammar order, each with the role the parsed view found for it (rule 0:
// their labels always stand), then the parsed view's own findings.
func (a *analyzer) result(command, dir string, v Classification, raw []rawMatch) Analysis {
	an := Analysis{Command: command, Dir: dir, Classification: v, Findings: []Finding{}, parsed: a.findings, ran: a.ran, words: a.words}
	seen := map[string]bool{}
	for _, l := range v.Labels {
		seen[l] = true
	}
	for i, m := range raw {
		if !m.found {
			continue
		}
		p := &irreversiblePatterns[i]
		f := Finding{Label: p.Label, Outward: p.Outward, CarvedOut: m.carved, grammarNo: i + 1, Where: Data}
		switch {
		case m.timedOut:
			f.Where, f.Note = Unknown, errTimeout.Error()
		case a.failed:
			f.Where, f.Note = Unknown, "the command could not be parsed"
		default:
			// The role is the strongest the parsed view saw for this
			// pattern; the carve-out holds only if it covers every
			// command that matched.
			for _, pf := range a.findings {
				if pf.grammarNo != i+1 {
					continue
				}
				if whereRank[pf.Where] < whereRank[f.Where] {
					f.Where, f.Note, f.Command, f.Paths = pf.Where, "", pf.Command, pf.Paths
					if pf.Where != Executed {
						f.Note = pf.Note
					}
				}
				if !pf.CarvedOut {
					f.CarvedOut = false
				}
			}
		}
		if f.Where == Data {
			f.Note = "in data: no command that runs matches"
		}
		an.Findings = append(an.Findings, f)
	}
	// why: the reference's carve-outs and labels, a raw label that only
	// matched data marked so, then the parsed view's labels.
	var why []string
	for _, c := range v.Carveouts {
		why = append(why, "carve-out: "+c+" (still asks)")
	}
	for _, f := range an.Findings {
		switch f.Where {
		case Data:
			why = append(why, f.Label+" (in data)")
		case Unknown, DryRun, InlineCode:
			why = append(why, f.Label+" ("+f.Note+")")
		default:
			why = append(why, f.Label)
		}
	}
	for _, f := range a.findings {
		if f.grammarNo > 0 && raw[f.grammarNo-1].found {
			// Same class as a grammar label already listed; it only told
			// us where that match runs (used above).
			continue
		}
		an.Findings = append(an.Findings, f)
		an.Reversible = false
		an.Outward = an.Outward || f.Outward
		if !seen[f.Label] {
			seen[f.Label] = true
			an.Labels = append(an.Labels, f.Label)
			w := f.Label
			if f.Note != "" {
				w += " (" + f.Note + ")"
			}
			why = append(why, w)
		}
	}
	an.Why = strings.Join(why, "; ")
	an.Writes = a.writes
	an.Gaps = a.gaps
	an.Reads = a.reads
	an.Complete = len(a.gaps) == 0
	for _, f := range an.Findings {
		if f.Where == Unknown {
			an.Complete = false
		}
	}
	return an
}
