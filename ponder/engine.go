package ponder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/ponder/ledger"
	"github.com/laserkit/laserkit/ponder/oca"
)

// Progress shows a long count (the scan) to a person; see ponder/scan.
type Progress interface {
	Update(n int)
	Done(n int)
}

// Engine runs ponder's commands against the .ponder/ directory of Root.
// Each exported command method returns its result (for --json) or an
// *Error carrying the exit code; under PONDER_OCA=on a command whose OCA
// write failed after its local work returns both.
type Engine struct {
	Root   string // the project directory holding .ponder/
	Bridge *oca.Bridge
	Now    func() time.Time
	// Warn prints a warning (to stderr in the binary).
	Warn func(msg string)
	// Progress, when set, returns a sink for the scan's running count; the
	// binary sets it only when stderr is a terminal.
	Progress func(label string) Progress
	// LockTimeout bounds the wait for another ponder on the same session.
	LockTimeout time.Duration
	// MapLedger reads ledgers through a memory map that is never released
	// (ledger.ReadMapped): right for a process that runs one command, as
	// the binary does; a long-lived caller leaves it off.
	MapLedger bool
	// Halts, when set, is asked before every writing command whether the
	// session is halted from outside (see Halts).
	Halts Halts
	// Messages, when set, is asked by every command that opens a session for
	// what it is told from outside (see Messages); Tell shows each one.
	Messages Messages
	Tell     func(notice string)
	// Selected is the session this process works on when a command is
	// given no slug: PONDER_SLUG in the binary, so that each agent on a
	// repository keeps to its own session ("" = none selected).
	Selected string
}

// New returns an Engine on root with the given bridge and default clocks.
func New(root string, bridge *oca.Bridge) *Engine {
	if bridge == nil {
		bridge = oca.New(oca.Config{})
	}
	return &Engine{Root: root, Bridge: bridge, Now: time.Now, Warn: func(string) {}, LockTimeout: 30 * time.Second}
}

// NewReader is an engine for a reader outside ponder (laserkit's
// supervisor, the fleet report) on the project containing dir: OCA is off,
// so reading a session never reaches for a database or writes memory.
func NewReader(dir string) *Engine {
	return New(FindRoot(dir), oca.New(oca.Config{Getenv: func(k string) string {
		if k == "PONDER_OCA" {
			return string(oca.ModeOff)
		}
		return ""
	}}))
}

func (e *Engine) now() time.Time { return e.Now().UTC() }

func (e *Engine) stamp() string { return e.now().Format("2006-01-02T15:04:05.000Z") }

// handle is an open session: its directory, session.json and, for writing
// commands, the lock that serialises them.
type handle struct {
	e         *Engine
	slug, dir string
	s         *Session
	lock      *fsx.Lock
	// ocaFailed names the bridge calls that failed under PONDER_OCA=on.
	ocaFailed []string
	// verified is the state a writer's open read and checked, handed to
	// its first state() so the ledger is read once.
	verified    *State
	verifiedLog *ledger.Log
	// heads are the record counts whose chain heads a read reports
	// (ledger.Chain.Heads).
	heads []int
	// selectedBy is where the session was selected from (SelectedBy…).
	selectedBy string
}

// Where a session was selected from, as messages and status say it.
const (
	SelectedByFlag    = "--slug"
	SelectedByEnv     = "PONDER_SLUG"
	SelectedByCurrent = ".ponder/current"
)

// resolve picks the session: --slug, else PONDER_SLUG (Engine.Selected),
// else .ponder/current — the last only while at most one session is
// active: with several, .ponder/current names whichever started last, and
// taking it would put one agent's work in another's session, so the
// command refuses and lists them instead of guessing.
func (e *Engine) resolve(slug string) (string, error) {
	slug, _, err := e.Resolve(slug)
	return slug, err
}

// Resolve is the session a command given slug works on, and where it was
// selected from (SelectedBy…). The error is a usage error (exit 2): no
// such session, none selected, or several active and none selected.
func (e *Engine) Resolve(slug string) (string, string, error) {
	from := SelectedByFlag
	if slug == "" && e.Selected != "" {
		slug, from = e.Selected, SelectedByEnv
	}
	if slug == "" {
		active, err := e.activeSessions()
		if err != nil {
			return "", "", err
		}
		if len(active) > 1 {
			details := make([]string, len(active))
			for i, s := range active {
				details[i] = s.describe()
			}
			err := usageErr("%d sessions are active in %s, and this command was not told which one is its own: pass --slug, or set PONDER_SLUG in the agent's shell (ponder start prints the export line); %s is not used while several are active", len(active), e.stateDir(), SelectedByCurrent)
			err.Details = details
			return "", "", err
		}
		cur, err := e.currentSlug()
		if err != nil {
			return "", "", err
		}
		if cur == "" {
			return "", "", usageErr("no session selected: pass --slug, set PONDER_SLUG, or run `ponder start` (no %s)", filepath.Join(stateDirName, currentFile))
		}
		slug, from = cur, SelectedByCurrent
	}
	if !validSlug(slug) {
		return "", "", usageErr("%q (%s) is not a session slug", slug, from)
	}
	if _, err := os.Stat(filepath.Join(e.sessionDir(slug), sessionFile)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", "", usageErr("no session %q under %s (from %s)", slug, e.stateDir(), from)
		}
		return "", "", err
	}
	return slug, from, nil
}

// activeSessions are the sessions under .ponder/ whose status is active,
// by slug.
func (e *Engine) activeSessions() ([]*Session, error) {
	slugs, err := e.Slugs()
	if err != nil {
		return nil, err
	}
	var out []*Session
	for _, sl := range slugs {
		s, err := readSession(e.sessionDir(sl))
		if err == nil && s.Status == StatusActive {
			out = append(out, s)
		}
	}
	return out, nil
}

// access is how a command opens a session.
type access struct {
	// cmd names a writing command ("" for a reader): it takes the session
	// lock, is refused on a halted session, and refuses a ledger whose
	// chain does not hold before it changes anything.
	cmd string
	// evenHalted lets a writer go on while the session is halted: abort,
	// since ending a session is the natural answer to "which one yields?".
	evenHalted bool
	// evenDamaged lets a writer open a damaged ledger: repair, which mends
	// a torn one and refuses the rest itself.
	evenDamaged bool
	// replay, when set, is how the writer's read applies each record to a
	// fresh state (the default is st.apply): a command that measures the
	// ledger at points along the way does it in the one read. It may set
	// h.heads before the read.
	replay func(h *handle, st *State) func(*ledger.Record)
}

// reader opens a session for reading; writer for the writing command cmd.
var reader = access{}

func writer(cmd string) access { return access{cmd: cmd} }

// open resolves and loads a session. A writer takes the session lock first,
// so that everything read afterwards is current, and then reads the ledger
// whole: a chain that does not hold (torn, corrupt, forged) refuses the
// command before anything is written, as status and report refuse to read
// it. The state read there is handed to the command's first h.state().
func (e *Engine) open(slug string, a access) (*handle, error) {
	slug, from, err := e.Resolve(slug)
	if err != nil {
		return nil, err
	}
	h := &handle{e: e, slug: slug, dir: e.sessionDir(slug), selectedBy: from}
	e.tellMessages(slug)
	if a.cmd != "" {
		if !a.evenHalted {
			if err := e.checkHalt(slug); err != nil {
				return nil, err
			}
		}
		h.lock, err = fsx.LockFile(filepath.Join(h.dir, lockFile), e.LockTimeout)
		if err != nil {
			return nil, stateErr(nil, "session %s is busy: %v", slug, err)
		}
	}
	h.s, err = readSession(h.dir)
	if err != nil {
		h.release()
		return nil, err
	}
	if a.cmd != "" && !a.evenDamaged {
		var replay func(*State) func(*ledger.Record)
		if a.replay != nil {
			replay = func(st *State) func(*ledger.Record) { return a.replay(h, st) }
		}
		st, l, err := h.stateWith(replay)
		if err != nil {
			h.release()
			var pe *Error
			if errors.As(err, &pe) && pe.Kind == KindState {
				return nil, stateErr(nil, "%s refused, nothing was written: %s (ponder doctor shows the damage)", a.cmd, pe.Message)
			}
			return nil, err
		}
		h.verified, h.verifiedLog = st, l
	}
	e.Bridge.Attach(h.dir)
	return h, nil
}

func (h *handle) release() {
	if h.lock != nil {
		_ = h.lock.Unlock()
		h.lock = nil
	}
}

func (h *handle) save() error { return writeSession(h.dir, h.s) }

func (h *handle) ledgerPath() string { return filepath.Join(h.dir, ledgerFile) }

// state reads the ledger whole, replaying it as it goes, and refuses a
// damaged one: torn, corrupt, or forged (the hash chain from the session's
// genesis, or its anchor, does not hold). A read-only caller that meets a
// torn tail waits for the lock and reads again: the tail may be a writer's
// append in flight. Only a lock holder reads through a memory map, because
// a writer may cut the file in place (a failed append, repair).
func (h *handle) state() (*State, *ledger.Log, error) {
	if st, l := h.verified, h.verifiedLog; st != nil {
		h.verified, h.verifiedLog = nil, nil
		return st, l, nil
	}
	return h.stateWith(nil)
}

// stateWith is state with a reader of every record: replay is called for
// each fresh state (again when a torn tail makes state read twice) and
// returns what applies each record — st.apply, wrapped.
func (h *handle) stateWith(replay func(*State) func(*ledger.Record)) (*State, *ledger.Log, error) {
	readFile := ledger.Read
	if h.e.MapLedger && h.lock != nil {
		readFile = ledger.ReadMapped
	}
	// visit is made first (replay may set h.heads), then the chain.
	read := func(visit func(*ledger.Record)) (*ledger.Log, error) {
		c := h.s.Chain()
		c.Heads = h.heads
		return readFile(h.ledgerPath(), c, visit)
	}
	if replay == nil {
		replay = func(st *State) func(*ledger.Record) { return st.apply }
	}
	st := newState()
	l, err := read(replay(st))
	if err != nil {
		return nil, nil, err
	}
	if l.Damage != nil && l.Damage.Torn && h.lock == nil {
		if lk, lerr := fsx.LockFile(filepath.Join(h.dir, lockFile), h.e.LockTimeout); lerr == nil {
			if s, serr := readSession(h.dir); serr == nil {
				h.s = s
			}
			st = newState()
			l, err = read(replay(st))
			_ = lk.Unlock()
			if err != nil {
				return nil, nil, err
			}
		}
	}
	if l.Damage != nil {
		return nil, nil, stateErr(nil, "session %s: %v", h.slug, l.Damage)
	}
	return st, l, nil
}

func (h *handle) requireActive(cmd string) error {
	if h.s.Status != StatusActive {
		return stateErr(nil, "%s refused: session %s is %s", cmd, h.slug, h.s.Status)
	}
	return nil
}

// requireOCA is the PONDER_OCA=on gate, passed before any local change.
func (h *handle) requireOCA() error {
	if err := h.e.Bridge.Require(); err != nil {
		return ocaErr("%v; nothing was changed", err)
	}
	return nil
}

// ocaCall notes a bridge call's outcome; under PONDER_OCA=on a failure
// makes the command exit 3 once its local work is done.
func (h *handle) ocaCall(ok bool, fn string) {
	if !ok && h.e.Bridge.Mode() == oca.ModeOn {
		h.ocaFailed = append(h.ocaFailed, fn)
	}
}

// ocaResult is the command's closing error under PONDER_OCA=on. It says
// exactly what recovers: the rows a write lost are written by ponder oca
// sync (idempotent); a read that failed (judge's open observations, the
// tie-breaker) is taken again by re-running judge.
func (h *handle) ocaResult() error {
	if len(h.ocaFailed) == 0 {
		return nil
	}
	var writes, reads []string
	for _, fn := range h.ocaFailed {
		if fn == "openObservations" {
			reads = append(reads, fn)
		} else {
			writes = append(writes, fn)
		}
	}
	failed := strings.Join(h.ocaFailed, ", ")
	msg := fmt.Sprintf("OCA is required (PONDER_OCA=on) but %s failed; the local work is done (see %s): once OCA is back, ", failed, filepath.Join(h.dir, "oca.log"))
	var ways []string
	if len(writes) > 0 {
		ways = append(ways, fmt.Sprintf("`ponder oca sync --slug %s` writes the rows this session is missing (running it again writes nothing twice)", h.slug))
	}
	if len(reads) > 0 {
		ways = append(ways, "re-running `ponder judge` before decide reads the open observations again (the tie-breaker was not applied)")
	}
	msg += strings.Join(ways, ", and ")
	if slices.Contains(writes, "recordStart") {
		msg += "; do not re-run start, which would begin a second session"
	}
	return ocaErr("%s", msg)
}

// diskRoot is where unit paths resolve: the scan root, else the project.
func (h *handle) diskRoot() string {
	if h.s.ScanRoot == nil {
		return h.e.Root
	}
	r := filepath.FromSlash(*h.s.ScanRoot)
	if filepath.IsAbs(r) {
		return r
	}
	return filepath.Join(h.e.Root, r)
}

// appendBatch stamps, chains and appends records as one batch (one write,
// one fsync) after the records already in l, then commits it by recording
// the new anchor in session.json. If the append fails it is cut back before
// appendBatch returns; if the commit fails the append is undone. Either way
// a failed appendBatch leaves the ledger and session.json as they were.
func (h *handle) appendBatch(l *ledger.Log, recs []ledger.Record) error {
	ledger.Stamp(recs, l.NextSeq(), h.s.CurrentPass, h.e.now())
	a, err := ledger.Append(h.ledgerPath(), l, recs)
	if err != nil {
		return fmt.Errorf("append to %s failed, nothing was changed: %w", h.ledgerPath(), err)
	}
	old := h.s.Ledger
	anchor := a.Anchor
	h.s.Ledger = &anchor
	if err := h.save(); err != nil {
		h.s.Ledger = old
		if uerr := a.Undo(); uerr != nil {
			return fmt.Errorf("recording the ledger's anchor in session.json failed (%v), and taking the batch back failed too (%v): run `ponder doctor`", err, uerr)
		}
		return fmt.Errorf("recording the ledger's anchor in session.json failed, so the batch was taken back and nothing was changed: %w", err)
	}
	return nil
}

// viewErr is the error of a command whose batch is committed but whose
// units.json (a view rebuilt from the ledger) could not be rewritten.
func viewErr(err error) error {
	return fmt.Errorf("the batch is recorded, but units.json could not be rewritten (%v); it is rebuilt from the ledger by the next change or by `ponder repair`", err)
}

// writeUnits renders units.json from the state; an unchanged file is not
// rewritten.
func (h *handle) writeUnits(st *State) error {
	return writeJSONIfChanged(filepath.Join(h.dir, unitsFile), unitsView(st))
}

// unitsView is units.json: the inventory's current paths, derived from the
// ledger.
func unitsView(st *State) any {
	type unitJSON struct {
		ID      string  `json:"id"`
		Path    string  `json:"path"`
		Kind    string  `json:"kind"`
		Graded  bool    `json:"graded"`
		Grade   *string `json:"grade,omitempty"`
		Deleted bool    `json:"deleted,omitempty"`
		Phantom bool    `json:"phantom,omitempty"`
	}
	out := struct {
		Units []unitJSON `json:"units"`
	}{Units: make([]unitJSON, 0, len(st.Units))}
	for _, u := range st.Units {
		out.Units = append(out.Units, unitJSON{ID: u.ID, Path: u.Path(), Kind: u.Kind, Graded: u.Graded, Grade: u.Grade, Deleted: u.Deleted, Phantom: u.Phantom})
	}
	return out
}

// forecastCmd is the command that records a pass's churn forecast.
const forecastCmd = "predict --churn X"

// hasForecast reports whether pass k's forecast (passes/NN/predict.json)
// is recorded.
func (h *handle) hasForecast(k int) bool {
	_, err := os.Stat(filepath.Join(passDir(h.dir, k), predictFile))
	return err == nil
}

// needsForecast reports whether the current pass may not be deliberated
// yet: from pass 2 on, the agent must record a churn forecast before each
// pass.
func (h *handle) needsForecast() bool {
	return h.s.CurrentPass >= 2 && !h.hasForecast(h.s.CurrentPass)
}

// expectedNext lists the commands the session's phase allows next; forecast
// says whether the current pass's forecast is recorded.
func expectedNext(s *Session, seeded, forecast bool) []string {
	switch s.Status {
	case StatusConverged, StatusStopped:
		return []string{"apply"}
	case StatusActive:
	default:
		return []string{}
	}
	var out []string
	if !seeded {
		out = append(out, "units")
	}
	switch s.Phase {
	case PhaseReady:
		if s.CurrentPass >= 2 && !forecast {
			out = append(out, forecastCmd)
			break
		}
		if s.CurrentPass >= 2 {
			out = append(out, "predict")
		}
		out = append(out, "deliberate")
	case PhaseDeliberated:
		out = append(out, "delta", "judge")
	case PhaseJudged:
		out = append(out, "decide continue", "decide stop", "predict", "judge")
	}
	return out
}

// phaseGate refuses cmd unless the session is active and in one of phases.
func (h *handle) phaseGate(cmd string, phases ...string) error {
	if err := h.requireActive(cmd); err != nil {
		return err
	}
	for _, p := range phases {
		if h.s.Phase == p {
			return nil
		}
	}
	k := h.s.CurrentPass
	switch h.s.Phase {
	case PhaseReady:
		if h.needsForecast() {
			return outOfOrder(cmd, forecastCmd, fmt.Sprintf("pass %d has neither its churn forecast nor its deliberation yet", k))
		}
		return outOfOrder(cmd, "deliberate", fmt.Sprintf("pass %d has not been deliberated yet", k))
	case PhaseDeliberated:
		return outOfOrder(cmd, "judge", fmt.Sprintf("pass %d is deliberated and waiting for its deltas and judge", k))
	case PhaseJudged:
		return outOfOrder(cmd, "decide continue|stop", fmt.Sprintf("pass %d is judged and waiting for a decision", k))
	}
	return stateErr(nil, "%s refused: session %s is in phase %q", cmd, h.slug, h.s.Phase)
}
