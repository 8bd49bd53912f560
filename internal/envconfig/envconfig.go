// Package envconfig reads the environment variables a person sets to place
// laserbrain's state (LASERBRAIN_HOME), and marks a bad value as the
// caller's configuration mistake: every command reports it the same way,
// with exit 2 (internal/cli), instead of as a store failure.
package envconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ServerDir is where laserbrain's servers for one user (the gate's hook
// server) keep their sockets under the temporary directory tmp. They
// answer outside any run with the store's credentials: laserbrain run
// covers the directory inside its boundary.
func ServerDir(tmp string) string {
	return filepath.Join(tmp, fmt.Sprintf("laserbrain-%d", os.Getuid()))
}

// HomeEnv names laserbrain's home directory.
const HomeEnv = "LASERBRAIN_HOME"

// StoreEnv names the store: "local" (or unset) for the files under the
// home, or a PostgreSQL connection (supercode/backend reads it).
const StoreEnv = "LASERBRAIN_STORE"

// BrokerEnv names the socket of the supervisor's broker in a confined
// agent's environment (supercode/broker): a hook or MCP server that sees
// it hands its operation over instead of writing the store itself. Clients
// that scrub what their hooks and MCP servers inherit must pass it on.
const BrokerEnv = "LASERBRAIN_BROKER"

// Error is a configuration mistake: a variable (or a setting like one)
// whose value cannot be used. Nothing was changed.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted message.
func Errorf(format string, a ...any) error { return &Error{Err: fmt.Errorf(format, a...)} }

// Is reports whether err is, or wraps, a configuration mistake.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Home is $LASERBRAIN_HOME, or "" when it is unset or empty. A relative
// value is refused: the hooks run in the session's directory and the CLI
// in the user's, so a relative home would be a different home for each.
func Home() (string, error) {
	h := os.Getenv(HomeEnv)
	if h == "" {
		return "", nil
	}
	if !filepath.IsAbs(h) {
		return "", Errorf("%s=%s: want an absolute path (a relative home would follow each process's working directory)", HomeEnv, h)
	}
	return filepath.Clean(h), nil
}
