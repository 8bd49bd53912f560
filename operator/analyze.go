package operator

import (
	"fmt"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// MaxDepth bounds recursion into scripts inside scripts (sh -c, eval, a git
// alias, a heredoc fed to a shell). Deeper nesting fails closed.
const MaxDepth = 5

// maxCommands bounds the work on one input; beyond it we fail closed rather
// than keep a hook waiting.
const maxCommands = 5000

// AnalysisBudget bounds the time Classify spends on one input, every phase
// together (raw scan, parse, analysis); past it each phase stops and fails
// closed, so any input is answered within the budget plus one regexp match
// timeout at most. It leaves a hook process room to start and answer within
// 250 ms.
const AnalysisBudget = 150 * time.Millisecond

// maxNesting bounds how deeply commands may nest (subshells, substitutions,
// blocks) before the analysis stops following them and asks. A text whose
// parentheses or braces nest deeper is not parsed at all: the parser's cost
// grows with the square of the depth.
const maxNesting = 200

// maxCommandText bounds the text one command's patterns run on; the raw
// scan still sees everything.
const maxCommandText = 64 << 10

// analyzer walks a parsed command and records what each command it would
// run does.
type analyzer struct {
	parser   *syntax.Parser
	dir      string // the working directory the commands run in ("" unknown)
	src      string // the text being parsed (nested scripts have their own)
	nest     int    // current nesting of statements
	expanded map[*syntax.CmdSubst]arg
	deadline time.Time
	expired  bool
	vars     map[string]string // literal assignments seen so far
	findings []Finding
	seen     map[string]bool // label+where already recorded
	failed   bool            // the top-level text did not parse
	commands int
}

func newAnalyzer(deadline time.Time) *analyzer {
	return &analyzer{vars: map[string]string{}, seen: map[string]bool{}, deadline: deadline}
}

func (a *analyzer) add(f Finding) {
	key := f.Label + "\x00" + f.Where.String()
	if f.CarvedOut {
		key += "\x00carved"
	}
	if a.seen[key] {
		return
	}
	a.seen[key] = true
	a.findings = append(a.findings, f)
}

// overTime reports (and records once) that the analysis ran out of time.
func (a *analyzer) overTime() bool {
	if !a.expired && time.Now().After(a.deadline) {
		a.expired = true
		a.unknown("analysis took too long", fmt.Sprintf("stopped after %v", AnalysisBudget))
	}
	return a.expired
}

func (a *analyzer) unknown(label, note string) {
	a.add(Finding{Label: "parsed: " + label, Where: Unknown, Note: note, grammar: -1})
}

// input is what a command reads on standard input, as far as we know it.
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

// script parses src as bash and analyses every statement in it.
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
	a.stmts(f.Stmts, depth, input{})
	a.src = outer
}

// budgetReader hands the parser its input in small pieces and fails once
// the analysis budget is spent, so a slow parse stops too.
type budgetReader struct {
	r *strings.Reader
	a *analyzer
}

var errBudget = fmt.Errorf("stopped after %v", AnalysisBudget)

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.a.overTime() {
		return 0, errBudget
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

func (a *analyzer) stmts(list []*syntax.Stmt, d int, in input) {
	for _, s := range list {
		a.stmt(s, d, in)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt, d int, in input) {
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
	for _, r := range s.Redirs {
		if r.Word != nil {
			a.nested(r.Word, d)
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc == nil {
				in = input{kind: literalInput}
				continue
			}
			a.nested(r.Hdoc, d)
			body := a.word(r.Hdoc)
			in = input{kind: literalInput, text: body.val}
		case syntax.WordHdoc:
			w := a.word(r.Word)
			in = input{kind: literalInput, text: w.val}
		case syntax.RdrIn:
			in = input{kind: fileInput}
		}
	}
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		a.call(c, d, in)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			a.stmt(c.X, d, in)
			a.stmt(c.Y, d, a.output(c.X))
		} else {
			a.stmt(c.X, d, in)
			a.stmt(c.Y, d, in)
		}
	case *syntax.Subshell:
		a.stmts(c.Stmts, d, in)
	case *syntax.Block:
		a.stmts(c.Stmts, d, in)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			a.stmts(ic.Cond, d, in)
			a.stmts(ic.Then, d, in)
		}
	case *syntax.WhileClause:
		a.stmts(c.Cond, d, in)
		a.stmts(c.Do, d, in)
	case *syntax.ForClause:
		if c.Loop != nil {
			a.nested(c.Loop, d)
		}
		a.stmts(c.Do, d, in)
	case *syntax.CaseClause:
		if c.Word != nil {
			a.nested(c.Word, d)
		}
		for _, item := range c.Items {
			a.stmts(item.Stmts, d, in)
		}
	case *syntax.FuncDecl:
		a.stmt(c.Body, d, input{})
	case *syntax.DeclClause:
		for _, as := range c.Args {
			a.assign(as, d, true)
		}
	case *syntax.TimeClause:
		a.stmt(c.Stmt, d, in)
	case *syntax.CoprocClause:
		a.stmt(c.Stmt, d, in)
	default:
		// Arithmetic and test clauses run nothing but their substitutions.
		a.nested(c, d)
	}
}

// nested analyses the command and process substitutions inside a node: they
// run wherever they appear (arguments, assignments, redirections,
// unquoted heredocs).
func (a *analyzer) nested(n syntax.Node, d int) {
	syntax.Walk(n, func(node syntax.Node) bool {
		switch x := node.(type) {
		case *syntax.CmdSubst:
			a.stmts(x.Stmts, d, input{})
			return false
		case *syntax.ProcSubst:
			a.stmts(x.Stmts, d, input{})
			return false
		}
		return true
	})
}

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
	if as.Value == nil || as.Array != nil || as.Index != nil || as.Append {
		delete(a.vars, as.Name.Value)
		return
	}
	if w := a.word(as.Value); w.known {
		a.vars[as.Name.Value] = w.val
	} else {
		delete(a.vars, as.Name.Value)
	}
}

func (a *analyzer) call(c *syntax.CallExpr, d int, in input) {
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			a.assign(as, d, true)
		}
		return
	}
	// Assignments before a command only set its environment.
	for _, as := range c.Assigns {
		a.assign(as, d, false)
	}
	var argv []arg
	for _, w := range c.Args {
		a.nested(w, d)
		argv = append(argv, a.fields(w)...)
	}
	if len(argv) > 0 {
		a.command(argv, d, in)
	}
}

// output is what a pipeline stage writes, when it is a literal we can read:
// echo or printf of known words, or cat of a heredoc.
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
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && len(rest[0]) <= 3 {
			rest = rest[1:]
		}
		text := strings.Join(rest, " ")
		return input{kind: literalInput, text: strings.NewReplacer(`\n`, "\n", `%s`, " ").Replace(text)}
	case "cat":
		if len(argv) == 1 {
			for _, r := range s.Redirs {
				if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil {
					return input{kind: literalInput, text: a.word(r.Hdoc).val}
				}
				if r.Op == syntax.WordHdoc {
					return input{kind: literalInput, text: a.word(r.Word).val}
				}
			}
		}
	}
	return input{kind: unknownInput}
}
