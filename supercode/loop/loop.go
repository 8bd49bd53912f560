package loop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/tty"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// The statuses of the loop's protocol (doc.go says when each is
// returned): what SCRIPT sees from the builtins (escalated, transport,
// malformed, config) and from a command the gate refused (refused, as a
// shell reports a command it found and could not run), and what the loop
// ends with when it stops SCRIPT itself (exhausted, config, internal). The
// journal records them; laserbrain loop exits with SCRIPT's status, so the
// project's exit-code table (internal/cli) lists them for it under these
// names. The loop's own errors name their kind instead (Error).
const (
	statusEscalated = 3
	statusExhausted = 4
	statusTransport = 5
	statusMalformed = 6
	statusConfig    = 7
	statusInternal  = 8
	statusRefused   = 126
)

// InlineScript is the name of a run whose SCRIPT was given as text (-c).
const InlineScript = "-c"

// Defaults that stop runaways.
const (
	DefaultMaxIters = 25
	DefaultTimeout  = 6 * time.Hour
	// noopLimit is how many agent calls in a row may change nothing while
	// there is work to do before the loop stops.
	noopLimit = 2
)

const (
	roleAgent = "agent"
	roleJudge = "judge"
)

// Options are one `laserbrain loop` invocation.
type Options struct {
	Script string // SCRIPT; with Resume, when given, it must hold the bytes of the run's own copy, which is replayed
	// Inline is SCRIPT's text itself (laserbrain loop -c TEXT), in place
	// of a file; the run is named "-c".
	Inline string
	Args   []string // SCRIPT's positional parameters
	Settings
	Resume string // a run id to resume
	// Set names the settings given explicitly (flag names); with Resume
	// they override the run's own.
	Set map[string]bool

	Dir  string // working directory ("" = the current one)
	Self string // the laserbrain binary the hooks and the MCP server run as
	// Home is where runs live ("" = $LASERBRAIN_HOME/loop).
	Home string

	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Env            []string // SCRIPT's base environment (nil: this process's)

	Tracker *agentrun.Tracker
	// Confine, when set, puts each session's command behind the kernel's
	// boundary before it starts (cmd is rewritten; see Session), as
	// laserbrain run confines its agent: it returns a note and what to
	// undo once the session has exited. Unconfined, when it is not set,
	// says why; either is recorded on the loop's run.
	Confine    func(cmd *exec.Cmd, s Session) (note string, done func(), err error)
	Unconfined string
	// HandleSignals: INT, TERM and HUP stop the run (exit 128+N, the step
	// in flight killed, resumable); a second one kills at once.
	HandleSignals bool
}

// Result is how a run ended; Summary renders it.
type Result struct {
	RunID    string `json:"run"`
	Dir      string `json:"journal"` // the run directory
	Script   string `json:"script"`
	ExitCode int    `json:"exit_code"`
	// Reason says why the run stopped: SCRIPT's own exit, or the loop's
	// stop (a budget, a signal, a config error found mid-run).
	Reason      string  `json:"reason"`
	Stopped     bool    `json:"stopped"` // the loop stopped SCRIPT (Reason says why)
	Iterations  int     `json:"iterations"`
	Calls       []Count `json:"calls"`
	Verdict     string  `json:"final_verdict,omitempty"` // the final verdict's summary
	Mode        string  `json:"judge_mode,omitempty"`    // the final judge call's: single, soak or jury
	Passed      int     `json:"passed,omitempty"`        // soak passes or jurors passed,
	Of          int     `json:"of,omitempty"`            // of how many
	Suggestions int     `json:"suggestions"`
}

// DefaultHome is where runs live: loop/ in laserbrain's home
// ($LASERBRAIN_HOME, else under the user config dir).
func DefaultHome() (string, error) { return localstore.InHome("loop") }

// ErrorKind is what kind of failure an Error is, by its name in the
// project's exit-code table.
type ErrorKind string

// The kinds of the loop's own failures.
const (
	KindUsage   ErrorKind = "usage"   // the call could not be acted on; nothing ran
	KindConfig  ErrorKind = "config"  // agents.conf or SCRIPT is invalid, a service unusable
	KindFailure ErrorKind = "failure" // the journal, the run directory, the store or a checkpoint failed
)

// Error is a failure before or outside SCRIPT.
type Error struct {
	Kind ErrorKind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ExitKind names the failure as the exit-code table does.
func (e *Error) ExitKind() string { return string(e.Kind) }

// fileKind is the kind of an error reading a file the caller named: one
// that is missing, not permitted or not a file is the call's mistake
// (usage); anything else is otherwise.
func fileKind(err error, otherwise ErrorKind) ErrorKind {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) {
		return KindUsage
	}
	return otherwise
}

func fail(kind ErrorKind, format string, a ...any) error {
	return &Error{Kind: kind, Err: fmt.Errorf(format, a...)}
}

// haltError is the loop stopping SCRIPT: a budget, a config error found
// mid-run, or the machinery failing.
type haltError struct {
	code   int
	reason string
}

func (h *haltError) Error() string { return h.reason }

// signalled is the run stopped by a signal.
type signalled struct{ sig syscall.Signal }

func (s *signalled) Error() string { return "interrupted by " + signalName(s.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// Loop is one run in progress.
type Loop struct {
	o        Options
	cfg      *Config
	id       string
	dir      string // the run directory
	work     string // the working directory
	git      *repo  // nil outside a repository
	verifier string // the working directory's ./ci
	file     *syntax.File
	meta     Meta
	j        *journal
	sup      *agentrun.Tracker
	fleetID  string
	seed     string
	// seedSource is where the seed came from (the run record says).
	seedSource string
	self       string

	stdin          *os.File
	interactive    bool // stdin is a terminal
	stdout, stderr io.Writer
	errMu          sync.Mutex // our own notes on stderr

	mu       sync.Mutex // st, step, posCount, replay
	st       *state
	step     int
	posCount map[string]int
	replay   *replayer

	calls    sync.Mutex // one model call at a time
	cancel   context.CancelCauseFunc
	hardKill chan struct{}
	killOnce sync.Once
	lock     *fsx.Lock
}

// Run runs SCRIPT (or resumes a run) to its end and reports how it ended.
// An error is a failure before SCRIPT could start, as an *Error.
func Run(ctx context.Context, o Options) (Result, error) {
	l, err := prepare(ctx, o)
	if err != nil {
		return Result{}, err
	}
	defer l.lock.Unlock()
	return l.run(ctx)
}

func (o *Options) normalize() error {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Soak < 0 || o.Jury < 0 || o.MaxIters < 0 || o.Budget < 0 || o.Timeout < 0 {
		return fail(KindUsage, "--soak, --jury, --max-iters, --budget and --timeout cannot be negative")
	}
	if o.Soak > 0 && o.Jury > 0 {
		return fail(KindUsage, "--soak and --jury are mutually exclusive")
	}
	switch o.Seed {
	case "", "full", "compact", "none":
	default:
		return fail(KindUsage, "--seed %q: want full, compact or none", o.Seed)
	}
	if o.Inline != "" {
		if o.Script != "" || o.Resume != "" {
			return fail(KindUsage, "-c TEXT is SCRIPT: give no SCRIPT file or --resume with it")
		}
		o.Script = InlineScript
	}
	if o.Resume == "" && o.Script == "" {
		return fail(KindUsage, "no SCRIPT given")
	}
	return nil
}

func prepare(ctx context.Context, o Options) (*Loop, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	home := o.Home
	if home == "" {
		h, err := DefaultHome()
		if err != nil {
			return nil, fail(KindFailure, "%v", err)
		}
		home = h
	}
	l := &Loop{o: o, stdout: o.Stdout, stderr: o.Stderr, posCount: map[string]int{}, hardKill: make(chan struct{}), sup: o.Tracker}
	if l.sup == nil {
		l.sup = &agentrun.Tracker{}
	}
	if l.sup.ValidatePolicy == nil {
		// Its steps' coverage reads the project policy.
		l.sup.ValidatePolicy = policyschema.Validate
	}
	l.self = o.Self
	if l.self == "" {
		if exe, err := os.Executable(); err == nil {
			l.self = exe
		}
	}
	var script []byte
	var err error
	if o.Resume != "" {
		script, err = l.resumeScript(home)
	} else {
		script, err = l.newScript()
	}
	if err != nil {
		return nil, err
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(string(script)), l.o.Script)
	if err != nil {
		return nil, fail(KindConfig, "SCRIPT does not parse as POSIX shell: %v", err)
	}
	l.file = f
	cfg, err := LoadConfig(l.o.Agents, l.work)
	if err != nil {
		// A file that is not there (or not readable) is the call's mistake;
		// one that is there and wrong is a config error.
		return nil, fail(fileKind(err, KindConfig), "%v", err)
	}
	l.cfg = cfg
	l.verifier = filepath.Join(l.work, "ci")
	if err := l.preflight(); err != nil {
		return nil, fail(KindConfig, "%v", err)
	}
	l.git = findRepo(ctx, l.work)
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, fail(KindFailure, "%v", err)
	}
	if l.git != nil {
		l.git.excludeInside(ctx, home, l.getenv("LASERBRAIN_HOME"))
	}
	if fid, err := fleet.ID(ctx, l.work); err == nil {
		l.fleetID = fid
	} else {
		return nil, fail(KindFailure, "fleet: %v", err)
	}
	if o.Resume != "" {
		if err := l.openResume(); err != nil {
			return nil, err
		}
	} else if err := l.create(home, script); err != nil {
		return nil, err
	}
	return l, nil
}

// resumeScript reads the run --resume names back from home: its meta,
// its copy of SCRIPT (which must be the one it started with, and the one
// given now if any), its settings with those given now over them.
func (l *Loop) resumeScript(home string) ([]byte, error) {
	o := l.o
	if err := fleet.ValidateRunID(o.Resume); err != nil {
		return nil, fail(KindUsage, "--resume: %v", err)
	}
	l.id, l.dir = o.Resume, filepath.Join(home, o.Resume)
	m, err := readMeta(l.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fail(KindUsage, "--resume %s: no such run in %s", o.Resume, home)
	}
	if err != nil {
		return nil, fail(KindFailure, "--resume %s: %v", o.Resume, err)
	}
	if m.Status == "ended" && !m.Resumable {
		return nil, fail(KindUsage, "--resume %s: the run is over (%s); nothing to resume — start a new run", o.Resume, m.Reason)
	}
	l.meta = m
	l.work = m.Dir
	script, err := os.ReadFile(filepath.Join(l.dir, "script.sh"))
	if err != nil {
		return nil, fail(KindFailure, "--resume %s: the run directory is damaged: %v", o.Resume, err)
	}
	if sum := sha256.Sum256(script); hex.EncodeToString(sum[:]) != m.ScriptSum {
		return nil, fail(KindConfig, "--resume %s: the run's copy of SCRIPT was changed since it started", o.Resume)
	}
	if err := sameScript(o.Script, script, l.dir); err != nil {
		return nil, fail(KindUsage, "%s --resume %s: %v", o.Script, o.Resume, err)
	}
	l.o.Settings = mergeSettings(m.Settings, o.Settings, o.Set)
	l.o.Args = m.Args
	l.o.Script = m.Script
	return script, nil
}

// newScript reads a new run's SCRIPT, with its defaults and its launch
// seed, before anything is made.
func (l *Loop) newScript() ([]byte, error) {
	o := l.o
	var script []byte
	dir := o.Dir
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fail(KindUsage, "%v", err)
	}
	l.work = abs
	if o.Inline != "" {
		script = []byte(o.Inline)
	} else if script, err = os.ReadFile(o.Script); err != nil {
		return nil, fail(KindUsage, "SCRIPT: %v", err)
	}
	if l.o.MaxIters == 0 {
		l.o.MaxIters = DefaultMaxIters
	}
	if l.o.Timeout == 0 {
		l.o.Timeout = DefaultTimeout
	}
	// Read before anything is made: a --thread that cannot be read
	// leaves nothing behind.
	if l.seed, l.seedSource, err = launchSeed(l.o.Seed, l.o.Thread, l.getenv); err != nil {
		return nil, fail(fileKind(err, KindFailure), "%v", err)
	}
	return script, nil
}

// mergeSettings keeps a run's settings on resume, but for those given
// explicitly now.
func mergeSettings(stored, given Settings, set map[string]bool) Settings {
	s := stored
	if set["goal"] {
		s.Goal = given.Goal
	}
	if set["max-iters"] {
		s.MaxIters = given.MaxIters
	}
	if set["budget"] {
		s.Budget = given.Budget
	}
	if set["timeout"] {
		s.Timeout = given.Timeout
	}
	if set["soak"] || set["jury"] {
		s.Soak, s.Jury = given.Soak, given.Jury
	}
	if set["goldfish"] {
		s.Goldfish = given.Goldfish
	}
	if set["pedantic"] {
		s.Pedantic = given.Pedantic
	}
	if set["agents"] {
		s.Agents = given.Agents
	}
	return s
}

// preflight refuses, before anything runs, what would only fail later:
// every `agent NAME` and `judge NAME` SCRIPT spells with a literal name
// whose service is unknown, disabled, a judge without the verdict tool, or
// whose program (claude, or _COMMAND's first word) is not found from the
// working directory with the loop's PATH; and a SCRIPT that runs ./ci, the
// verifier, when ./ci is not an executable file. Every problem is listed,
// each service once. A name known only at run time is checked the same
// way when the call is made (the builtin's 7).
func (l *Loop) preflight() error {
	env := l.o.Env
	if env == nil {
		env = os.Environ()
	}
	var errs []error
	seen := map[string]bool{}
	ciChecked := false
	syntax.Walk(l.file, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		line := call.Pos().Line()
		word := call.Args[0].Lit()
		if !ciChecked && strings.Contains(word, "/") && filepath.Join(l.work, word) == l.verifier {
			ciChecked = true
			if err := checkVerifier(l.verifier); err != nil {
				errs = append(errs, fmt.Errorf("SCRIPT line %d runs %s, the verifier: %v", line, word, err))
			}
			return true
		}
		if word != roleAgent && word != roleJudge {
			return true
		}
		name := ""
		if len(call.Args) > 1 {
			if name = call.Args[1].Lit(); name == "" {
				return true // a name known only when it runs
			}
		} else if word == roleAgent {
			name = l.cfg.DefaultAgent
			if name == "" {
				errs = append(errs, fmt.Errorf("SCRIPT line %d: `agent` without a NAME needs DEFAULT_AGENT in agents.conf", line))
				return true
			}
		}
		if strings.HasPrefix(name, "-") || seen[word+" "+name] {
			return true
		}
		seen[word+" "+name] = true
		s, err := l.cfg.Lookup(name)
		if err == nil {
			err = s.CheckRole(word)
		}
		if err == nil && !seen["exec "+s.Name] {
			seen["exec "+s.Name] = true
			err = s.checkExecutable(l.work, env)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("SCRIPT line %d: %s %s: %v", line, word, name, err))
		}
		return true
	})
	return errors.Join(errs...)
}

// checkVerifier says why path cannot run as ./ci: missing, not a regular
// file, or not executable.
func checkVerifier(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist (write ./ci: it exits 0 when the work is done)", path)
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a file", path)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable (chmod +x %s)", path, filepath.Base(path))
	}
	return nil
}

// create makes the run directory, its copy of SCRIPT and run.json, and
// registers the loop's own drift run.
func (l *Loop) create(home string, script []byte) error {
	l.id = fleet.NewID()
	l.dir = filepath.Join(home, l.id)
	if err := os.MkdirAll(filepath.Join(l.dir, "ops"), 0o755); err != nil {
		return fail(KindFailure, "run directory: %v", err)
	}
	lk, err := fsx.LockFile(filepath.Join(l.dir, "lock"), time.Second)
	if err != nil {
		return fail(KindFailure, "run directory: %v", err)
	}
	l.lock = lk
	if err := fsx.WriteFile(filepath.Join(l.dir, "script.sh"), script, 0o644); err != nil {
		return fail(KindFailure, "%v", err)
	}
	if err := fsx.WriteFile(filepath.Join(l.dir, "verdict.schema.json"), verdictSchema(), 0o644); err != nil {
		return fail(KindFailure, "%v", err)
	}
	sum := sha256.Sum256(script)
	l.meta = Meta{ID: l.id, Script: l.o.Script, ScriptSum: hex.EncodeToString(sum[:]), Dir: l.work, Args: l.o.Args,
		Settings: l.o.Settings, Created: time.Now().UTC(), Status: "running", Process: selfProcess(home)}
	if err := writeMeta(l.dir, l.meta); err != nil {
		return fail(KindFailure, "%v", err)
	}
	l.j = &journal{path: filepath.Join(l.dir, "steps.jsonl")}
	l.st = &state{}
	if l.seed != "" {
		if err := fsx.WriteFile(filepath.Join(l.dir, "seed.md"), []byte(l.seed), 0o644); err != nil {
			return fail(KindFailure, "%v", err)
		}
	}
	meta := l.meta
	if err := l.j.append(Record{Kind: recRun, Meta: &meta, Reason: l.seedSource}); err != nil {
		return fail(KindFailure, "%v", err)
	}
	if err := l.registerDrift(context.Background()); err != nil {
		return fail(KindFailure, "the loop's drift run: %v", err)
	}
	return nil
}

// openResume takes the run directory's lock, reads the journal and sets up
// replay.
func (l *Loop) openResume() error {
	lk, err := fsx.LockFile(filepath.Join(l.dir, "lock"), 200*time.Millisecond)
	if err != nil {
		return fail(KindUsage, "--resume %s: the run is being run by another process", l.id)
	}
	l.lock = lk
	l.j = &journal{path: filepath.Join(l.dir, "steps.jsonl")}
	recs, err := readJournal(l.j.path)
	if err != nil {
		lk.Unlock()
		return fail(KindFailure, "--resume %s: %v", l.id, err)
	}
	// The state starts empty: replay restores it step by step, each
	// completed step carrying the state after it.
	l.st = &state{}
	for _, r := range recs {
		l.step = max(l.step, r.Step)
	}
	l.replay = newReplayer(recs)
	l.endOrphans(context.Background(), recs)
	l.reopenDrift(context.Background())
	if b, err := os.ReadFile(filepath.Join(l.dir, "seed.md")); err == nil {
		l.seed = string(b)
	}
	l.meta.Status, l.meta.ExitCode, l.meta.Reason, l.meta.Resumable, l.meta.Ended = "running", nil, "", false, time.Time{}
	l.meta.Settings = l.o.Settings
	l.meta.Process = selfProcess(filepath.Dir(l.dir))
	if err := writeMeta(l.dir, l.meta); err != nil {
		lk.Unlock()
		return fail(KindFailure, "%v", err)
	}
	if err := l.j.append(Record{Step: l.step, Kind: recResume, Reason: fmt.Sprintf("replaying %d completed steps", l.replay.total)}); err != nil {
		lk.Unlock()
		return fail(KindFailure, "%v", err)
	}
	return nil
}

func (l *Loop) getenv(k string) string {
	if l.o.Env == nil {
		return os.Getenv(k)
	}
	for i := len(l.o.Env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(l.o.Env[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// note writes one of the loop's own lines on stderr.
func (l *Loop) note(format string, a ...any) {
	l.errMu.Lock()
	defer l.errMu.Unlock()
	fmt.Fprintf(l.stderr, "laserbrain loop: "+format+"\n", a...)
}

// halt stops SCRIPT: the reason is journaled and printed, and the run's
// context is cancelled with it, which ends SCRIPT at its next statement.
// The status returned is the one the step ends with.
func (l *Loop) halt(code int, format string, a ...any) error {
	h := &haltError{code: code, reason: fmt.Sprintf(format, a...)}
	l.mu.Lock()
	step := l.step
	l.mu.Unlock()
	_ = l.j.append(Record{Step: step, Kind: recHalt, Status: intp(code), Reason: h.reason})
	l.note("stopped: %s", h.reason)
	l.cancel(h)
	return exitStatus(code)
}

// stopped is the status a step returns when the run was stopped under it
// (the interpreter then ends SCRIPT at its next statement). A plain status
// rather than an error: the interpreter prints an error from $(…).
func stopped(ctx context.Context) error {
	var h *haltError
	var sg *signalled
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &h):
		return exitStatus(h.code)
	case errors.As(cause, &sg):
		return exitStatus(128 + int(sg.sig))
	}
	return exitStatus(statusInternal)
}

func (l *Loop) run(parent context.Context) (Result, error) {
	ctx, cancel := context.WithCancelCause(parent)
	l.cancel = cancel
	defer cancel(nil)
	if l.o.Timeout > 0 {
		t := time.AfterFunc(l.o.Timeout, func() {
			_ = l.halt(statusExhausted, "the wall-clock --timeout %s was reached", l.o.Timeout)
		})
		defer t.Stop()
	}
	if l.o.HandleSignals {
		sigs := make(chan os.Signal, 4)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		done := make(chan struct{})
		defer func() { signal.Stop(sigs); close(done) }()
		go func() {
			for first := true; ; first = false {
				select {
				case s := <-sigs:
					sig, _ := s.(syscall.Signal)
					if first {
						l.note("%s: stopping the step in flight (send it again to kill at once)", signalName(sig))
						cancel(&signalled{sig})
						continue
					}
					l.killOnce.Do(func() { close(l.hardKill) })
				case <-done:
					return
				}
			}
		}()
	}
	stdin, closeIn, err := stdinFile(l.o.Stdin)
	if err != nil {
		return Result{}, fail(KindFailure, "%v", err)
	}
	defer closeIn()
	l.stdin = stdin
	l.interactive = tty.Is(stdin)
	env := l.scriptEnv()
	params := append([]string{"--"}, l.o.Args...)
	r, err := interp.New(
		interp.Env(expand.ListEnviron(env...)),
		interp.Dir(l.work),
		interp.StdIO(stdin, l.stdout, l.stderr),
		interp.Params(params...),
		interp.ExecHandlers(l.middleware),
	)
	if err != nil {
		return Result{}, fail(KindFailure, "%v", err)
	}
	runErr := r.Run(ctx, l.file)
	cause := context.Cause(ctx)
	if n := l.replay.left(); n > 0 {
		// SCRIPT went another way than the journal: what it did live is
		// journaled anew; the rest of the old record was not used.
		l.note("%d completed steps of the journal were not replayed: SCRIPT took another path after the step in flight", n)
	}
	res := Result{RunID: l.id, Dir: l.dir, Script: l.o.Script}
	var h *haltError
	var sg *signalled
	switch {
	case errors.As(cause, &h):
		res.ExitCode, res.Reason, res.Stopped = h.code, h.reason, true
	case errors.As(cause, &sg):
		res.ExitCode, res.Reason, res.Stopped = 128+int(sg.sig), sg.Error()+"; the step in flight was killed", true
	case runErr == nil:
		res.ExitCode, res.Reason = 0, "SCRIPT exited 0"
	default:
		var code interp.ExitStatus
		if errors.As(runErr, &code) {
			res.ExitCode, res.Reason = int(code), fmt.Sprintf("SCRIPT exited %d", code)
		} else {
			res.ExitCode, res.Reason, res.Stopped = statusInternal, "the loop failed: "+runErr.Error(), true
		}
	}
	return l.finish(res), nil
}

// finish closes the run: the end record, run.json, the drift run.
func (l *Loop) finish(res Result) Result {
	l.mu.Lock()
	st := l.st.clone()
	step := l.step
	l.mu.Unlock()
	res.Iterations = st.Iteration
	res.Calls = st.Calls
	res.Verdict = st.FinalVerdict
	res.Mode, res.Passed, res.Of = st.FinalMode, st.FinalPassed, st.FinalOf
	res.Suggestions = st.Suggestions
	if err := l.j.append(Record{Step: step, Kind: recEnd, Status: intp(res.ExitCode), Reason: res.Reason, State: st}); err != nil {
		l.note("%v", err)
	}
	code := res.ExitCode
	l.meta.Status, l.meta.ExitCode, l.meta.Reason, l.meta.Ended = "ended", &code, res.Reason, time.Now().UTC()
	// A run the loop stopped (signal, budget, timeout) can go on with
	// --resume; one whose SCRIPT ended by itself is over.
	l.meta.Resumable = res.Stopped
	l.meta.Process = nil
	if err := writeMeta(l.dir, l.meta); err != nil {
		l.note("%v", err)
	}
	l.closeDrift(context.Background(), res)
	return res
}

// scriptEnv is SCRIPT's environment: the base, plus where the run is.
func (l *Loop) scriptEnv() []string {
	base := l.o.Env
	if base == nil {
		base = os.Environ()
	}
	env := withoutKeys(base, "RUN_DIR", "LASERBRAIN_LOOP_RUN", agentrun.EnvRun, agentrun.EnvAgent, agentrun.EnvFleet)
	return append(env, "RUN_DIR="+l.dir, "LASERBRAIN_LOOP_RUN="+l.id,
		agentrun.EnvRun+"="+l.id, agentrun.EnvAgent+"=loop", agentrun.EnvFleet+"="+l.fleetID)
}

func withoutKeys(env []string, keys ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, x := range keys {
			drop = drop || k == x
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// stdinFile gives the interpreter an *os.File for stdin (a pipe fed from a
// reader that is not one), so the loop can tell its own stdin apart from
// the pipes SCRIPT makes.
func stdinFile(r io.Reader) (*os.File, func(), error) {
	switch r := r.(type) {
	case *os.File:
		return r, func() {}, nil
	case nil:
		f, err := os.Open(os.DevNull)
		if err != nil {
			return nil, nil, err
		}
		return f, func() { f.Close() }, nil
	default:
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		go func() {
			_, _ = io.Copy(pw, r)
			pw.Close()
		}()
		return pr, func() { pr.Close() }, nil
	}
}

// nextStep allocates a step number; the caller holds l.mu.
func (l *Loop) nextStep() int {
	l.step++
	return l.step
}

// key is where a step runs in SCRIPT and the how-many-th time: what replay
// matches a step by.
func (l *Loop) key(pos syntax.Pos) string {
	p := fmt.Sprintf("L%d:C%d", pos.Line(), pos.Col())
	l.mu.Lock()
	defer l.mu.Unlock()
	l.posCount[p]++
	return fmt.Sprintf("%s#%d", p, l.posCount[p])
}

// sameScript checks a SCRIPT named with --resume: the run replays its own
// copy, so the file must hold the same bytes ("" names none).
func sameScript(path string, own []byte, dir string) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read SCRIPT: %w", err)
	}
	if !bytes.Equal(b, own) {
		return fmt.Errorf("SCRIPT is not the run's own copy (%s differs from %s): resume with the script the run started with, or without SCRIPT (laserbrain loop --resume RUN replays the copy)",
			path, filepath.Join(dir, "script.sh"))
	}
	return nil
}
