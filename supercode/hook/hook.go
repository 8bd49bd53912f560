package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/reap"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/hookserver"
)

// The events laserbrain handles.
const (
	PreToolUse         = client.PreToolUse
	PostToolUse        = client.PostToolUse
	PostToolUseFailure = client.PostToolUseFailure
	UserPromptSubmit   = client.UserPromptSubmit
	Stop               = client.Stop
	SessionStart       = client.SessionStart
	SessionEnd         = client.SessionEnd
)

// Commands lists every hook (event, subcommand name), in the order they
// are installed.
var Commands = client.Events

// Output is a hook's whole reply, as the client's adapter encoded it
// (client.Output: its exit status and what it prints), or the word that
// another binary must answer it.
type Output struct {
	client.Output
	// Delegate: this binary cannot read the store LASERBRAIN_STORE names
	// (agentrun.ErrStoreElsewhere); Run hands the event to laserbrain.
	Delegate bool
}

// MaxInput bounds what a hook reads; a larger event is refused, not half-read.
const MaxInput = 8 << 20

// Handler answers hook events. Its Tracker opens stores only when an
// event needs them.
type Handler struct {
	Tracker *agentrun.Tracker
	// Client is the client whose payloads the hook reads and whose format
	// it answers in ("": Claude Code).
	Client client.Name
	// Format is how a Claude-shaped client's pre-tool-use answers a
	// denial: "exit" (status 2, reason on stderr; the default) or "json"
	// (permissionDecision on stdout).
	Format string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// QueueDir holds the events observed while the store's database was
	// out of reach (default: queue/ under $LASERBRAIN_HOME).
	QueueDir string
	// PinDir holds what the gate read for a call until its post-tool-use
	// (default: pins/ under $LASERBRAIN_HOME).
	PinDir string
	// ValidatePolicy checks a project policy file against its schema
	// (operator/policyschema.Validate); nil in a binary that links no
	// schema validator, which then hands a policy laserbrain has not
	// checked yet to laserbrain (Run's delegate).
	ValidatePolicy operator.PolicyValidator
	// Act is how an outward call asked about in the person's client goes
	// through the supervisor (nil: it does not; see Act).
	Act *Act

	replayID string // the queue entry being replayed
}

// event is one event being answered: its payload, and what answering it
// reads of the world, each at most once and only when the answer needs it
// (the caller, whose binding lookup reads /proc and a file; the project
// policy; coverage's configuration; the caller's run). It lives as long as
// the event: a Handler keeps nothing of one event for the next.
type event struct {
	client.Payload
	arrived time.Time // when it came: a queued entry keeps its time
	input   []byte    // as it came, for the queue

	caller    *agentrun.Caller
	callerFor [3]string // the session, directory and client it was read for
	policy    *operator.Policy
	coverage  *coverage.Config
	run       *foundRun
}

// foundRun is the caller's run as the event looked it up.
type foundRun struct {
	run   fleet.Run
	found bool
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now().UTC()
	}
	return time.Now().UTC()
}

// Handle answers one event, read and answered through the client's
// adapter. It never panics and never exits 1: an internal failure denies
// in pre-tool-use ("guard error: …", in the client's form of a denial) and
// is logged and passed over (exit 0) in every other event, which only
// observe.
func (h *Handler) Handle(ctx context.Context, ev client.EventName, input []byte) (ans Output) {
	ad, err := h.adapter()
	if err != nil {
		ad, _ = client.For(client.Claude, "")
		return reply(ad, ev, h.failed(ev, err))
	}
	defer func() {
		if p := recover(); p != nil {
			ans = reply(ad, ev, h.failed(ev, fmt.Errorf("internal: %v", p)))
		}
	}()
	p, err := h.decode(ad, ev, input)
	if err != nil {
		return reply(ad, ev, h.failed(ev, err))
	}
	e := &event{Payload: p, arrived: h.now(), input: input}
	a, err := h.handle(ctx, e)
	if errors.Is(err, agentrun.ErrStoreElsewhere) || errors.Is(err, operator.ErrPolicyUnchecked) {
		return Output{Delegate: true}
	}
	if err != nil {
		a = h.failed(ev, err)
	}
	if ev == PreToolUse {
		a.Call = e.Tool
	}
	h.deliverMessages(ctx, e, &a)
	return reply(ad, ev, a)
}

// handle answers one event read.
func (h *Handler) handle(ctx context.Context, e *event) (client.Reply, error) {
	ev := e.Name
	if ev == PreToolUse {
		return h.preToolUse(ctx, e)
	}
	// An observer first records what waits in the queue (in order, before
	// its own event), if the store is back.
	if _, ferr := h.Flush(ctx); ferr != nil && !isUnreachable(ferr) {
		h.log(fmt.Sprintf("laserbrain hook %s: flushing the queue: %v", ev, ferr))
	}
	var a client.Reply
	var err error
	switch ev {
	case PostToolUse, PostToolUseFailure:
		a, err = h.postToolUse(ctx, e)
	case UserPromptSubmit:
		a, err = h.userPromptSubmit(ctx, e)
	case Stop:
		a, err = h.stop(ctx, e)
	case SessionStart:
		a, err = h.sessionStart(ctx, e)
	case SessionEnd:
		err = h.sessionEnd(ctx, e)
	case client.Notification:
		err = h.notification(ctx, e)
	default:
		err = fmt.Errorf("unknown hook event %q", ev)
	}
	if isUnreachable(err) {
		// The store's database is out of reach: keep the event for later.
		if qerr := h.enqueue(e, nil); qerr != nil {
			return client.Reply{}, fmt.Errorf("%v, and the event could not be queued: %w", err, qerr)
		}
		return h.unreachable(ev, e, err), nil
	}
	return a, err
}

func (h *Handler) adapter() (client.Adapter, error) {
	name := h.Client
	if name == "" {
		name = client.Claude
	}
	return client.For(name, h.Format)
}

// decode reads one event through the adapter (at most MaxInput bytes).
func (h *Handler) decode(ad client.Adapter, ev client.EventName, input []byte) (client.Payload, error) {
	if len(input) > MaxInput {
		return client.Payload{}, fmt.Errorf("event larger than %d bytes", MaxInput)
	}
	e, err := ad.Decode(ev, input, h.getenv)
	if err != nil {
		return e, err
	}
	if e.Session != "" && fleet.ValidateRunID(e.Session) != nil {
		return e, fmt.Errorf("session_id %q is not a session id", e.Session)
	}
	return e, nil
}

// reply encodes an answer for the client.
func reply(ad client.Adapter, ev client.EventName, a client.Reply) Output {
	return Output{Output: ad.Encode(ev, a)}
}

// failed is the answer to an internal failure: fail closed in the gate,
// log and go on in an observer.
func (h *Handler) failed(ev client.EventName, err error) client.Reply {
	if ev == PreToolUse {
		return deny("guard error: " + err.Error())
	}
	msg := fmt.Sprintf("laserbrain hook %s: %v", ev, err)
	h.log(msg)
	return client.Reply{Log: msg}
}

// log appends an observer's failure to hook-errors.log beside the fleet
// store, best effort: the hook's stderr is only seen in verbose transcripts.
func (h *Handler) log(msg string) {
	dir, err := fleet.DefaultDir()
	if err != nil {
		return
	}
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "hook-errors.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%s %s\n", h.now().Format(time.RFC3339), msg)
	f.Close()
}

// caller is who sent e: the session and directory of its payload, the
// client it came from, and the rest from the environment; looked up again
// only if one of the first three changed.
func (h *Handler) caller(e *event) agentrun.Caller {
	key := [3]string{e.Session, e.Cwd, string(e.Client)}
	if e.caller != nil && e.callerFor == key {
		return *e.caller
	}
	c := h.Tracker.Caller(e.Session, e.Cwd)
	if e.Client != "" {
		c.Client = string(e.Client)
	}
	e.caller, e.callerFor = &c, key
	return c
}

// getenv reads the caller's environment: the Tracker's, else this
// process's.
func (h *Handler) getenv(k string) string {
	if h.Tracker != nil && h.Tracker.Getenv != nil {
		return h.Tracker.Getenv(k)
	}
	return os.Getenv(k)
}

// Binary is what a hook process takes from the binary it runs in.
type Binary struct {
	// ValidatePolicy checks a project policy (nil in laserbrain-gate,
	// which hands an unchecked one to laserbrain).
	ValidatePolicy operator.PolicyValidator
	// Stores opens the stores (nil in laserbrain-gate: the local files
	// alone; see agentrun.Tracker.Stores).
	Stores func() (agentrun.Stores, error)
}

// Run is one hook process: it reads the event from stdin (at most
// MaxInput), answers it with a fresh handler reading client c's payloads
// (format: how a Claude-shaped client's denial is answered) and writes the
// answer; the result is the exit status. `laserbrain hook EVENT` and
// laserbrain-gate both run it, each as b.
func Run(ctx context.Context, ev client.EventName, c client.Name, format string, b Binary, stdin io.Reader, stdout, stderr io.Writer) int {
	if sock := os.Getenv(broker.EnvSocket); sock != "" {
		// Confined: laserbrain run's broker answers, outside the tree.
		return relay(ctx, sock, ev, c, format, stdin, stdout, stderr)
	}
	return Serve(ctx, ev, c, format, b, Env{}, stdin, stdout, stderr)
}

// Env is the caller a hook answers for, when that is not this process.
type Env struct {
	// Getenv reads its environment (nil: this process's).
	Getenv func(string) string
	// Dir is its working directory ("": this process's).
	Dir string
	// InSupervisor: this is the laserbrain run process supervising the
	// caller (agentrun.Tracker.InSupervisor).
	InSupervisor bool
	// Act: the caller is confined, and its supervisor carries out the
	// outward calls a person approves in their client (nil: it does not).
	Act *Act
}

// Serve answers one event here, as Run does outside a confined run, for a
// caller (the zero Env: this process): the
// supervisor's broker answers its agent's hooks with it in its own
// process.
func Serve(ctx context.Context, ev client.EventName, c client.Name, format string, b Binary, caller Env, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, StoreDeadline)
	defer cancel()
	h := &Handler{Tracker: &agentrun.Tracker{Stores: b.Stores, Getenv: caller.Getenv, Dir: caller.Dir, InSupervisor: caller.InSupervisor}, Client: c, Format: format, ValidatePolicy: b.ValidatePolicy, Act: caller.Act}
	defer closeSoon(h.Tracker)
	input, err := io.ReadAll(io.LimitReader(stdin, MaxInput+1))
	if err != nil {
		// Unreadable input is answered like an empty event, with the read
		// error as the reason.
		input = nil
	}
	ans := h.Handle(ctx, ev, input)
	if ans.Delegate && err == nil {
		closeSoon(h.Tracker)
		// The laserbrain it hands the event to has a StoreDeadline of its
		// own, from its own start: this process's, nearly spent on a
		// database that hangs, would kill it just before its answer.
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), handOnDeadline)
		defer dcancel()
		return delegate(dctx, ev, c, format, input, stdout, stderr)
	}
	if err != nil {
		ad, aerr := h.adapter()
		if aerr == nil {
			ans = reply(ad, ev, h.failed(ev, fmt.Errorf("reading the event: %v", err)))
		}
	}
	io.WriteString(stdout, ans.Stdout)
	io.WriteString(stderr, ans.Stderr)
	return ans.Exit
}

// StoreDeadline bounds what one hook spends on the stores, from its
// start: every statement and every connection of the event's handling
// runs under it. Past it pre-tool-use denies what needed the store ("cannot
// read the run in time": irreversible and outward actions wait, reversible
// ones go on, halts known on the machine hold) and the observers queue
// their event on the machine, recorded by a later hook exactly once. A
// hook therefore answers within StoreDeadline and its own start and exit;
// client.HookTimeout, what install writes into each client's settings,
// leaves room above that, so the client never kills a hook that was about
// to answer (a killed hook is a non-blocking error: the call would go on).
const StoreDeadline = 4 * time.Second

// closeGrace bounds how long a hook waits, after it answered, for its
// stores to close: a connection to a database that stopped answering would
// hold the process for pgx's clean close (15 s), and the client waits for
// the process to exit. What the local files keep is flushed well within.
const closeGrace = time.Second

// closeSoon closes the tracker's stores, giving up after closeGrace
// on those that may wait on another machine; local files close at once.
func closeSoon(sup *agentrun.Tracker) {
	if !sup.CloseMayWait() {
		_ = sup.Close()
		return
	}
	done := make(chan struct{})
	go func() {
		_ = sup.Close()
		close(done)
	}()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// handOnDeadline bounds a hook's wait for another process that answers
// the event for it (the supervisor's broker, the laserbrain a
// laserbrain-gate hands a database event to): that process gets
// StoreDeadline of its own, closeGrace to close its stores after it
// answered, and its start and exit.
const handOnDeadline = StoreDeadline + closeGrace + 2*time.Second

// relay hands one event to laserbrain run's broker (supercode/broker) and
// copies its answer; a broker that does not answer in time fails closed.
func relay(ctx context.Context, sock string, ev client.EventName, c client.Name, format string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, handOnDeadline)
	defer cancel()
	h := &Handler{Client: c, Format: format}
	ad, err := h.adapter()
	if err != nil {
		ad, _ = client.For(client.Claude, "")
	}
	input, err := io.ReadAll(io.LimitReader(stdin, MaxInput+1))
	if err != nil {
		input = nil
	}
	argv := []string{"hook", client.Subcommand(ev)}
	if c != "" && c != client.Claude {
		argv = append(argv, "--client", string(c))
	}
	if ev == PreToolUse && format != "" {
		argv = append(argv, "--format", format)
	}
	dir, _ := os.Getwd()
	var out, errb bytes.Buffer
	code, rerr := broker.Relay(ctx, sock, argv, os.Getenv, dir, bytes.NewReader(input), &out, &errb)
	if rerr == nil && code != 0 && code != 2 {
		// Not an answer (0) or a refusal (2): the broker's hook did not
		// run to its end (the broker could not run it, or it was killed).
		// Handed on, a client would read the status as a non-blocking
		// error and go on: it fails closed here instead.
		rerr = fmt.Errorf("the supervisor's hook ended with status %d: %s", code, strings.TrimSpace(errb.String()))
	}
	if rerr != nil {
		why := rerr.Error()
		if ctx.Err() != nil {
			why = "the supervisor gave no answer in time (" + handOnDeadline.String() + ")"
		}
		a := h.failed(ev, fmt.Errorf("%s; nothing irreversible or outward runs without it", why))
		if ev == PreToolUse {
			a.Reason = "laserbrain: refused: cannot reach the supervisor of this confined run: " + why +
				". Do not retry it in another form; tell the user if this goes on."
		}
		r := reply(ad, ev, a)
		io.WriteString(stdout, r.Stdout)
		io.WriteString(stderr, r.Stderr)
		return r.Exit
	}
	_, _ = io.Copy(stdout, &out)
	_, _ = io.Copy(stderr, &errb)
	return code
}

// delegate answers an event with the laserbrain binary beside this one:
// the lean laserbrain-gate links no database driver, so an event that
// needs a store in PostgreSQL goes to laserbrain, which reads it — through
// the long-lived hook server of that laserbrain (supercode/hookserver),
// started if none listens, which answers on a connection it keeps; as a
// laserbrain process of its own only when no server can be started. Only
// such events pay for it; the rest never get here. A server that gives no
// answer in time is a refusal (an observer's failure is logged), never a
// pass.
func delegate(ctx context.Context, ev client.EventName, c client.Name, format string, input []byte, stdout, stderr io.Writer) int {
	h := &Handler{Client: c, Format: format}
	ad, err := h.adapter()
	if err != nil {
		ad, _ = client.For(client.Claude, "")
	}
	fail := func(msg string) int {
		a := deny("guard error: " + msg)
		if ev != PreToolUse {
			a = client.Reply{Log: fmt.Sprintf("laserbrain hook %s: %s", ev, msg)}
			h.log(a.Log)
		}
		r := ad.Encode(ev, a)
		io.WriteString(stdout, r.Stdout)
		io.WriteString(stderr, r.Stderr)
		return r.Exit
	}
	name := client.Subcommand(ev)
	self, err := os.Executable()
	if err != nil || name == "" {
		return fail(fmt.Sprintf("%v, and this event cannot be handed to laserbrain", agentrun.ErrStoreElsewhere))
	}
	lb := filepath.Join(filepath.Dir(self), "laserbrain")
	if fi, err := os.Stat(lb); err != nil || !fi.Mode().IsRegular() || filepath.Clean(lb) == filepath.Clean(self) {
		return fail(fmt.Sprintf("%v, and there is no laserbrain beside %s to read it", agentrun.ErrStoreElsewhere, self))
	}
	args := []string{"hook", name}
	if c != "" && c != client.Claude {
		args = append(args, "--client", string(c))
	}
	if ev == PreToolUse && format != "" {
		args = append(args, "--format", format)
	}
	dir, _ := os.Getwd()
	var out, errb bytes.Buffer
	code, err := hookserver.Relay(ctx, lb, args, os.Environ(), dir, input, &out, &errb)
	if errors.Is(err, hookserver.ErrNoServer) {
		h.log(fmt.Sprintf("laserbrain hook %s: %v; answered by a laserbrain process instead", ev, err))
		return delegateProcess(ctx, lb, args, input, stdout, stderr, fail)
	}
	if err == nil && code != 0 && code != 2 {
		// Not an answer (0) or a refusal (2): the server's hook did not
		// run to its end. A client would read the status as a
		// non-blocking error and go on.
		err = fmt.Errorf("the hook server's answer ended with status %d: %s", code, strings.TrimSpace(errb.String()))
	}
	if err != nil {
		return fail(err.Error() + "; nothing irreversible or outward runs without it")
	}
	_, _ = io.Copy(stdout, &out)
	_, _ = io.Copy(stderr, &errb)
	return code
}

// delegateProcess answers the event with a process of laserbrain (lb args).
func delegateProcess(ctx context.Context, lb string, args []string, input []byte, stdout, stderr io.Writer, fail func(string) int) int {
	cmd := exec.CommandContext(ctx, lb, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(input), stdout, stderr
	err := reap.Run(cmd)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	return fail(fmt.Sprintf("handing the event to %s: %v", lb, err))
}

// ParseOKStatus reads --ok-status's value: a status from 1 to 125 (0 for
// none given).
func ParseOKStatus(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 125 {
		return 0, fmt.Errorf("%s must be a status from 1 to 125, not %q", client.OKStatusFlag, v)
	}
	return n, nil
}

// Answered is a pre-tool-use hook's exit status as the installed command
// asked for it: okStatus where the answer is 0 (the command takes only
// that for an answer, so that a program put in the gate's place is a
// denial), code as it is otherwise.
func Answered(code, okStatus int) int {
	if code == 0 && okStatus != 0 {
		return okStatus
	}
	return code
}
