package ponder

import (
	"fmt"
	"strings"
)

// ErrorKind is what kind of refusal an Error is. Its name is the one the
// project's exit-code table (`ponder help exit-codes`) gives the code the
// ponder binary exits with: usage mistakes and the engine's refusals both
// exit 2 (their kinds tell them apart), doctor's problems 1, OCA 3, a local
// write that failed 8.
type ErrorKind string

// The kinds of refusal.
const (
	KindUsage    ErrorKind = "usage"       // bad flag, missing argument, out-of-range value
	KindState    ErrorKind = "stateError"  // the engine refused: the session's state does not allow it
	KindOCA      ErrorKind = "ocaRequired" // PONDER_OCA=on and OCA unusable, or an OCA write failed
	KindProblems ErrorKind = "problems"    // doctor found a problem
	KindFailure  ErrorKind = "failure"     // a local write failed (disk full, EIO)
)

// Error is a refusal: its kind, a one-line message and, where the refusal
// is about a list (violations, missing paths, ungraded units), the whole
// list.
type Error struct {
	Kind     ErrorKind `json:"kind"`
	Message  string    `json:"message"`
	Expected *string   `json:"expected"` // the command expected next, for out-of-order refusals
	Details  []string  `json:"details"`
}

// ExitKind names the refusal as the exit-code table does.
func (e *Error) ExitKind() string { return string(e.Kind) }

func (e *Error) Error() string {
	if len(e.Details) == 0 {
		return e.Message
	}
	return e.Message + ":\n  " + strings.Join(e.Details, "\n  ")
}

func usageErr(format string, a ...any) *Error {
	return &Error{Kind: KindUsage, Message: fmt.Sprintf(format, a...), Details: []string{}}
}

func stateErr(details []string, format string, a ...any) *Error {
	if details == nil {
		details = []string{}
	}
	return &Error{Kind: KindState, Message: fmt.Sprintf(format, a...), Details: details}
}

func ocaErr(format string, a ...any) *Error {
	return &Error{Kind: KindOCA, Message: fmt.Sprintf(format, a...), Details: []string{}}
}

// outOfOrder refuses a command that the session's phase does not allow,
// naming the command expected instead.
func outOfOrder(cmd, expected, why string) *Error {
	e := stateErr(nil, "%s is out of order: %s; expected `ponder %s`", cmd, why, expected)
	e.Expected = &expected
	return e
}
