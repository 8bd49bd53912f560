package loop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// The loops of a laserbrain home, as a person sees and stops them: list,
// status and cancel. A running loop holds its run directory's lock for as
// long as it runs, and names itself in run.json (Process): its pid and the
// kernel's start time of that pid. Whether a loop runs is read off the
// lock, never off the pid; the pid is only believed while the lock is held
// and the process it names started when the loop said it did, so a pid the
// kernel gave to another process since is never signalled.

// Process is the loop process that runs a run now.
type Process struct {
	PID int `json:"pid"`
	// Start is when the process started, in clock ticks after boot
	// (/proc/PID/stat, field 22): with the pid, it names one process.
	Start uint64 `json:"start"`
	// Home is the loop directory of the laserbrain home it runs in.
	Home string `json:"home"`
}

// selfProcess is this process, running a run of home.
func selfProcess(home string) *Process {
	p := &Process{PID: os.Getpid(), Home: home}
	p.Start, _ = procStart(p.PID)
	return p
}

// procStart reads a process's start time from /proc.
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses, so
	// the fields are counted from the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// StepInfo is one journal record as list and status show it.
type StepInfo struct {
	Step   int       `json:"step"`
	Kind   string    `json:"kind"`
	Phase  string    `json:"phase,omitempty"` // "start": the step was in flight
	What   string    `json:"what,omitempty"`  // its argv, or the service
	Status *int      `json:"status,omitempty"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// RunInfo is one loop run of a home.
type RunInfo struct {
	Run    string `json:"run"`
	State  string `json:"state"` // running, resumable or finished (RunBusy, RunResumable, RunFinished)
	Reason string `json:"reason,omitempty"`
	Script string `json:"script"`
	// Repo is the working directory the loop runs in.
	Repo      string    `json:"repository"`
	Iteration int       `json:"iteration"`
	Soak      int       `json:"soak,omitempty"`    // the last soak judge call's consecutive passes,
	SoakOf    int       `json:"soak_of,omitempty"` // of how many
	Started   time.Time `json:"started"`
	LastStep  *StepInfo `json:"last_step,omitempty"`
	PID       int       `json:"pid,omitempty"` // the loop process, while it runs
	ExitCode  *int      `json:"exit_code,omitempty"`
}

// ListOptions are one `laserbrain loop list`.
type ListOptions struct {
	Home string // where runs live ("" = DefaultHome)
	All  bool   // finished runs too
}

// List returns the runs of the home that are running or can be resumed
// (with All, the finished ones too), oldest first.
func List(o ListOptions) ([]RunInfo, error) {
	home, err := homeOf(o.Home)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(home)
	if errors.Is(err, fs.ErrNotExist) {
		return []RunInfo{}, nil
	}
	if err != nil {
		return nil, fail(KindFailure, "%v", err)
	}
	out := []RunInfo{}
	for _, e := range ents {
		if !e.IsDir() || fleet.ValidateRunID(e.Name()) != nil {
			continue
		}
		ri, _, err := readRun(filepath.Join(home, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // not a run directory (no run.json)
		}
		if err != nil {
			return nil, fail(KindFailure, "run %s: %v", e.Name(), err)
		}
		if ri.State == RunFinished && !o.All {
			continue
		}
		out = append(out, ri)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

func homeOf(h string) (string, error) {
	if h != "" {
		return h, nil
	}
	d, err := DefaultHome()
	if err != nil {
		return "", fail(KindFailure, "%v", err)
	}
	return d, nil
}

// readRun reads one run directory: run.json, its state (off the lock) and
// its journal.
func readRun(dir string) (RunInfo, []Record, error) {
	m, err := readMeta(dir)
	if err != nil {
		return RunInfo{}, nil, err
	}
	recs, err := readJournal(filepath.Join(dir, "steps.jsonl"))
	if err != nil {
		return RunInfo{}, nil, err
	}
	ri := RunInfo{Run: m.ID, Script: m.Script, Repo: m.Dir, Started: m.Created, ExitCode: m.ExitCode}
	ri.State, ri.Reason = runState(dir)
	if ri.State == RunBusy && m.Process != nil {
		ri.PID = m.Process.PID
	}
	if st := lastState(recs); st != nil {
		ri.Iteration = st.Iteration
		if st.FinalMode == "soak" {
			ri.Soak, ri.SoakOf = st.FinalPassed, st.FinalOf
		}
	}
	if len(recs) > 0 {
		last := recs[len(recs)-1]
		s := stepInfo(last)
		ri.LastStep = &s
		if last.Phase == "start" {
			// The step in flight may have opened an iteration.
			ri.Iteration = max(ri.Iteration, last.Iteration)
		}
	}
	return ri, recs, nil
}

// lastState is the loop's state after the last completed step.
func lastState(recs []Record) *state {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].State != nil {
			return recs[i].State
		}
	}
	return nil
}

func stepInfo(r Record) StepInfo {
	s := StepInfo{Step: r.Step, Kind: r.Kind, Phase: r.Phase, Status: r.Status, Reason: r.Reason, At: r.At}
	switch {
	case len(r.Argv) > 0:
		s.What = strings.Join(r.Argv, " ")
	case r.Service != "":
		s.What = r.Service
	}
	if len(s.What) > 120 {
		s.What = s.What[:117] + "..."
	}
	return s
}

// VerdictInfo is the last verdict of a run, as status shows it.
type VerdictInfo struct {
	Step    int    `json:"step"`
	Judge   string `json:"judge"`
	Status  int    `json:"status"`
	Mode    string `json:"mode,omitempty"`
	Passed  *bool  `json:"passed,omitempty"`
	Soak    *int   `json:"soak,omitempty"`
	SoakOf  int    `json:"soak_of,omitempty"`
	Summary string `json:"summary,omitempty"`
	Reason  string `json:"reason,omitempty"` // an escalation or a failure
}

// Budgets are what a run has left of its limits ("" and nil: no limit).
type Budgets struct {
	MaxIters       int    `json:"max_iters"`
	ItersLeft      int    `json:"iterations_left"`
	Budget         int64  `json:"budget,omitempty"`
	TokensUsed     int64  `json:"tokens_used"`
	TokensLeft     *int64 `json:"tokens_left,omitempty"`
	Timeout        string `json:"timeout,omitempty"`
	TimeLeft       string `json:"time_left,omitempty"` // of the invocation running now
	NoopStreak     int    `json:"noop_streak"`
	NoopLimit      int    `json:"noop_limit"`
	InvocationFrom string `json:"invocation_started,omitempty"`
}

// StatusInfo is `laserbrain loop status RUN`.
type StatusInfo struct {
	RunInfo
	Journal string       `json:"journal"` // the run directory
	Steps   []StepInfo   `json:"last_steps"`
	Verdict *VerdictInfo `json:"verdict,omitempty"`
	Budgets Budgets      `json:"budgets"`
}

// StatusOptions are one `laserbrain loop status`.
type StatusOptions struct {
	Run   string
	Home  string
	Steps int       // how many of the journal's last steps (0: 10)
	Now   time.Time // the clock (zero: time.Now)
	// Fleet, when set, is the fleet store that tells a loop of another
	// home (one sharing this store) from no loop at all.
	Fleet fleet.Store
}

// Status reads one run of the home: its journal's last steps, the current
// verdict and the budgets it has left.
func Status(ctx context.Context, o StatusOptions) (StatusInfo, error) {
	dir, err := runDirOf(ctx, o.Home, o.Run, o.Fleet)
	if err != nil {
		return StatusInfo{}, err
	}
	ri, recs, err := readRun(dir)
	if err != nil {
		return StatusInfo{}, fail(KindFailure, "run %s: %v", o.Run, err)
	}
	m, _ := readMeta(dir)
	si := StatusInfo{RunInfo: ri, Journal: dir, Steps: []StepInfo{}}
	n := o.Steps
	if n <= 0 {
		n = 10
	}
	for _, r := range recs[max(0, len(recs)-n):] {
		si.Steps = append(si.Steps, stepInfo(r))
	}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Kind != recJudge || r.Phase != "" || r.Status == nil {
			continue
		}
		si.Verdict = &VerdictInfo{Step: r.Step, Judge: r.Service, Status: *r.Status, Mode: r.Mode, Passed: r.Passed,
			Soak: r.Soak, SoakOf: r.SoakTarget, Summary: r.Summary, Reason: r.Reason}
		break
	}
	st := lastState(recs)
	if st == nil {
		st = &state{}
	}
	b := Budgets{MaxIters: m.Settings.MaxIters, ItersLeft: max(0, m.Settings.MaxIters-st.Iteration),
		Budget: m.Settings.Budget, TokensUsed: st.Tokens, NoopStreak: st.NoopStreak, NoopLimit: noopLimit}
	if m.Settings.Budget > 0 {
		left := max(0, m.Settings.Budget-st.Tokens)
		b.TokensLeft = &left
	}
	if m.Settings.Timeout > 0 {
		b.Timeout = m.Settings.Timeout.String()
		// --timeout counts from the start of each invocation: the last
		// run or resume record.
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].Kind == recRun || recs[i].Kind == recResume {
				b.InvocationFrom = recs[i].At.Format(time.RFC3339)
				if ri.State == RunBusy {
					now := o.Now
					if now.IsZero() {
						now = time.Now()
					}
					b.TimeLeft = max(0, m.Settings.Timeout-now.Sub(recs[i].At)).Round(time.Second).String()
				}
				break
			}
		}
	}
	si.Budgets = b
	return si, nil
}

// runDirOf is RUN's directory in the home, or a usage error saying why
// there is none: not a run id, a loop of another home (its drift run is in
// the fleet store, its journal is not here), or no such loop.
func runDirOf(ctx context.Context, h, run string, st fleet.Store) (string, error) {
	if err := fleet.ValidateRunID(run); err != nil {
		return "", fail(KindUsage, "%v", err)
	}
	home, err := homeOf(h)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(home, run)
	if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
		return dir, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fail(KindFailure, "run %s: %v", run, err)
	}
	if elsewhere(ctx, st, run) {
		return "", fail(KindUsage, "run %s is a loop of another laserbrain home: its journal is not in %s (see it, and stop it, from the home it runs in)", run, home)
	}
	return "", fail(KindUsage, "no loop run %s in %s (laserbrain loop list shows the runs of this home)", run, home)
}

// elsewhere reports whether the fleet store knows run as a loop's drift
// run: a loop started from another home that shares this store.
func elsewhere(ctx context.Context, st fleet.Store, run string) bool {
	if st == nil {
		return false
	}
	r, err := st.Run(ctx, run)
	return err == nil && r.Agent == "loop"
}

// CancelOptions are one `laserbrain loop cancel`.
type CancelOptions struct {
	Run  string
	Home string
	// Wait is how long to wait for the loop to stop (0: 60 s).
	Wait  time.Duration
	Fleet fleet.Store // as StatusOptions.Fleet
}

// CancelResult is how a cancelled loop ended.
type CancelResult struct {
	Run       string `json:"run"`
	PID       int    `json:"pid"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Resumable bool   `json:"resumable"`
	Resume    string `json:"resume,omitempty"` // the command that goes on with it
}

// DefaultCancelWait is how long cancel waits for the loop to stop.
const DefaultCancelWait = 60 * time.Second

// Cancel stops a running loop of the home as SIGINT does: the step in
// flight is killed, the journal is left intact and the run can go on with
// --resume. It refuses a run that is not running, one of another home,
// and a process that is not the loop (a pid reused since), and waits for
// the loop to end.
func Cancel(ctx context.Context, o CancelOptions) (CancelResult, error) {
	dir, err := runDirOf(ctx, o.Home, o.Run, o.Fleet)
	if err != nil {
		return CancelResult{}, err
	}
	res := CancelResult{Run: o.Run}
	lockPath := filepath.Join(dir, "lock")
	if lk, err := fsx.LockFile(lockPath, 20*time.Millisecond); err == nil {
		lk.Unlock()
		state, reason := runState(dir)
		hint := ""
		if state == RunResumable {
			hint = "; it can go on with laserbrain loop --resume " + o.Run
		}
		return res, fail(KindUsage, "run %s is not running (%s: %s)%s", o.Run, state, reason, hint)
	}
	m, err := readMeta(dir)
	if err != nil {
		return res, fail(KindFailure, "run %s: %v", o.Run, err)
	}
	pr := m.Process
	if pr == nil || pr.PID <= 0 {
		return res, fail(KindFailure, "run %s is running, but its run.json names no process to signal", o.Run)
	}
	home, _ := homeOf(o.Home)
	if !sameDir(pr.Home, home) {
		return res, fail(KindUsage, "run %s runs in another laserbrain home (%s, not %s): cancel it from there", o.Run, pr.Home, home)
	}
	res.PID = pr.PID
	// Hold the process (a pidfd on Linux: signals go to this process and
	// no other, even if the pid is reused after), then check it is the loop.
	proc, err := os.FindProcess(pr.PID)
	if err != nil {
		return res, fail(KindUsage, "run %s: its process %d is gone", o.Run, pr.PID)
	}
	defer func() { _ = proc.Release() }()
	if start, err := procStart(pr.PID); err != nil || start != pr.Start {
		return res, fail(KindUsage, "run %s: process %d is not the loop that took the run (it started at another time); nothing was signalled", o.Run, pr.PID)
	}
	if lk, err := fsx.LockFile(lockPath, 20*time.Millisecond); err == nil {
		lk.Unlock()
		return res, fail(KindUsage, "run %s ended meanwhile; nothing was signalled", o.Run)
	}
	if now, err := readMeta(dir); err != nil || now.Process == nil || *now.Process != *pr {
		return res, fail(KindUsage, "run %s changed hands meanwhile; nothing was signalled (run laserbrain loop cancel again)", o.Run)
	}
	if err := proc.Signal(syscall.SIGINT); err != nil {
		return res, fail(KindFailure, "run %s: signalling process %d: %v", o.Run, pr.PID, err)
	}
	wait := o.Wait
	if wait <= 0 {
		wait = DefaultCancelWait
	}
	lk, err := fsx.LockFile(lockPath, wait)
	if err != nil {
		return res, fail(KindFailure, "run %s was sent SIGINT but did not stop within %s (laserbrain loop cancel %s again kills the step in flight at once)", o.Run, wait, o.Run)
	}
	lk.Unlock()
	m, err = readMeta(dir)
	if err != nil {
		return res, fail(KindFailure, "run %s: %v", o.Run, err)
	}
	res.ExitCode, res.Reason, res.Resumable = m.ExitCode, m.Reason, m.Resumable || m.Status != "ended"
	if res.Resumable {
		res.Resume = "laserbrain loop --resume " + o.Run
	}
	return res, nil
}

func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
