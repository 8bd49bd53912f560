package agentrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/laserkit/laserkit/internal/tty"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// SpawnFailure is what kept the agent from running, by its name in the
// exit-code table (internal/cli chooses the code laserbrain run exits
// with; the agent's own status it passes through unchanged, and an agent
// killed by signal N is 128+N, as a shell reports it).
type SpawnFailure string

// What can keep the agent from running.
const (
	SpawnUsage       SpawnFailure = "usage"        // no command given
	SpawnSetup       SpawnFailure = "setup"        // the run could not be set up (store, fleet); the agent did not start
	SpawnNotRunnable SpawnFailure = "not-runnable" // the command exists but could not be started, or waited on
	SpawnNotFound    SpawnFailure = "not-found"    // the command was not found
)

// RunDirPrefix names a run's private directory (its clients' per-run
// settings, the supervisor's socket); under the kernel's confinement it is
// what tells a process it is inside (supercode/confine.Marker).
const RunDirPrefix = "laserbrain-run-"

// SpawnOptions describe an agent command to run under supervision.
type SpawnOptions struct {
	Agent   string   // default: the command's base name
	Goal    string   // grounds the run before the agent starts ("" = the agent's first check does)
	Command []string // the agent command and its arguments
	Dir     string   // working directory ("" = the current one)
	// Self is the absolute path of the laserbrain binary the hooks and the
	// MCP server run as.
	Self string
	// Env is the agent's base environment (nil: this process's).
	Env            []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Started, when set, is called with the run once the agent is running.
	Started func(fleet.Run, *os.Process)
	// Unattended says nobody will answer the agent's questions, whatever
	// SpawnPresence would read from the command and its standard input.
	Unattended bool
	// Ponder is the ponder session the agent works on ("" = none; the
	// caller checks it names one): it is exported to the agent as
	// PONDER_SLUG (so every ponder command it runs keeps to that session)
	// and recorded on the run. (Checked by the caller, so that the gate,
	// which links this package, does not link ponder.)
	Ponder string
	// Prepare, when set, adds the agent client's per-run configuration
	// (supercode/client's RunConfig: our hooks and MCP server for this one
	// run): it is given a private directory, removed when the run ends,
	// and returns the arguments to put before the command's own and the
	// variables to add to its environment.
	Prepare func(dir string) (args, env []string, err error)
	// Headless is why the command asks nobody, when its own arguments say
	// so (claude -p, codex exec, gemini -p, …); "" when they do not.
	Headless string
	// Confine, when set, puts the agent's command behind the kernel's
	// boundary before it starts (supercode/confine: cmd is rewritten, its
	// environment holding the run's as given): it is given the run's
	// private directory, returns a note recorded on the run and what to
	// undo once the agent has exited. (A function, so that the gate,
	// which links this package, links no confinement.)
	Confine func(cmd *exec.Cmd, run fleet.Run, dir string) (note string, done func(), err error)
	// Unconfined, when the run is not confined, says why; it is recorded
	// on the run.
	Unconfined string
	// Limits are the runaway limits the agent is held to (zero: none; see
	// limits.go), and Grace how long an agent past a limit other than the
	// timeout has to end its turn before it is sent SIGTERM (0:
	// DefaultStopGrace).
	Limits fleet.Limits
	Grace  time.Duration
	// Usage, when set, reads the model tokens the run's agent has spent so
	// far from its client's records (ok false: none found); the
	// pre-tool-use hook's question holds the agent to Limits.MaxTokens
	// and Limits.MaxCostUSD with it. (A function: how a client records its usage is the
	// client's.)
	Usage func(fleet.Run) (u fleet.Usage, ok bool, err error)
	// Recorded, when set, says whether the client's records already hold
	// the model response that asked for tool call call: a client that
	// writes its records a little after it asks its hooks is waited for
	// (up to UsageWait) before Usage is read, so a budget crossed by that
	// response holds at this call, not one or two calls late.
	Recorded func(r fleet.Run, call string) bool
	// Checkpoint, when set, is called with the registered run before the
	// agent starts and (end) after it exited, before the run is closed:
	// laserbrain run takes its undo checkpoints there. (A function, so
	// that the gate, which links this package, links no more of them.)
	Checkpoint func(ctx context.Context, run fleet.Run, end bool)
}

// SpawnResult is how the run ended.
type SpawnResult struct {
	Run fleet.Run
	// ExitCode is the agent's own status; Stopped, when a limit stopped
	// it, says which.
	ExitCode int
	Judgment laserbrain.Judgment
	Stopped  *LimitStop
}

// SpawnError is a failure that kept the agent from running.
type SpawnError struct {
	Kind SpawnFailure
	Err  error
}

func (e *SpawnError) Error() string { return e.Err.Error() }
func (e *SpawnError) Unwrap() error { return e.Err }

// ExitKind names the failure as the exit-code table does.
func (e *SpawnError) ExitKind() string { return string(e.Kind) }

// Spawn registers a run, starts the agent with the run in its environment
// (LASERBRAIN_RUN, LASERBRAIN_AGENT, LASERBRAIN_FLEET) — with the client's
// per-run configuration Prepare adds ahead of the user's own arguments,
// which are left as they are — forwards signals, waits, records the end
// and judges the run.
func (s *Tracker) Spawn(ctx context.Context, o SpawnOptions) (SpawnResult, error) {
	if len(o.Command) == 0 {
		return SpawnResult{}, &SpawnError{SpawnUsage, errors.New("no agent command given")}
	}
	dir := o.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	path, err := exec.LookPath(o.Command[0])
	if err != nil {
		kind := SpawnNotFound
		if errors.Is(err, os.ErrPermission) {
			kind = SpawnNotRunnable
		}
		return SpawnResult{}, &SpawnError{kind, fmt.Errorf("%s: %w", o.Command[0], err)}
	}
	agent := o.Agent
	if agent == "" {
		agent = filepath.Base(o.Command[0])
	}
	fid, err := fleet.ID(ctx, dir)
	if err != nil {
		return SpawnResult{}, &SpawnError{SpawnSetup, err}
	}
	st, err := s.Fleet()
	if err != nil {
		return SpawnResult{}, &SpawnError{SpawnSetup, err}
	}
	fromTerminal := tty.Is(o.Stdin)
	presence, _ := SpawnPresence(o.Headless, fromTerminal, o.Unattended)
	run := fleet.Run{ID: fleet.NewID(), Agent: agent, Fleet: fid, Dir: dir, Command: o.Command, Goal: o.Goal,
		Ponder: o.Ponder, Attended: attendedName(presence), Created: s.now()}
	if anyLimit(o.Limits) {
		lim := o.Limits
		run.Limits = &lim
	}
	if err := st.CreateRun(ctx, run); err != nil {
		return SpawnResult{}, &SpawnError{SpawnSetup, err}
	}
	if strings.TrimSpace(o.Goal) != "" {
		// The declared goal is the ground; its distance is not known.
		in := CheckInput{StepInput: laserbrain.StepInput{Goal: o.Goal, Progress: laserbrain.ProgressAdvancing}, Via: ViaGoal}
		if _, err := s.Check(ctx, run.ID, in); err != nil {
			return SpawnResult{}, &SpawnError{SpawnSetup, err}
		}
	}
	if _, err := st.AppendEvent(ctx, run.ID, fleet.RunEvent{At: s.now(), Kind: fleet.KindSession, Name: "run-start", Text: strings.Join(o.Command, " ")}); err != nil {
		return SpawnResult{}, &SpawnError{SpawnSetup, err}
	}

	args := o.Command[1:]
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	var tmp string
	if o.Prepare != nil || o.Confine != nil || anyLimit(o.Limits) {
		if tmp, err = os.MkdirTemp("", RunDirPrefix); err != nil {
			return SpawnResult{}, &SpawnError{SpawnSetup, err}
		}
		defer os.RemoveAll(tmp)
	}
	var lim *limiter
	if anyLimit(o.Limits) {
		grace := o.Grace
		if grace <= 0 {
			grace = DefaultStopGrace
		}
		l, cleanup, err := s.newLimiter(tmp, run.ID, o.Limits, grace)
		if err != nil {
			return SpawnResult{}, &SpawnError{SpawnSetup, err}
		}
		defer cleanup()
		l.usage, l.recorded = o.Usage, o.Recorded
		lim = l
	}
	if o.Prepare != nil {
		extra, extraEnv, err := o.Prepare(tmp)
		if err != nil {
			return SpawnResult{}, &SpawnError{SpawnSetup, err}
		}
		args = append(extra, args...)
		env = append(env[:len(env):len(env)], extraEnv...)
	}
	attended := "1"
	if presence == operator.Unattended {
		attended = "0"
	}
	env = append(withoutKeys(env, EnvRun, EnvAgent, EnvFleet, EnvAttended),
		EnvRun+"="+run.ID, EnvAgent+"="+agent, EnvFleet+"="+fid, EnvAttended+"="+attended)
	if o.Ponder != "" {
		env = append(withoutKeys(env, EnvPonder), EnvPonder+"="+o.Ponder)
	}
	if lim != nil {
		// The outer run's socket, if any, is asked by this run's limiter.
		env = append(withoutKeys(env, EnvControl), EnvControl+"="+lim.path)
	}

	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	note := o.Unconfined
	if o.Confine != nil {
		n, done, err := o.Confine(cmd, run, tmp)
		if err != nil {
			return SpawnResult{}, &SpawnError{SpawnSetup, fmt.Errorf("confining the agent: %w", err)}
		}
		if done != nil {
			defer done()
		}
		note = n
	}
	if note != "" {
		if _, err := st.AppendEvent(ctx, run.ID, fleet.RunEvent{At: s.now(), Kind: fleet.KindSession, Name: "confinement", Text: note}); err != nil {
			return SpawnResult{}, &SpawnError{SpawnSetup, err}
		}
	}
	if o.Checkpoint != nil {
		o.Checkpoint(ctx, run, false)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		if lim != nil {
			lim.done(0)
		}
		return SpawnResult{}, &SpawnError{SpawnNotRunnable, err}
	}
	if lim != nil {
		lim.started(cmd.Process)
	}
	if o.Started != nil {
		o.Started(run, cmd.Process)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				// A terminal already sent its interrupt to the whole
				// foreground group, agent included; sending it again would
				// be a second Ctrl-C.
				if fromTerminal && (sig == os.Interrupt || sig == syscall.SIGQUIT) {
					continue
				}
				_ = cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	code, waited := exitCode(cmd.ProcessState)
	if !waited {
		// Started, but its end could not be read: a run without a status.
		if lim != nil {
			lim.done(0)
		}
		_, _, _ = s.End(ctx, run.ID, nil, "the agent could not be waited on: "+werr.Error())
		return SpawnResult{}, &SpawnError{SpawnNotRunnable, fmt.Errorf("waiting for the agent: %w", werr)}
	}

	if o.Checkpoint != nil {
		o.Checkpoint(ctx, run, true)
	}
	res := SpawnResult{ExitCode: code}
	why := ""
	if lim != nil {
		// Nothing more is answered: the agent is gone.
		res.Stopped = lim.done(code)
		calls := lim.toolCalls()
		if _, err := st.UpdateRun(ctx, run.ID, func(r *fleet.Run) error { r.ToolCallsAsked = calls; return nil }); err != nil {
			return res, err
		}
		if res.Stopped != nil {
			why = res.Stopped.Text()
		}
	}
	run, j, err := s.End(ctx, run.ID, &code, why)
	if err != nil {
		return res, err
	}
	res.Judgment, res.Run = j, run
	return res, nil
}

// SpawnPresence says whether a person can answer the questions of an agent
// laserbrain run starts, and why: nobody when the caller says so
// (unattended), when the agent's standard input is not a terminal (nobody
// types into it: a pipe, /dev/null, a CI job), or when the command's own
// arguments ask nobody (headless: claude -p, codex exec, … — the client
// seam reads them); somebody otherwise. Its hooks read the answer from
// LASERBRAIN_ATTENDED (see Attendance).
func SpawnPresence(headless string, stdinTerminal, unattended bool) (operator.Presence, string) {
	switch {
	case unattended:
		return operator.Unattended, "laserbrain run --unattended"
	case !stdinTerminal:
		return operator.Unattended, "the agent's standard input is not a terminal"
	case headless != "":
		return operator.Unattended, headless
	}
	return operator.Attended, "the agent's standard input is a terminal"
}

// forwarded are the signals `laserbrain run` passes to the agent.
var forwarded = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// exitCode is the status a shell would report for the process that ended
// as ps says; false when there is none (the wait failed).
func exitCode(ps *os.ProcessState) (int, bool) {
	if ps == nil {
		return 0, false
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), true
	}
	return ps.ExitCode(), true
}

func withoutKeys(env []string, keys ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		drop := false
		for _, k := range keys {
			if strings.HasPrefix(kv, k+"=") {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
