package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"time"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Event is a Claude Code hook event, as hook_event_name spells it.
type Event string

// The events laserbrain handles.
const (
	PreToolUse         Event = "PreToolUse"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	UserPromptSubmit   Event = "UserPromptSubmit"
	Stop               Event = "Stop"
	SessionStart       Event = "SessionStart"
	SessionEnd         Event = "SessionEnd"
)

// Commands lists every hook (event, subcommand name, matcher), in the
// order they are installed.
var Commands = agentrun.HookEvents

// Payload is a hook event's stdin object (agents.md §2): the common keys and
// each event's own.
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode"`

	ToolName     *string         `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolUseID    string          `json:"tool_use_id"`
	ToolResponse json.RawMessage `json:"tool_response"`
	DurationMS   *float64        `json:"duration_ms"`
	Error        string          `json:"error"`
	IsInterrupt  bool            `json:"is_interrupt"`

	Prompt string `json:"prompt"`

	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`

	Source string `json:"source"`
	Reason string `json:"reason"`
}

// Answer is a hook's whole reply: its exit status and what it prints.
type Answer struct {
	Exit   int
	Stdout string
	Stderr string
	// Delegate: this binary cannot read the store LASERBRAIN_STORE names
	// (agentrun.ErrStoreElsewhere); Run hands the event to laserbrain.
	Delegate bool
}

// MaxInput bounds what a hook reads; a larger event is refused, not half-read.
const MaxInput = 8 << 20

// Handler answers hook events. Its Supervisor opens stores only when an
// event needs them.
type Handler struct {
	Sup *agentrun.Supervisor
	// Format is how pre-tool-use answers a denial: "exit" (status 2, reason
	// on stderr; the default) or "json" (permissionDecision on stdout).
	Format string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// QueueDir holds the events observed while the store's database was
	// out of reach (default: queue/ under $LASERBRAIN_HOME).
	QueueDir string
	// ValidatePolicy checks a project policy file against its schema
	// (operator/policyschema.Validate); nil in a binary that links no
	// schema validator, which then hands an unchecked policy to
	// laserbrain (Run's delegate).
	ValidatePolicy operator.PolicyValidator

	replayID string // the queue entry being replayed
	input    []byte // the event as it came, for the queue
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now().UTC()
	}
	return time.Now().UTC()
}

// Handle answers one event. It never panics and never exits 1: an internal
// failure denies in pre-tool-use (exit 2, "guard error: …") and is logged
// and passed over (exit 0) in every other event, which only observe.
func (h *Handler) Handle(ctx context.Context, ev Event, input []byte) (ans Answer) {
	defer func() {
		if p := recover(); p != nil {
			ans = h.failed(ev, fmt.Errorf("internal: %v", p))
		}
	}()
	p, err := parse(ev, input)
	if err != nil {
		return h.failed(ev, err)
	}
	if ev == PreToolUse {
		h.input = input
		return h.preToolUse(ctx, p)
	}
	// An observer first records what waits in the queue (in order, before
	// its own event), if the store is back.
	if _, ferr := h.Flush(ctx); ferr != nil && !isUnreachable(ferr) {
		h.log(fmt.Sprintf("laserbrain hook %s: flushing the queue: %v", ev, ferr))
	}
	switch ev {
	case PostToolUse, PostToolUseFailure:
		err = h.postToolUse(ctx, ev, p)
	case UserPromptSubmit:
		err = h.userPromptSubmit(ctx, p)
	case Stop:
		ans, err = h.stop(ctx, p)
	case SessionStart:
		err = h.sessionStart(ctx, p)
	case SessionEnd:
		err = h.sessionEnd(ctx, p)
	default:
		err = fmt.Errorf("unknown hook event %q", ev)
	}
	if errors.Is(err, agentrun.ErrStoreElsewhere) {
		return Answer{Delegate: true}
	}
	if isUnreachable(err) {
		// The store's database is out of reach: keep the event for later.
		if qerr := h.enqueue(ev, input, nil); qerr != nil {
			return h.failed(ev, fmt.Errorf("%v, and the event could not be queued: %w", err, qerr))
		}
		return h.unreachable(ev, p, err)
	}
	if err != nil {
		return h.failed(ev, err)
	}
	return ans
}

func parse(ev Event, input []byte) (Payload, error) {
	var p Payload
	if len(input) > MaxInput {
		return p, fmt.Errorf("event larger than %d bytes", MaxInput)
	}
	if len(bytes.TrimSpace(input)) == 0 {
		return p, errors.New("no event on standard input")
	}
	if err := json.Unmarshal(input, &p); err != nil {
		return p, fmt.Errorf("the event is not a JSON object: %s", plainJSONError(err))
	}
	// A payload for another event is refused: a hook installed under the
	// wrong event must not act as if it were this one.
	if p.HookEventName != "" && p.HookEventName != string(ev) {
		return p, fmt.Errorf("this is the %s hook, but the event is %q", ev, p.HookEventName)
	}
	if p.SessionID != "" && fleet.ValidateRunID(p.SessionID) != nil {
		return p, fmt.Errorf("session_id %q is not a session id", p.SessionID)
	}
	return p, nil
}

// failed is the answer to an internal failure: fail closed in the gate,
// log and go on in an observer.
func (h *Handler) failed(ev Event, err error) Answer {
	if ev == PreToolUse {
		return Answer{Exit: 2, Stderr: "guard error: " + err.Error() + "\n"}
	}
	msg := fmt.Sprintf("laserbrain hook %s: %v", ev, err)
	h.log(msg)
	return Answer{Exit: 0, Stderr: msg + "\n"}
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

func (h *Handler) caller(p Payload) agentrun.Caller { return h.Sup.Caller(p.SessionID, p.Cwd) }

// Run is one hook process: it reads the event from stdin (at most
// MaxInput), answers it with a fresh handler and writes the answer; the
// result is the exit status. `laserbrain hook EVENT` and laserbrain-gate
// both run it; validate checks a project policy (nil in laserbrain-gate).
func Run(ctx context.Context, ev Event, format string, validate operator.PolicyValidator, stdin io.Reader, stdout, stderr io.Writer) int {
	h := &Handler{Sup: &agentrun.Supervisor{}, Format: format, ValidatePolicy: validate}
	defer h.Sup.Close()
	input, err := io.ReadAll(io.LimitReader(stdin, MaxInput+1))
	if err != nil {
		// Unreadable input is answered like an empty event, with the read
		// error as the reason.
		input = nil
	}
	ans := h.Handle(ctx, ev, input)
	if ans.Delegate && err == nil {
		h.Sup.Close()
		return delegate(ctx, ev, format, input, stdout, stderr)
	}
	if err != nil && ans.Stderr != "" {
		ans.Stderr = fmt.Sprintf("guard error: reading the event: %v\n", err)
	}
	io.WriteString(stdout, ans.Stdout)
	io.WriteString(stderr, ans.Stderr)
	return ans.Exit
}

// delegate answers an event with the laserbrain binary beside this one:
// the lean laserbrain-gate links no database driver, so an event that
// needs a store in PostgreSQL goes to laserbrain, which reads it. Only
// such events pay for the second process; the rest never get here.
func delegate(ctx context.Context, ev Event, format string, input []byte, stdout, stderr io.Writer) int {
	name := ""
	for _, c := range Commands {
		if c.Event == string(ev) {
			name = c.Name
		}
	}
	fail := func(msg string) int {
		if ev == PreToolUse {
			fmt.Fprintf(stderr, "guard error: %s\n", msg)
			return 2
		}
		fmt.Fprintf(stderr, "laserbrain hook %s: %s\n", ev, msg)
		return 0
	}
	self, err := os.Executable()
	if err != nil || name == "" {
		return fail(fmt.Sprintf("%v, and this event cannot be handed to laserbrain", agentrun.ErrStoreElsewhere))
	}
	lb := filepath.Join(filepath.Dir(self), "laserbrain")
	if fi, err := os.Stat(lb); err != nil || !fi.Mode().IsRegular() || filepath.Clean(lb) == filepath.Clean(self) {
		return fail(fmt.Sprintf("%v, and there is no laserbrain beside %s to read it", agentrun.ErrStoreElsewhere, self))
	}
	args := []string{"hook", name}
	if ev == PreToolUse {
		args = append(args, "--format", format)
	}
	cmd := exec.CommandContext(ctx, lb, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(input), stdout, stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	return fail(fmt.Sprintf("handing the event to %s: %v", lb, err))
}

// plainJSONError says what was wrong with an event in words a model reads,
// without encoding/json's Go type names ("cannot unmarshal array into Go
// struct field ... of type string").
func plainJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	t := te.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := "a " + t.Kind().String()
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.Bool:
		want = "true or false"
	case reflect.Interface:
		want = "a value"
	}
	if te.Field == "" {
		return fmt.Sprintf("want %s, got %s", want, te.Value)
	}
	return fmt.Sprintf("%s: want %s, got %s", te.Field, want, te.Value)
}
