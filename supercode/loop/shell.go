package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"

	"github.com/laserkit/laserkit/internal/shellquote"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/gate"
)

// killGrace is how long a child has between SIGINT and SIGKILL.
const killGrace = 5 * time.Second

// maxRecorded bounds one step's recorded output (per stream).
const maxRecorded = 64 << 20

// middleware is the interpreter's exec handler: agent and judge are the
// loop's builtins; every other command passes the operator gate, runs in
// its own process group, and is journaled with what replay needs.
func (l *Loop) middleware(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(ctx context.Context, argv []string) error {
		if ctx.Err() != nil {
			return stopped(ctx)
		}
		switch argv[0] {
		case roleAgent:
			return l.agent(ctx, argv)
		case roleJudge:
			return l.judge(ctx, argv)
		}
		return l.command(ctx, argv)
	}
}

// command runs one external command of SCRIPT.
func (l *Loop) command(ctx context.Context, argv []string) error {
	hc := interp.HandlerCtx(ctx)
	key := l.key(hc.Pos)
	if rec := l.replay.take(key, argv); rec != nil {
		return l.replayStep(hc, rec)
	}
	path, lerr := interp.LookPathDir(hc.Dir, hc.Env, argv[0])
	kind := recShell
	if lerr == nil && l.isVerifier(path) {
		kind = recCI
	}
	l.mu.Lock()
	step := l.nextStep()
	l.mu.Unlock()
	if lerr != nil {
		fmt.Fprintf(hc.Stderr, "%s: command not found\n", argv[0])
		l.replay.liveDone()
		return l.doneShell(Record{Step: step, Key: key, Kind: kind, Argv: argv, Status: intp(127)})
	}
	if refusal, result := l.gate(ctx, argv); refusal != "" {
		fmt.Fprintf(hc.Stderr, "%s\n", refusal)
		l.recordEvent(ctx, fleet.RunEvent{Kind: fleet.KindGate, Name: "shell", OK: laserbrain.OKFalse, Text: refusal, Result: result}, step)
		l.replay.liveDone()
		return l.doneShell(Record{Step: step, Key: key, Kind: recGate, Argv: argv, Status: intp(statusRefused), Reason: refusal})
	}
	rec := Record{Step: step, Key: key, Kind: kind, Argv: argv}
	stdout, stderr, closeRec, err := l.recorders(hc, &rec)
	if err != nil {
		return l.halt(statusInternal, "recording step %d: %v", step, err)
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args = argv
	cmd.Dir, cmd.Env = hc.Dir, execEnv(hc.Env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinOf(hc.Stdin), stdout, stderr
	code, interrupted, err := l.runChild(ctx, cmd, !l.interactive)
	cut := closeRec()
	rec.Cut = cut
	if interrupted {
		return stopped(ctx)
	}
	if err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", argv[0], err)
		code = statusRefused
	}
	rec.Status = intp(code)
	l.replay.liveDone()
	if kind == recCI {
		l.mu.Lock()
		l.st.PendingCI, l.st.LastCI = intp(code), intp(code)
		if code == 0 {
			// ./ci going green is progress: the no-op count starts over.
			l.st.NoopStreak, l.st.WorkPending = 0, false
		} else {
			l.st.WorkPending = true
		}
		rec.State = l.st.clone()
		l.mu.Unlock()
		l.event(ctx, fleet.KindTool, "ci", code == 0, fmt.Sprintf("./ci exit %d", code), step)
	}
	return l.doneShell(rec)
}

// doneShell journals a shell step and returns its status to the shell.
func (l *Loop) doneShell(rec Record) error {
	if err := l.j.append(rec); err != nil {
		return l.halt(statusInternal, "%v", err)
	}
	return exitStatus(*rec.Status)
}

// stdinOf turns a closed stdin (a nil *os.File) into no stdin.
func stdinOf(r io.Reader) io.Reader {
	if f, ok := r.(*os.File); ok && f == nil {
		return nil
	}
	return r
}

// statusCode is the status a builtin's or step's error stands for.
func statusCode(err error) int {
	var st interp.ExitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &st):
		return int(st)
	}
	return statusInternal
}

func exitStatus(code int) error {
	if code == 0 {
		return nil
	}
	return interp.ExitStatus(uint8(code))
}

func (l *Loop) isVerifier(path string) bool {
	a, err1 := filepath.EvalSymlinks(path)
	b, err2 := filepath.EvalSymlinks(l.verifier)
	return err1 == nil && err2 == nil && a == b
}

// gate puts a command to the operator: "" lets it run, anything else is
// the refusal to print. Nobody answers a loop's SCRIPT, so the gate
// answers as it does for an unattended agent (gate.Check, the answer the
// hook gives): a command it denies is refused unless a person authorized
// exactly it (laserbrain authorize), and always while the loop's own run
// drifts or its judgment says stop; code and commands it cannot read are
// refused; a match only in data, a dry run or help runs; the project
// policy's rules apply.
func (l *Loop) gate(ctx context.Context, argv []string) (refusal string, result json.RawMessage) {
	text := shellquote.Command(argv)
	in, err := gateInput(text, interp.HandlerCtx(ctx).Dir, l.dir)
	if err != nil {
		return fmt.Sprintf("laserbrain loop: refused by the operator gate: %s — the project policy could not be read: %v. Nothing ran.", text, err), nil
	}
	in.Caller.Run = l.id
	d, _, _, err := gate.Check(ctx, loopRun{l}, in)
	if re := (*gate.ReadError)(nil); errors.As(err, &re) {
		return fmt.Sprintf("laserbrain loop: refused by the operator gate: %s — %s (%s could not be read: %v). Nothing ran.", text, d.Reason, re.What, re.Err), agentrun.GateResult(d)
	}
	switch {
	case d.UseAuthorization:
		l.note("the operator gate let %q through: a person authorized it", text)
		return "", nil
	case d.Rule == operator.RulePolicy:
		l.note("the operator gate let %q through: %s", text, d.Reason)
		return "", nil
	case d.Action != operator.Deny:
		return "", nil
	}
	why := in.Analysis.Why
	if why == "" {
		why = strings.Join(d.Labels, "; ")
	}
	refusal = "laserbrain loop: refused by the operator gate: " + text + " — " + why + ". " + d.Reason
	if d.Authorizable {
		refusal += " Nothing ran; a person can authorize exactly this command with laserbrain authorize."
	} else {
		refusal += " Nothing ran."
	}
	return refusal, agentrun.GateResult(d)
}

// loopPresence says who answers a loop's SCRIPT: nobody.
const loopPresence = "laserbrain loop: nobody answers a loop's SCRIPT"

// gateInput is the gate's input for a command SCRIPT runs in dir: its
// analysis, the project policy with SCRIPT's own journal (runDir) open to
// it, and who runs it — the agent loop, with nobody there.
func gateInput(text, dir, runDir string) (gate.Input, error) {
	in := gate.Input{Caller: agentrun.Caller{Agent: "loop", Dir: dir, Presence: operator.Unattended, PresenceWhy: loopPresence},
		Analysis: shell.Analyze(text, dir)}
	pol, err := agentrun.LoadPolicy(dir, policyschema.Validate)
	if err != nil {
		return in, err
	}
	if runDir != "" {
		pol.Own = []string{runDir}
	}
	in.Policy = pol
	return in, nil
}

// GateDecision is the loop's gate for a command SCRIPT runs in dir before
// the run's state is read (gate.Decide on gateInput).
func GateDecision(text, dir, runDir string) (shell.Analysis, operator.Policy, operator.Decision, error) {
	in, err := gateInput(text, dir, runDir)
	if err != nil {
		return in.Analysis, in.Policy, operator.Decision{}, err
	}
	return in.Analysis, in.Policy, gate.Decide(in), nil
}

// loopRun is the gate's source for SCRIPT's commands: the loop's run in
// the fleet it runs in. A run that cannot be read is one with no task to
// check (the loop's own drift is read when it can be); authorizations are
// looked for in the loop's fleet, for its run and the agent loop.
type loopRun struct{ l *Loop }

func (s loopRun) RunState(ctx context.Context, _ agentrun.Caller) (operator.RunState, fleet.Run, bool, error) {
	rs := operator.RunState{Read: true, PresenceWhy: loopPresence}
	st, err := s.l.sup.Fleet()
	if err != nil {
		return rs, fleet.Run{}, false, nil
	}
	run, err := st.Run(ctx, s.l.id)
	if err != nil {
		return rs, fleet.Run{}, false, nil
	}
	if task, err := s.l.sup.Task(ctx, run); err == nil {
		agentrun.AttachTask(&rs, task)
	}
	return rs, run, true, nil
}

func (s loopRun) Grants(ctx context.Context, _ agentrun.Caller, _ fleet.Run, _ bool, action string) ([]fleet.Authorization, error) {
	st, err := s.l.sup.Fleet()
	if err != nil {
		return nil, nil // no store: no authorization
	}
	return fleet.Grants(ctx, st, s.l.fleetID, s.l.id, "loop", action, time.Now().UTC())
}

func (s loopRun) Spend(ctx context.Context, _ fleet.Run, grants []fleet.Authorization) (fleet.Authorization, bool, error) {
	st, err := s.l.sup.Fleet()
	if err != nil {
		return fleet.Authorization{}, false, err
	}
	return fleet.Spend(ctx, st, grants, s.l.id, time.Now().UTC())
}

// execEnv is the exported part of the shell's environment.
func execEnv(env expand.Environ) []string {
	var out []string
	env.Each(func(name string, vr expand.Variable) bool {
		if vr.Exported && vr.IsSet() && vr.Kind == expand.String {
			out = append(out, name+"="+vr.Str)
		}
		return true
	})
	return out
}

// runChild runs cmd; with group, in a process group of its own, which is
// then stopped whole. When ctx ends, the child (its group) gets SIGINT,
// then SIGKILL after killGrace (at once after a second signal).
// interrupted reports that ctx ended it; err that it could not start.
//
// Sessions always get their own group (Claude Code's MCP servers, hooks
// and shells go with it). SCRIPT's commands do too unless the loop runs
// on a terminal: there they stay in its foreground group, so a command
// that talks to the terminal (an editor, a prompt) is not stopped by job
// control, and the terminal's Ctrl-C reaches them directly.
func (l *Loop) runChild(ctx context.Context, cmd *exec.Cmd, group bool) (code int, interrupted bool, err error) {
	if group {
		// Kept: what the confinement set (its namespaces).
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Setpgid = true
	}
	cmd.WaitDelay = killGrace
	if err := cmd.Start(); err != nil {
		return 0, false, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		interrupted = true
		target := cmd.Process.Pid
		if group {
			target = -target
		}
		_ = syscall.Kill(target, syscall.SIGINT)
		select {
		case werr = <-done:
		case <-time.After(killGrace):
			_ = syscall.Kill(target, syscall.SIGKILL)
			werr = <-done
		case <-l.hardKill:
			_ = syscall.Kill(target, syscall.SIGKILL)
			werr = <-done
		}
	}
	ps := cmd.ProcessState
	if ps == nil {
		return 0, interrupted, werr
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), interrupted, nil
	}
	return ps.ExitCode(), interrupted, nil
}

// recorders wrap a step's stdout and stderr so what SCRIPT reads back (a
// pipe, $(…)) is kept under ops/ for replay. Output going to the loop's own
// streams or into a file is not kept: replay has no need to write it again.
// done closes the files and reports whether a cap was reached.
func (l *Loop) recorders(hc interp.HandlerContext, rec *Record) (stdout, stderr io.Writer, done func() bool, err error) {
	var files []*recorder
	wrap := func(w io.Writer, name string) (io.Writer, string, error) {
		if w == nil || !l.readBack(w) {
			return w, "", nil
		}
		rel := filepath.Join("ops", fmt.Sprintf("%d.%s", rec.Step, name))
		f, err := os.Create(filepath.Join(l.dir, rel))
		if err != nil {
			return nil, "", err
		}
		r := &recorder{w: w, f: f}
		files = append(files, r)
		return r, rel, nil
	}
	if hc.Stdout != nil && hc.Stdout == hc.Stderr {
		w, rel, err := wrap(hc.Stdout, "out")
		if err != nil {
			return nil, nil, nil, err
		}
		rec.Out, rec.Combined = rel, rel != ""
		stdout, stderr = w, w
	} else {
		if stdout, rec.Out, err = wrap(hc.Stdout, "out"); err != nil {
			return nil, nil, nil, err
		}
		if stderr, rec.Err, err = wrap(hc.Stderr, "err"); err != nil {
			return nil, nil, nil, err
		}
	}
	return stdout, stderr, func() bool {
		cut := false
		for _, r := range files {
			r.mu.Lock()
			cut = cut || r.cut
			r.f.Close()
			r.mu.Unlock()
		}
		return cut
	}, nil
}

// readBack reports whether SCRIPT can read back what is written to w: a
// pipe or an in-memory writer ($(…)), not the loop's own streams, a
// terminal or a file.
func (l *Loop) readBack(w io.Writer) bool {
	if w == l.stdout || w == l.stderr {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return true
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

type recorder struct {
	w   io.Writer
	f   *os.File
	n   int64
	cut bool
	mu  sync.Mutex
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	if r.n < maxRecorded {
		k := min(int64(len(p)), maxRecorded-r.n)
		_, _ = r.f.Write(p[:k])
		r.n += k
		r.cut = r.cut || k < int64(len(p))
	} else if len(p) > 0 {
		r.cut = true
	}
	r.mu.Unlock()
	return r.w.Write(p)
}

// replayStep answers a completed step from the journal: its stdin is
// drained (when it is a pipe SCRIPT made), its recorded output written
// where SCRIPT reads it back, its state restored, its status returned.
func (l *Loop) replayStep(hc interp.HandlerContext, rec *Record) error {
	l.drain(hc.Stdin)
	emit := func(rel string, w io.Writer) {
		if rel == "" || w == nil || !l.readBack(w) {
			return
		}
		f, err := os.Open(filepath.Join(l.dir, rel))
		if err != nil {
			return
		}
		_, _ = io.Copy(w, f)
		f.Close()
	}
	emit(rec.Out, hc.Stdout)
	if !rec.Combined {
		emit(rec.Err, hc.Stderr)
	}
	if rec.State != nil {
		l.mu.Lock()
		l.st = rec.State.clone()
		l.mu.Unlock()
	}
	status := 0
	if rec.Status != nil {
		status = *rec.Status
	}
	return exitStatus(status)
}

// drain reads a pipe SCRIPT made to its end, so the writer on the other
// side is not blocked by a step that is not really running.
func (l *Loop) drain(in io.Reader) {
	f, ok := in.(*os.File)
	if !ok || f == nil || f == l.stdin {
		return
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	_, _ = io.Copy(io.Discard, f)
}

// replayer holds the completed steps of the run being resumed, by key.
// Replay lasts until the first live step: after one, nothing more is taken
// from the journal, since the run has gone past what it recorded.
type replayer struct {
	mu     sync.Mutex
	byKey  map[string]*Record
	active bool
	total  int
	used   int
}

func newReplayer(recs []Record) *replayer {
	rp := &replayer{byKey: map[string]*Record{}, active: true}
	for i := range recs {
		r := &recs[i]
		if r.Phase != "" || r.Key == "" {
			continue
		}
		switch r.Kind {
		case recShell, recCI, recGate, recAgent, recJudge:
			rp.byKey[r.Key] = r
			rp.total++
		}
	}
	return rp
}

// take returns the journaled step for key when replay is on and the step
// ran the same argv; nil means: run it live.
func (rp *replayer) take(key string, argv []string) *Record {
	if rp == nil {
		return nil
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if !rp.active {
		return nil
	}
	r := rp.byKey[key]
	if r == nil || !slices.Equal(r.Argv, argv) {
		return nil
	}
	delete(rp.byKey, key)
	rp.used++
	return r
}

// liveDone ends replay: a step ran live and finished.
func (rp *replayer) liveDone() {
	if rp == nil {
		return
	}
	rp.mu.Lock()
	rp.active = false
	rp.mu.Unlock()
}

// left is how many journaled steps were not replayed.
func (rp *replayer) left() int {
	if rp == nil {
		return 0
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return len(rp.byKey)
}
