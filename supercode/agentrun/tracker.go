package agentrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/laserkit/laserkit/internal/envconfig"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/link"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// The environment `laserbrain run` exports to the agent, and its hooks and
// MCP server read back.
const (
	EnvRun   = "LASERBRAIN_RUN"
	EnvAgent = "LASERBRAIN_AGENT"
	EnvFleet = "LASERBRAIN_FLEET"
	// EnvAttended is "1" when laserbrain run started the agent where a
	// person can answer it, "0" when not (see SpawnPresence).
	EnvAttended = "LASERBRAIN_ATTENDED"
	// EnvPonder selects the ponder session of every ponder command the
	// agent runs (ponder's PONDER_SLUG).
	EnvPonder = "PONDER_SLUG"
	// envLoopRun is set by laserbrain loop for everything its SCRIPT runs
	// (package loop owns it; loop imports this package, not the reverse).
	envLoopRun = "LASERBRAIN_LOOP_RUN"
)

// Tracker keeps track of an agent run for the hooks and the MCP server:
// it finds the caller's run, checks spelled states on it, records the tool
// calls observed and judges the run. It opens its stores on first use, never before, so a
// hook that decides without them pays nothing for them.
type Tracker struct {
	// Getenv reads the caller's environment (nil: os.Getenv).
	Getenv func(string) string
	// Dir is the caller's working directory ("": this process's).
	Dir string
	// InSupervisor: the tracker answers for a confined agent in the
	// laserbrain run process that supervises it (its broker), which also
	// listens on the run's control socket.
	InSupervisor bool
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Stores opens the stores, once, on first use; Close closes them.
	// Nil: the local files under $LASERBRAIN_HOME, and a LASERBRAIN_STORE
	// naming anything else is ErrStoreElsewhere — a binary built without a
	// database driver (the lean laserbrain-gate) then hands the event to
	// laserbrain instead of reading the wrong store. A function, not a
	// dependency, so that binary links no driver at all; the laserbrain
	// binary's factory gives every Tracker it makes the backend
	// LASERBRAIN_STORE names (supercode/backend).
	Stores func() (Stores, error)
	// Replaying is set while the hooks replay events queued when the store
	// was out of reach: the machine's evidence counted them then.
	Replaying bool
	// ClientProcess finds the agent client this process runs under (nil:
	// the package's ClientProcess, from /proc), and BindingDir is where
	// client processes are bound to sessions ("": clients/ in the
	// laserbrain home); see BindSession.
	ClientProcess func() (Process, error)
	BindingDir    string
	// ValidatePolicy checks a project policy file against its schema
	// (operator/policyschema.Validate) where the tracker reads one (a
	// check's coverage settings); nil: only a policy laserbrain has checked
	// before is taken (LoadPolicy).
	ValidatePolicy operator.PolicyValidator

	fleet  fleet.Store
	runs   laserbrain.Store
	stores Stores
}

// Stores opens the stores a Tracker uses, laserbrain's run store and the
// fleet store, sharing what they can (supercode/backend.Backend is the one
// the laserbrain binary uses: the local files or a PostgreSQL database, as
// LASERBRAIN_STORE says).
type Stores interface {
	Runs() (laserbrain.Store, error)
	Fleet() (fleet.Store, error)
	Close() error
}

// ErrStoreElsewhere is what the local-only default says when
// LASERBRAIN_STORE names another store.
var ErrStoreElsewhere = errors.New("LASERBRAIN_STORE names a store this binary does not read")

// localStores is the local files alone.
type localStores struct {
	runs  laserbrain.Store
	fleet fleet.Store
}

func openLocalStores() (Stores, error) {
	if v := strings.TrimSpace(os.Getenv(envconfig.StoreEnv)); v != "" && v != "local" {
		return nil, ErrStoreElsewhere
	}
	return &localStores{}, nil
}

func (l *localStores) Runs() (laserbrain.Store, error) {
	if l.runs == nil {
		p, err := localstore.DefaultPaths()
		if err != nil {
			return nil, err
		}
		if l.runs, err = localstore.Open(p); err != nil {
			return nil, err
		}
	}
	return l.runs, nil
}

func (l *localStores) Fleet() (fleet.Store, error) {
	if l.fleet == nil {
		dir, err := fleet.DefaultDir()
		if err != nil {
			return nil, err
		}
		if l.fleet, err = fleet.OpenLocal(dir); err != nil {
			return nil, err
		}
	}
	return l.fleet, nil
}

func (l *localStores) Close() error {
	var errs []error
	if l.runs != nil {
		errs = append(errs, l.runs.Close())
	}
	if l.fleet != nil {
		errs = append(errs, l.fleet.Close())
	}
	return errors.Join(errs...)
}

// Link is fleet's shared link: the database's for a store that keeps one
// (supercode/backend under PostgreSQL), else the reference's JSONL file on
// this machine (link.Default).
func (s *Tracker) Link(fleetID string) (*link.Link, error) {
	st, err := s.openStores()
	if err != nil {
		return nil, err
	}
	if ls, ok := st.(interface {
		Link(fleetID string) (*link.Link, error)
	}); ok {
		return ls.Link(fleetID)
	}
	return link.Default()
}

// openStores opens the stores once, through Stores.
func (s *Tracker) openStores() (Stores, error) {
	if s.stores == nil {
		open := s.Stores
		if open == nil {
			open = openLocalStores
		}
		st, err := open()
		if err != nil {
			return nil, err
		}
		s.stores = st
	}
	return s.stores, nil
}

func (s *Tracker) getenv(k string) string {
	if s.Getenv != nil {
		return s.Getenv(k)
	}
	return os.Getenv(k)
}

func (s *Tracker) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// Fleet opens the fleet store once.
func (s *Tracker) Fleet() (fleet.Store, error) {
	if s.fleet != nil {
		return s.fleet, nil
	}
	st, err := s.openFleet()
	if err != nil && !envconfig.Is(err) { // a bad setting names itself
		return nil, fmt.Errorf("fleet store: %w", err)
	}
	if err != nil {
		return nil, err
	}
	s.fleet = st
	return st, nil
}

// Runs opens laserbrain's run store once.
func (s *Tracker) Runs() (laserbrain.Store, error) {
	if s.runs != nil {
		return s.runs, nil
	}
	st, err := s.openStores()
	var runs laserbrain.Store
	if err == nil {
		runs, err = st.Runs()
	}
	if err != nil && !envconfig.Is(err) { // a bad setting names itself
		return nil, fmt.Errorf("run store: %w", err)
	}
	if err != nil {
		return nil, err
	}
	s.runs = runs
	return runs, nil
}

func (s *Tracker) openFleet() (fleet.Store, error) {
	st, err := s.openStores()
	if err != nil {
		return nil, err
	}
	return st.Fleet()
}

// Close flushes and closes whatever was opened.
func (s *Tracker) Close() error {
	s.runs, s.fleet = nil, nil
	if s.stores == nil {
		return nil
	}
	err := s.stores.Close()
	s.stores = nil
	return err
}

// CloseMayWait reports whether Close may wait on another machine: a
// database connection the stores opened. Files on this machine close at
// once. Stores that do not say (with a Remote() bool method) may wait.
func (s *Tracker) CloseMayWait() bool {
	switch st := s.stores.(type) {
	case nil, *localStores:
		return false
	case interface{ Remote() bool }:
		return st.Remote()
	}
	return true
}

// SessionEnv are the variables in which agent clients tell the processes
// they start — hooks and MCP servers — the session's id (the same id their
// hook payloads carry): Claude Code's CLAUDE_CODE_SESSION_ID and Qwen
// Code's QWEN_CODE_SESSION_ID, both seen reaching an MCP server. (Gemini
// CLI, Codex, opencode, Cline and Copilot CLI give an MCP server no session
// id: there the server finds the session through its client process's
// binding, see BindSession, or the run through LASERBRAIN_RUN, which
// laserbrain run exports.)
var SessionEnv = []string{"CLAUDE_CODE_SESSION_ID", "QWEN_CODE_SESSION_ID"}

// Caller is who a hook event or tool call comes from.
type Caller struct {
	Run     string // LASERBRAIN_RUN: set by `laserbrain run`
	Agent   string // LASERBRAIN_AGENT
	Session string // the client's session id (payload, binding, or SessionEnv)
	Dir     string // the project directory
	// Client is the agent client (claude, gemini, …) whose hook this is,
	// or whose process an MCP server's binding names ("" from the CLI): a
	// run it opens keeps it.
	Client string
	// Presence is whether a person answers the agent's questions, and
	// PresenceWhy what said so (see Attendance).
	Presence    operator.Presence
	PresenceWhy string
}

// Caller reads the caller from the environment; session and dir, when the
// payload has them, take precedence over the environment's. Without a
// session or LASERBRAIN_RUN (an MCP server's case) the session is the one
// the client process is bound to (BindSession), else the one SessionEnv
// names: the binding is the fresher, for a client that starts a new
// session in the same process rebinds on its next call of our tools.
func (s *Tracker) Caller(session, dir string) Caller {
	c := Caller{
		Run:     strings.TrimSpace(s.getenv(EnvRun)),
		Agent:   strings.TrimSpace(s.getenv(EnvAgent)),
		Session: session,
		Dir:     dir,
	}
	c.Presence, c.PresenceWhy = Attendance(s.getenv)
	if c.Session == "" && c.Run == "" {
		if b, ok := s.BoundSession(); ok {
			c.Session, c.Client = b.Session, b.Client
		}
	}
	for _, k := range SessionEnv {
		if c.Session != "" {
			break
		}
		c.Session = strings.TrimSpace(s.getenv(k))
	}
	if c.Dir == "" {
		c.Dir = s.getenv("CLAUDE_PROJECT_DIR")
	}
	if c.Dir == "" {
		c.Dir = s.WorkDir()
	}
	return c
}

// WorkDir is the caller's working directory: Dir, else this process's.
func (s *Tracker) WorkDir() string {
	if s.Dir != "" {
		return s.Dir
	}
	dir, _ := os.Getwd()
	return dir
}

// Attendance says whether a person is there to answer the agent's
// questions, and what said so, from the environment a hook (or the agent)
// runs in. It is the one place the hooks read it.
//
//   - Claude Code: CLAUDE_CODE_SESSION_ATTENDED, "0" under claude -p (with
//     CLAUDE_CODE_ENTRYPOINT=sdk-cli) and "1" in an interactive session
//     (CLAUDE_CODE_ENTRYPOINT=cli), both seen with 2.1.328. Claude Code is
//     the one that shows an ask to a person or refuses it, so its word
//     decides when it gives one.
//   - laserbrain loop: LASERBRAIN_LOOP_RUN, set for everything SCRIPT runs;
//     a loop never has a person at hand.
//   - laserbrain run: LASERBRAIN_ATTENDED, "0" or "1" (SpawnPresence).
//   - CI: set and not "false", "no" or "0" (CI=true in GitHub Actions,
//     GitLab, CircleCI, Travis, Buildkite; CI=woodpecker counts too).
//
// The two presence variables take 1/0, true/false or yes/no in any case;
// any other value is ignored — answered as if unset — and named in the
// reason, so a typo does not silently read as "nothing says".
//
// Without Claude Code's word, any sign of nobody wins over a sign of
// somebody: an ask that finds nobody is refused. Other agent CLIs' hook
// environments say nothing about it: Gemini CLI gives its hooks its own
// environment plus GEMINI_PROJECT_DIR (and CLAUDE_PROJECT_DIR as an alias,
// never CLAUDE_CODE_SESSION_ATTENDED); Codex and Cursor document no such
// variable. Under them presence comes from laserbrain run, laserbrain loop
// or CI, and is otherwise unknown, which is answered as attended.
func Attendance(getenv func(string) string) (operator.Presence, string) {
	var ignored []string
	flag := func(name string) (value, ok bool) {
		raw := getenv(name)
		if raw == "" {
			return false, false
		}
		v, ok := parseYesNo(raw)
		if !ok {
			if len(raw) > 40 {
				raw = raw[:40] + "…"
			}
			shown := raw
			if strings.IndexFunc(raw, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) }) >= 0 {
				shown = strconv.Quote(raw)
			}
			ignored = append(ignored, name+"="+shown)
		}
		return v, ok
	}
	p, why := attendance(getenv, flag)
	if len(ignored) > 0 {
		why += "; ignored " + strings.Join(ignored, ", ") + " (not 1/0, true/false or yes/no)"
	}
	return p, why
}

func attendance(getenv func(string) string, flag func(string) (bool, bool)) (operator.Presence, string) {
	if v, ok := flag("CLAUDE_CODE_SESSION_ATTENDED"); ok {
		raw := getenv("CLAUDE_CODE_SESSION_ATTENDED")
		if !v {
			return operator.Unattended, "Claude Code says nobody is attending the session (CLAUDE_CODE_SESSION_ATTENDED=" + raw + ")"
		}
		return operator.Attended, "Claude Code says a person is attending the session (CLAUDE_CODE_SESSION_ATTENDED=" + raw + ")"
	}
	run, runOK := flag(EnvAttended)
	if loop := getenv(envLoopRun); loop != "" {
		return operator.Unattended, "the agent runs under laserbrain loop (" + envLoopRun + "=" + loop + ")"
	}
	if runOK && !run {
		return operator.Unattended, "laserbrain run started the agent where nobody can answer it (" + EnvAttended + "=" + getenv(EnvAttended) + ")"
	}
	if ci := strings.TrimSpace(getenv("CI")); ci != "" {
		if v, ok := parseYesNo(ci); !ok || v {
			return operator.Unattended, "a CI job (CI=" + ci + ")"
		}
	}
	if runOK && run {
		return operator.Attended, "laserbrain run started the agent on a terminal (" + EnvAttended + "=" + getenv(EnvAttended) + ")"
	}
	return operator.PresenceUnknown, "nothing in the environment says whether a person is there"
}

// parseYesNo reads a presence variable's value: 1/0, true/false, yes/no,
// in any case, spaces around ignored.
func parseYesNo(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes":
		return true, true
	case "0", "false", "no":
		return false, true
	}
	return false, false
}

// attendedName is how a run records presence ("" when not known).
func attendedName(p operator.Presence) string {
	if p == operator.PresenceUnknown {
		return ""
	}
	return p.String()
}

// Find returns the caller's run: LASERBRAIN_RUN when set, else the run the
// session belongs to. ok is false when there is none.
func (s *Tracker) Find(ctx context.Context, c Caller) (r fleet.Run, ok bool, err error) {
	if c.Run == "" && c.Session == "" {
		return fleet.Run{}, false, nil
	}
	st, err := s.Fleet()
	if err != nil {
		return fleet.Run{}, false, err
	}
	if c.Run != "" {
		r, err = st.Run(ctx, c.Run)
	} else {
		r, err = st.RunForSession(ctx, c.Session)
	}
	if errors.Is(err, fleet.ErrNotFound) {
		return fleet.Run{}, false, nil
	}
	return r, err == nil, err
}

// Open returns the caller's run, registering one when there is none: the
// run LASERBRAIN_RUN names (when `laserbrain run` made it in another store,
// or it was removed), or a run for the session (its id is the session id),
// or a fresh run. The session is attached to the run.
func (s *Tracker) Open(ctx context.Context, c Caller) (fleet.Run, error) {
	r, ok, err := s.Find(ctx, c)
	if err != nil {
		return fleet.Run{}, err
	}
	st, err := s.Fleet()
	if err != nil {
		return fleet.Run{}, err
	}
	if !ok {
		id := c.Run
		if id == "" {
			id = c.Session
		}
		if id == "" || fleet.ValidateRunID(id) != nil {
			id = fleet.NewID()
		}
		fid, err := fleet.IDEnv(ctx, c.Dir, s.getenv)
		if err != nil {
			return fleet.Run{}, err
		}
		// Unnamed, a run is named after the client whose hook opened it
		// (gemini:SESSION, not claude:SESSION).
		agent := c.Agent
		switch {
		case agent != "":
		case c.Session == "":
			agent = "agent"
		case c.Client != "":
			agent = c.Client
		default:
			agent = "claude"
		}
		r = fleet.Run{ID: id, Agent: agent, Fleet: fid, Dir: c.Dir, Client: c.Client, Attended: attendedName(c.Presence), Created: s.now()}
		if err := st.CreateRun(ctx, r); err != nil && !errors.Is(err, fleet.ErrExists) {
			return fleet.Run{}, err
		}
		if r, err = st.Run(ctx, id); err != nil {
			return fleet.Run{}, err
		}
	}
	if c.Session != "" && !slices.Contains(r.Sessions, c.Session) {
		if err := st.AttachSession(ctx, r.ID, c.Session); err != nil {
			return fleet.Run{}, err
		}
		r.Sessions = append(r.Sessions, c.Session)
	}
	if a := attendedName(c.Presence); a != "" && r.Attended != a {
		if r, err = st.UpdateRun(ctx, r.ID, func(x *fleet.Run) error { x.Attended = a; return nil }); err != nil {
			return fleet.Run{}, err
		}
	}
	return r, nil
}

// CheckInput is one spelled state, as check_state takes it.
type CheckInput struct {
	laserbrain.StepInput
	// ResetTask sets the current task aside before this check (the next
	// ground is this check's goal).
	ResetTask bool
	// KeepTask checks the live task even when the goal is nearer a
	// set-aside one: only a plain check resumes (the reference's modulate
	// does not).
	KeepTask bool
	// Via is how the check arrived (ViaTool, ViaCLI, …): every route but
	// the MCP server's and run's own grounding is counted for coverage
	// here.
	Via string
}

// CheckOutcome is a check's verdict and what the run did around it.
type CheckOutcome struct {
	laserbrain.CheckResult
	// Resumed is the goal of a suspended task this check went back to.
	Resumed string
	// UserTurn reports whether the check counted as a user turn.
	UserTurn bool
	// SelfReground: the agent regrounded its own run with this check (a
	// user turn or a reset it claimed when no person spoke).
	SelfReground bool
	Task         string
}

// maxSuspended bounds the tasks reset_task sets aside; the oldest goes.
const maxSuspended = 8

// Check steps the run's current task with one spelled state. A pending
// user turn (user-prompt-submit) is consumed by it. A goal closer to a
// suspended task's ground than to the live one resumes that task (the
// reference's MCP server does the same for check_state), and says so —
// unless in.KeepTask. It returns once the check is durable: it is
// CheckBatch with a batch of one.
func (s *Tracker) Check(ctx context.Context, runID string, in CheckInput) (CheckOutcome, error) {
	out, err := s.CheckBatch(ctx, runID, []CheckInput{in})
	if err != nil {
		return CheckOutcome{}, err
	}
	return out[0], nil
}

// CheckBatch checks states on the run one after the other, exactly as as
// many Checks would, and makes them durable together — group commit: the
// run is held once (its fleet record and its current task, each under its
// lock), the task saved once, the run store flushed once (one fsync), the
// record written once and the checks' events appended in one write. It
// returns when all of it is durable, so a caller that answers only then
// never answers for a check a crash could lose. On an error nothing of the
// batch is answered for: the task and the record are written together or
// not at all (a crash between the task's flush and the record's write
// leaves the steps saved and the record's count behind, which the next
// check does not repeat: steps are numbered by the task).
func (s *Tracker) CheckBatch(ctx context.Context, runID string, ins []CheckInput) ([]CheckOutcome, error) {
	if len(ins) == 0 {
		return nil, nil
	}
	st, err := s.Fleet()
	if err != nil {
		return nil, err
	}
	runs, err := s.Runs()
	if err != nil {
		return nil, err
	}
	var cov coverage.Config
	if slices.ContainsFunc(ins, func(in CheckInput) bool { return counts(in.Via) }) {
		// Read before the run is held, under the project policy of the
		// directory the run works in (else the caller's): a setting that
		// cannot be used refuses the batch whole, naming it.
		r, err := st.Run(ctx, runID)
		if err != nil {
			return nil, err
		}
		dir := r.Dir
		if dir == "" {
			dir = s.WorkDir()
		}
		if cov, err = s.ProjectCoverage(dir); err != nil {
			return nil, err
		}
	}
	var (
		outs   []CheckOutcome
		saved  *fleet.Run // the record as the saved batch left it
		events chan error // the checks' events, appended while the record is written
	)
	_, err = st.UpdateRun(ctx, runID, func(r *fleet.Run) error {
		if saved != nil {
			// The store runs f again (a database connection lost after the
			// batch was saved): the steps are in the task already, so only
			// the record's share is applied again, never the steps.
			r.Task, r.Tasks, r.Suspended, r.Last, r.OffGround, r.Coverage, r.UserTurn = saved.Task, saved.Tasks, saved.Suspended, saved.Last, saved.OffGround, saved.Coverage, false
			r.SelfReground, r.ResetBySelf = saved.SelfReground, false
			r.Checks += len(outs)
			return nil
		}
		outs = make([]CheckOutcome, 0, len(ins))
		counted := batchCoverage{checks: len(ins)}
		t := &heldTask{runs: runs}
		defer t.close()
		for _, in := range ins {
			out, err := s.checkOne(ctx, t, r, in, cov, &counted)
			if err != nil {
				return err
			}
			outs = append(outs, out)
		}
		if err := counted.save(r); err != nil {
			return err
		}
		if err := t.save(ctx); err != nil {
			return err
		}
		if err := runs.Flush(ctx); err != nil {
			return fmt.Errorf("run %s: checks not saved: %w", r.Task, err)
		}
		saved = &fleet.Run{Task: r.Task, Tasks: r.Tasks, Suspended: slices.Clone(r.Suspended), Last: r.Last, OffGround: r.OffGround, Coverage: slices.Clone(r.Coverage),
			SelfReground: slices.Clone(r.SelfReground)}
		// The steps are durable: the checks' events are appended while the
		// store writes the record (two files, synced at once).
		evs := checkEvents(ins, outs, s.now())
		events = make(chan error, 1)
		go func() { _, err := st.AppendEvents(ctx, runID, evs); events <- err }()
		return nil
	})
	if events != nil {
		if eerr := <-events; err == nil {
			err = eerr
		}
	}
	if err != nil {
		return nil, err
	}
	// laserbrain run, when it holds the agent to limits, reads the run
	// again: the checks off the ground may have reached its limit.
	s.checked()
	return outs, nil
}

// checkOne takes one check of a batch on the held run r: a reset sets the
// task aside, a goal may resume one set aside, the step is taken on the
// current task, counted for coverage and kept on the run's record.
func (s *Tracker) checkOne(ctx context.Context, t *heldTask, r *fleet.Run, in CheckInput, cov coverage.Config, counted *batchCoverage) (CheckOutcome, error) {
	out := CheckOutcome{}
	// A person spoke (user-prompt-submit) when r.UserTurn is set;
	// a user turn or a reset the agent claims without that is its
	// own: a self-reground.
	self := !r.UserTurn && (in.UserTurn || in.ResetTask || r.ResetBySelf)
	if in.ResetTask {
		if err := s.suspend(ctx, t, r); err != nil {
			return out, err
		}
	}
	if !in.KeepTask {
		if err := s.maybeResume(ctx, t, r, in.Goal, &out); err != nil {
			return out, err
		}
	}
	if r.Task == "" {
		r.Tasks++
		r.Task = fleet.TaskID(r.ID, r.Tasks)
	}
	step := in.StepInput
	step.UserTurn = step.UserTurn || r.UserTurn
	step.Resumed = out.Resumed
	out.UserTurn = step.UserTurn
	h, err := t.open(ctx, r.Task)
	if err != nil {
		return out, err
	}
	v, err := h.Run().Step(step)
	if err != nil {
		return out, fmt.Errorf("run %s: check not saved: %w", r.Task, err)
	}
	out.CheckResult, out.Task = v, r.Task
	if counts(in.Via) && cov.Mode != coverage.Off {
		if err := s.countCheck(cov, counted, r, in, v); err != nil {
			return out, err
		}
	}
	r.UserTurn, r.ResetBySelf = false, false
	if self {
		r.SelfReground = append(r.SelfReground, fleet.SelfRegroundKey(fleet.TaskNumber(r.ID, r.Task), v.Step))
		out.SelfReground = true
	}
	r.Checks++
	if v.Drifting {
		r.OffGround++
	} else {
		r.OffGround = 0
	}
	r.Last = &fleet.LastCheck{Step: v.Step, Reason: v.Reason, Drifting: v.Drifting, Phi: v.Phi,
		Advice: v.Advice, Ground: v.Ground, At: s.now()}
	return out, nil
}

// checkEvents are the events a batch of checks records on its run: each
// check's, after a reset_task when the check set its task aside.
func checkEvents(ins []CheckInput, outs []CheckOutcome, at time.Time) []fleet.RunEvent {
	evs := make([]fleet.RunEvent, 0, len(outs))
	for i, out := range outs {
		if ins[i].ResetTask {
			evs = append(evs, fleet.RunEvent{At: at, Kind: fleet.KindTask, Name: "reset_task"})
		}
		if out.SelfReground {
			evs = append(evs, fleet.RunEvent{At: at, Kind: fleet.KindSession, Name: "self-reground",
				Text: "the agent regrounded its own run (no person spoke): " + out.Ground})
		}
		ok := !out.Drifting
		ls := ""
		if out.Laserscore != nil {
			ls = *out.Laserscore
		}
		evs = append(evs, fleet.RunEvent{At: at, Kind: fleet.KindCheck, Name: out.Reason, OK: laserbrain.OKOf(ok),
			Text: checkText(out.Reason, out.Phi, ls)})
	}
	return evs
}

// checkText is a check event's text: the reason, Φ to two places and the
// laserscore ("%s Φ=%.2f %s", spaces trimmed), without fmt's reflection.
func checkText(reason string, phi float64, laserscore string) string {
	b := make([]byte, 0, len(reason)+len(laserscore)+16)
	b = append(b, reason...)
	b = append(b, " Φ="...)
	b = strconv.AppendFloat(b, phi, 'f', 2, 64)
	b = append(b, ' ')
	b = append(b, laserscore...)
	return strings.TrimSpace(string(b))
}

// heldTask is the tasks a batch of checks opened, each held until the
// batch is saved (a batch moves to another task on a reset or a resume).
type heldTask struct {
	runs    laserbrain.Store
	handles map[string]laserbrain.RunHandle
	order   []string
}

// open holds task id for the batch (once).
func (t *heldTask) open(ctx context.Context, id string) (laserbrain.RunHandle, error) {
	if h := t.handles[id]; h != nil {
		return h, nil
	}
	h, err := t.runs.OpenRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.handles == nil {
		t.handles = map[string]laserbrain.RunHandle{}
	}
	t.handles[id] = h
	t.order = append(t.order, id)
	return h, nil
}

// read is task id as the batch has it: held, or read from the store.
func (t *heldTask) read(ctx context.Context, id string) (*laserbrain.Run, error) {
	if h := t.handles[id]; h != nil {
		return h.Run(), nil
	}
	return t.runs.ReadRun(ctx, id)
}

func (t *heldTask) save(ctx context.Context) error {
	for _, id := range t.order {
		if err := t.handles[id].Save(ctx); err != nil {
			return fmt.Errorf("run %s: check not saved: %w", id, err)
		}
	}
	return nil
}

func (t *heldTask) close() {
	for _, id := range t.order {
		_ = t.handles[id].Close()
	}
}

// ResetTask sets the run's current task aside; the next check grounds a new
// one. It returns how many tasks are suspended.
func (s *Tracker) ResetTask(ctx context.Context, runID string) (int, error) {
	st, err := s.Fleet()
	if err != nil {
		return 0, err
	}
	runs, err := s.Runs()
	if err != nil {
		return 0, err
	}
	r, err := st.UpdateRun(ctx, runID, func(r *fleet.Run) error {
		// Unless a person spoke, the next check's new ground is the
		// agent's own: a self-reground.
		r.ResetBySelf = !r.UserTurn
		return s.suspend(ctx, &heldTask{runs: runs}, r)
	})
	if err != nil {
		return 0, err
	}
	// The next check grounds a new task: until it comes, the run's tool
	// calls are unmeasured.
	_, err = st.AppendEvent(ctx, runID, fleet.RunEvent{At: s.now(), Kind: fleet.KindTask, Name: "reset_task"})
	return len(r.Suspended), err
}

func (s *Tracker) suspend(ctx context.Context, t *heldTask, r *fleet.Run) error {
	if r.Task == "" {
		return nil
	}
	lr, err := t.read(ctx, r.Task)
	if errors.Is(err, laserbrain.ErrNoRun) {
		r.Task = ""
		return nil
	}
	if err != nil {
		return err
	}
	if g := lr.GroundGoal(); g != "" {
		r.Suspended = append(r.Suspended, fleet.Suspended{Goal: g, Task: r.Task})
		if len(r.Suspended) > maxSuspended {
			r.Suspended = r.Suspended[len(r.Suspended)-maxSuspended:]
		}
	}
	r.Task = ""
	return nil
}

// maybeResume swaps a suspended task back in when goal overlaps its ground
// strictly more than the live ground (no threshold: a comparison). Only
// with a live task: right after a reset the next check opens a fresh one.
func (s *Tracker) maybeResume(ctx context.Context, t *heldTask, r *fleet.Run, goal string, out *CheckOutcome) error {
	if r.Task == "" || len(r.Suspended) == 0 {
		return nil
	}
	lr, err := t.read(ctx, r.Task)
	if err != nil {
		if errors.Is(err, laserbrain.ErrNoRun) {
			return nil
		}
		return err
	}
	toks := laserbrain.Norm(goal)
	best, bestSim := -1, laserbrain.Overlap(toks, laserbrain.Norm(lr.GroundGoal()))
	for i, sp := range r.Suspended {
		if sim := laserbrain.Overlap(toks, laserbrain.Norm(sp.Goal)); sim > bestSim {
			best, bestSim = i, sim
		}
	}
	if best < 0 {
		return nil
	}
	resumed := r.Suspended[best]
	r.Suspended = append(r.Suspended[:best], r.Suspended[best+1:]...)
	// The live task goes aside in its place even when it never grounded
	// (its first check was ungrammatical): it still counts, as the
	// reference counts it, though no goal can resume it.
	r.Suspended = append(r.Suspended, fleet.Suspended{Goal: lr.GroundGoal(), Task: r.Task})
	if len(r.Suspended) > maxSuspended {
		r.Suspended = r.Suspended[len(r.Suspended)-maxSuspended:]
	}
	r.Task = resumed.Task
	out.Resumed = resumed.Goal
	return nil
}

// Task reads the run's current task (nil when it has none yet).
func (s *Tracker) Task(ctx context.Context, r fleet.Run) (*laserbrain.Run, error) {
	return s.task(ctx, r, true)
}

// TaskState is Task for a caller that reads the task's verdicts and
// judgment, not its steps: without its history where the store reads a
// run so (laserbrain.StateReader). A long run's end, and each gate call
// on it, then reads a few KB, not every step.
func (s *Tracker) TaskState(ctx context.Context, r fleet.Run) (*laserbrain.Run, error) {
	return s.task(ctx, r, false)
}

func (s *Tracker) task(ctx context.Context, r fleet.Run, history bool) (*laserbrain.Run, error) {
	if r.Task == "" {
		return nil, nil
	}
	runs, err := s.Runs()
	if err != nil {
		return nil, err
	}
	read := runs.ReadRun
	if sr, ok := runs.(laserbrain.StateReader); ok && !history {
		read = sr.ReadRunState
	}
	lr, err := read(ctx, r.Task)
	if errors.Is(err, laserbrain.ErrNoRun) {
		return nil, nil
	}
	return lr, err
}

// Judge is the whole-run judgment of the run's current task, recorded on
// the run — unmeasured (coverage.Judge) when the run made tool calls and
// no check since its last ground.
func (s *Tracker) Judge(ctx context.Context, runID string) (laserbrain.Judgment, error) {
	st, err := s.Fleet()
	if err != nil {
		return laserbrain.Judgment{}, err
	}
	r, err := st.Run(ctx, runID)
	if err != nil {
		return laserbrain.Judgment{}, err
	}
	lr, err := s.TaskState(ctx, r)
	if err != nil {
		return laserbrain.Judgment{}, err
	}
	if lr == nil {
		lr = laserbrain.NewRun(laserbrain.RunOptions{ID: runID})
	}
	events, err := st.Events(ctx, runID)
	if err != nil {
		return laserbrain.Judgment{}, err
	}
	// A run that worked and never spelled its state again has no verdict
	// of its own: it is unmeasured, whatever its ground said.
	j := coverage.Judge(lr.Phronesis(), coverage.Measure(events))
	if r.Judgment != j.Verdict {
		if _, err := st.UpdateRun(ctx, runID, func(x *fleet.Run) error { x.Judgment = j.Verdict; return nil }); err != nil {
			return j, err
		}
	}
	return j, nil
}

// Observe records a completed tool call on the run: as an event (kept once
// per id, so two hook layers firing for one call count it once), in the
// machine's evidence counters, and on the run's current task, so the next
// check is corroborated when it succeeded. counted reports whether the
// machine's evidence took the call (a caller that must keep the call for
// later knows whether to count it itself). A replay (Replaying) never
// counts, and hands the call to the task even when the event was recorded
// before: the replayed try may have been cut off between the two.
func (s *Tracker) Observe(ctx context.Context, runID string, ev fleet.RunEvent, obs laserbrain.Event) (added, counted bool, err error) {
	st, err := s.Fleet()
	if err != nil {
		return false, false, err
	}
	added, err = st.AppendEvent(ctx, runID, ev)
	if err != nil || (!added && !s.Replaying) {
		return added, false, err
	}
	runs, err := s.Runs()
	if err != nil {
		return added, false, err
	}
	if added && !s.Replaying {
		if err := runs.RecordToolEvent(ctx, obs); err != nil {
			return added, false, err
		}
		counted = true
	}
	r, err := st.Run(ctx, runID)
	if err != nil || r.Task == "" {
		return added, counted, err
	}
	h, err := runs.OpenRun(ctx, r.Task)
	if err != nil {
		return added, counted, err
	}
	defer h.Close()
	if h.Created() {
		return added, counted, nil // no check yet: the run's evidence starts at its first check
	}
	h.Run().Saw(obs)
	return added, counted, h.Save(ctx)
}
