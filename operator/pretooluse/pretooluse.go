// Package pretooluse answers one Claude Code PreToolUse event with the
// operator gate: the event on standard input, the answer as Claude Code
// reads it (exit status 2 and a reason on stderr, or hookSpecificOutput
// JSON on stdout). It links the gate and the standard library only, so the
// laserbrain-gate binary built on it starts in about a millisecond; keep it
// that way (TestGateLinksLean in cmd/laserbrain-gate).
package pretooluse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/laserkit/laserkit/operator"
)

// MaxEvent bounds what the hook reads; a larger event is refused rather
// than half-read.
const MaxEvent = 8 << 20

// Format is how a denial is answered.
type Format string

const (
	// FormatExit: exit status 2, the reason on stderr (blocks the call and
	// shows the reason to the model).
	FormatExit Format = "exit"
	// FormatJSON: permissionDecision "deny" on stdout, exit status 0.
	FormatJSON Format = "json"
)

// GuardError is an event the hook cannot read. It blocks (exit 2): exit 1
// would let Claude Code run the command.
type GuardError struct{ Err error }

func (e *GuardError) Error() string { return "guard error: " + e.Err.Error() }
func (e *GuardError) Unwrap() error { return e.Err }

func guard(format string, args ...any) error {
	return &GuardError{fmt.Errorf(format, args...)}
}

// Answer reads one event and classifies a Bash command in the event's
// working directory (cwd). Other tools are allowed. A malformed event is a
// *GuardError.
func Answer(event []byte) (operator.HookAnswer, error) {
	if len(bytes.TrimSpace(event)) == 0 {
		return operator.HookAnswer{}, guard("no event on standard input")
	}
	var ev struct {
		ToolName  *string         `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
		Cwd       string          `json:"cwd"`
	}
	if err := json.Unmarshal(event, &ev); err != nil {
		return operator.HookAnswer{}, guard("the event is not a JSON object: %w", err)
	}
	if ev.ToolName == nil {
		return operator.HookAnswer{}, guard(`the event has no "tool_name"`)
	}
	if *ev.ToolName != "Bash" {
		return operator.HookAnswer{Decision: operator.Allow}, nil
	}
	var in struct {
		Command *string `json:"command"`
	}
	if err := json.Unmarshal(ev.ToolInput, &in); err != nil || in.Command == nil {
		return operator.HookAnswer{}, guard(`a Bash event needs tool_input.command as a string`)
	}
	return operator.ClassifyIn(ev.Cwd, *in.Command, true, false).HookAnswer(), nil
}

// Run is the whole hook: it reads the event from stdin, writes the answer
// and returns the exit status. A panic is a guard error too.
func Run(stdin io.Reader, stdout, stderr io.Writer, format Format) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "guard error: internal: %v\n", p)
			code = 2
		}
	}()
	if format != FormatExit && format != FormatJSON {
		fmt.Fprintf(stderr, "guard error: --format must be exit or json, not %q\n", string(format))
		return 2
	}
	data, err := io.ReadAll(io.LimitReader(stdin, MaxEvent+1))
	switch {
	case err != nil:
		err = guard("reading the event: %w", err)
	case len(data) > MaxEvent:
		err = guard("event larger than %d bytes", MaxEvent)
	}
	var ans operator.HookAnswer
	if err == nil {
		ans, err = Answer(data)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	switch {
	case ans.Decision == operator.Deny && format == FormatExit:
		fmt.Fprintln(stderr, ans.Reason)
		return 2
	case ans.Decision != operator.Allow:
		if err := writeDecision(stdout, ans); err != nil {
			fmt.Fprintf(stderr, "guard error: %v\n", err)
			return 2
		}
	}
	return 0
}

func writeDecision(w io.Writer, ans operator.HookAnswer) error {
	var out struct {
		HookSpecificOutput struct {
			HookEventName            string `json:"hookEventName"`
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	out.HookSpecificOutput.HookEventName = "PreToolUse"
	out.HookSpecificOutput.PermissionDecision = ans.Decision.String()
	out.HookSpecificOutput.PermissionDecisionReason = ans.Reason
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	if err != nil {
		return errors.Join(errors.New("writing the answer"), err)
	}
	return nil
}
