package ponder

import (
	"fmt"
	"strings"
)

// Exit codes of the ponder binary (SPEC.md §3), the project's one table
// (laserkit's internal/cli, `ponder help exit-codes`): usage mistakes and
// the engine's refusals are both 2 (their kinds tell them apart), 1 is a
// finding (doctor's problems), 8 a local write that failed.
const (
	ExitOK      = 0
	ExitFinding = 1 // doctor found a problem
	ExitUsage   = 2 // bad flag, missing argument, out-of-range value (1 before the shared table)
	ExitState   = 2 // stateError: the engine refused
	ExitOCA     = 3 // PONDER_OCA=on and OCA unusable, or an OCA write failed
	ExitFailure = 8 // a local write failed (disk full, EIO)
)

// Error is a refusal: its exit code, a one-line message and, where the
// refusal is about a list (violations, missing paths, ungraded units), the
// whole list.
type Error struct {
	Code     int      `json:"code"`
	Kind     string   `json:"kind"` // usage | stateError | ocaRequired
	Message  string   `json:"message"`
	Expected *string  `json:"expected"` // the command expected next, for out-of-order refusals
	Details  []string `json:"details"`
}

func (e *Error) Error() string {
	if len(e.Details) == 0 {
		return e.Message
	}
	return e.Message + ":\n  " + strings.Join(e.Details, "\n  ")
}

func usageErr(format string, a ...any) *Error {
	return &Error{Code: ExitUsage, Kind: "usage", Message: fmt.Sprintf(format, a...), Details: []string{}}
}

func stateErr(details []string, format string, a ...any) *Error {
	if details == nil {
		details = []string{}
	}
	return &Error{Code: ExitState, Kind: "stateError", Message: fmt.Sprintf(format, a...), Details: details}
}

func ocaErr(format string, a ...any) *Error {
	return &Error{Code: ExitOCA, Kind: "ocaRequired", Message: fmt.Sprintf(format, a...), Details: []string{}}
}

// outOfOrder refuses a command that the session's phase does not allow,
// naming the command expected instead.
func outOfOrder(cmd, expected, why string) *Error {
	e := stateErr(nil, "%s is out of order: %s; expected `ponder %s`", cmd, why, expected)
	e.Expected = &expected
	return e
}
