package shell

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The analyzer's state and what it records: findings, gaps, the
// directory and scope a command runs in, what it reads on its descriptors.
// Everything the programs' models share; the walk itself is analyze.go
// and programs.go.

// MaxDepth bounds recursion into scripts inside scripts (sh -c, eval, a git
// alias, a heredoc fed to a shell, a script file). Deeper nesting fails
// closed.
const MaxDepth = 5

// maxCommands bounds the work on one input; beyond it we fail closed rather
// than keep a hook waiting.
const maxCommands = 5000

// maxNesting bounds how deeply commands may nest (subshells, substitutions,
// blocks) before the analysis stops following them. A text whose
// parentheses or braces nest deeper is not parsed at all: the parser's cost
// grows with the square of the depth.
const maxNesting = 200

// MaxCommand is the longest command line the analysis reads; a longer
// one is unknown without being parsed, so that any input is answered
// within the budget however loaded the machine (a longer program belongs
// in a script file, which is read up to MaxScriptFile).
const MaxCommand = 128 << 10

// MaxScriptFile is the largest script file a command runs (bash FILE,
// ./FILE, source FILE, python3 FILE) that the analysis reads; a larger one
// is unknown. maxScriptBytes bounds all the files one analysis reads.
const (
	MaxScriptFile  = 256 << 10
	maxScriptBytes = 1 << 20
)

// Session is what the analysis is told of the session a command runs in,
// where the process answering is not the session itself (laserbrain run
// answers for its agent). The zero Session is this process's.
type Session struct {
	// Env looks up a variable of the session's environment (nil:
	// os.LookupEnv).
	Env Env
	// Started tells how a file stood when the session started (nil:
	// unknown).
	Started Started
}

// Env looks up a variable of the environment a command will run in.
type Env func(name string) (string, bool)

// Started tells how the file at path stood when the session started:
// known is false when nothing was recorded for its work tree, found false
// when it was not there; else its git blob id and size.
type Started func(path string) (id []byte, size int64, found, known bool)

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

	// env is the environment the command will run in (the session's,
	// which is not always this process's); started how files stood when
	// the session started (nil: unknown).
	env     Env
	started Started

	sc  *scope   // variables, functions, aliases: scoped like the shell's
	cwd cwdState // where a cd moved: scoped like the shell's

	// What persists on disk, whatever the scope: files written in this
	// line (a script written, then run) and git configuration set by
	// git config.
	files   map[string]vfile
	gitConf map[string]configValue
	// openFds are the descriptors exec opened for reading (exec 3<<<…).
	openFds map[int]input

	// role is the role an executed finding gets where it stands: inside
	// code an interpreter runs it is inline code, inside the arguments of
	// a program the gate does not know it is unknown.
	role     Where
	roleNote string
	// step is where the text being read came from when a command hands
	// its work to a file's text (steps.go): the findings' note.
	step string

	procs       map[string]*syntax.ProcSubst // process substitutions by their text
	calls       int                          // function calls followed
	called      map[*syntax.FuncDecl]bool
	readBytes   int        // script file bytes read
	secretBytes int        // bytes of sent files read for secrets
	reads       []FileRead // files read from disk, with what they held
	// indexes are the git indexes a test run compared test files with,
	// by git directory (testruns.go).
	indexes    map[string]gitIndex
	findings   []Finding
	seen       map[string]bool
	writes     []Write
	seenWrites map[string]bool
	gaps       []string
	// feed: the files a find -exec or xargs hands the command being read
	// (clobber.go).
	feed *feed
	// walk is the analyzer itself, as the programs' models call it back.
	walk walker
	ran  []Ran
	// words are the top-level command's words when it is one simple
	// command of literal words.
	words []string
}

// walker is the walk over a command line as a program's model calls it
// back: a model reads its own program's words and hands what the program
// runs — a script, a command, words it cannot explain — back to the walk.
// The analyzer is its own walker (newAnalyzer sets it); the models reach
// it through this interface, so they depend on what the walk does and
// not on the files that do it (analyze.go, programs.go), which call the
// models.
type walker interface {
	script(src string, depth int)
	command(argv []arg, d int, io stdio, e env)
	unknownProgram(c *cmdCall, text string)
}

func newAnalyzer(deadline deadline, dir string, s Session) *analyzer {
	e := s.Env
	if e == nil {
		e = os.LookupEnv
	}
	a := &analyzer{
		env: e, started: s.Started, start: dir, deadline: deadline, sc: &scope{}, seen: map[string]bool{}, seenWrites: map[string]bool{},
		files: map[string]vfile{}, gitConf: map[string]configValue{}, procs: map[string]*syntax.ProcSubst{},
		called: map[*syntax.FuncDecl]bool{},
	}
	a.walk = a
	return a
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

// feed is what find -exec, xargs -I or parallel hand the command they run:
// each file they find or read, spelled mark in its arguments.
type feed struct {
	mark string
	// names: variables that take each item in turn (a for or while read
	// loop): $NAME and ${NAME} are the item.
	names []string
	// items are the words a loop over a literal list hands its variable
	// (nil: files the gate cannot list — find's matches, a pattern, input).
	items []arg
	// what the command does to each item it is fed, when it destroys
	// something of it (clobberLabel, modesLabel); "" nothing.
	what string
}

// cmdCall is one simple command with its wrappers gone.
type cmdCall struct {
	name string
	args []arg
	d    int
	io   stdio
	env  env
}

// input is what a command reads on standard input (or another
// descriptor), as far as we know it.
type input struct {
	kind int // noInput, literalInput, unknownInput, fileInput
	text string
	// src is the command that writes an unknown input (the stage before
	// it in a pipe), as written.
	src string
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

func maps(m map[int]input) map[int]input {
	out := make(map[int]input, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (a *analyzer) add(f Finding) {
	if f.Where == Executed && a.role != Executed {
		f.Where = a.role
		if f.Note == "" {
			f.Note = a.roleNote
		}
	}
	if f.Note == "" {
		f.Note = a.step
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

func (a *analyzer) unknown(label, note string) {
	a.add(Finding{Label: "parsed: " + label, Where: Unknown, Note: note})
	a.gap(strings.TrimSpace(label + " " + note))
}

// overTime reports (and records once) that the analysis ran out of time.
func (a *analyzer) overTime() bool {
	if !a.expired && a.deadline.passed() {
		a.expired = true
		a.unknown("analysis took too long", a.deadline.stopped())
	}
	return a.expired
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

// subshell runs f in a child shell: what it assigns, defines or cd's to
// does not outlive it.
func (a *analyzer) subshell(f func()) {
	saved, cwd := a.sc, a.cwd
	a.sc = &scope{parent: saved}
	f()
	a.sc, a.cwd = saved, cwd
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

// holds: a file is there to lose, on disk or written earlier in the line
// (a file that does not exist is created: nothing is lost).
func (a *analyzer) holds(p string) bool {
	if _, ok := a.files[p]; ok {
		return true
	}
	if !filepath.IsAbs(p) {
		return true // where it lies is not known
	}
	_, err := os.Lstat(p)
	return err == nil
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

// placed: the analysis knows where it runs, or a cd moved it somewhere
// only the running shell knows (then a file it reads there is unknown).
// An analysis given no directory at all (a command classified on its
// own) reads no files of a project.
func (a *analyzer) placed() bool {
	return a.start != "" || a.cwd.lost
}

// gitIndex is one repository's index as a test run reads it.
type gitIndex struct {
	entries map[string]indexed
	sha256  bool
}

type indexed struct {
	id   []byte
	size uint32
}

// readFrom records that the analysis read data from path on disk.
func (a *analyzer) readFrom(path string, data []byte) {
	sum := sha256.Sum256(data)
	r := FileRead{Path: path, SHA256: hex.EncodeToString(sum[:])}
	if !slices.Contains(a.reads, r) {
		a.reads = append(a.reads, r)
	}
}
