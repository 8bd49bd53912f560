// Package cli is the one place where the binaries turn errors into exit codes.
//
// Commands return errors; they never call os.Exit. A command that wants a
// particular exit code returns an *ExitError (see Exit and Exitf). Flag and
// argument mistakes become usage errors, whose code each binary chooses
// (laserbrain: 2, "bad input"; ponder: 1, "usage error").
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// IOStreams are the standard streams a command reads and writes. Tests pass
// buffers; main passes the process's own streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// System returns the process's own streams.
func System() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// IsTerminal reports whether w is a terminal (used to decide whether to show
// progress). Buffers and pipes are not.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ExitError asks the binary to exit with Code. When Silent is set the command
// has already said everything it had to say and nothing more is printed.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit wraps err so that the binary exits with code and prints err.
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// Exitf is Exit with a formatted message.
func Exitf(code int, format string, a ...any) error {
	return &ExitError{Code: code, Err: fmt.Errorf(format, a...)}
}

// SilentExit exits with code without printing anything more.
func SilentExit(code int) error { return &ExitError{Code: code, Silent: true} }

// UsageError marks a mistake in how the command was called.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// ExactArgs, RangeArgs, MaximumNArgs and NoArgs are cobra argument validators
// whose failures are usage errors.
func ExactArgs(n int) cobra.PositionalArgs { return wrapArgs(cobra.ExactArgs(n)) }
func RangeArgs(min, max int) cobra.PositionalArgs {
	return wrapArgs(cobra.RangeArgs(min, max))
}
func MaximumNArgs(n int) cobra.PositionalArgs               { return wrapArgs(cobra.MaximumNArgs(n)) }
func MinimumNArgs(n int) cobra.PositionalArgs               { return wrapArgs(cobra.MinimumNArgs(n)) }
func ArbitraryArgs(cmd *cobra.Command, args []string) error { return nil }
func NoArgs(cmd *cobra.Command, args []string) error {
	return wrapArgs(cobra.NoArgs)(cmd, args)
}

func wrapArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return &UsageError{Err: err}
		}
		return nil
	}
}

// Run executes root with args on streams and returns the exit code. It is the
// single mapping from errors to exit codes for a binary.
func Run(root *cobra.Command, args []string, streams *IOStreams, usageCode int) int {
	return Code(root.Name(), Execute(root, args, streams), streams.ErrOut, usageCode)
}

// Execute runs root with args on streams, flag and argument mistakes turned
// into *UsageError, and returns the error unprinted: for a binary that
// reports some errors itself (as JSON, say) before Code maps it.
func Execute(root *cobra.Command, args []string, streams *IOStreams) error {
	prepare(root, streams)
	root.SetArgs(args)
	return root.Execute()
}

// IsUsage reports whether err is a usage mistake: a *UsageError or one of
// the errors cobra builds for an unknown command or flag.
func IsUsage(err error) bool {
	var usage *UsageError
	return errors.As(err, &usage) || isCobraUsage(err)
}

// Code maps err to an exit code, printing it to errOut as "name: message".
func Code(name string, err error, errOut io.Writer, usageCode int) int {
	if err == nil {
		return 0
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if !exit.Silent && exit.Err != nil {
			// err, not exit.Err: wrappers around the ExitError add context.
			fmt.Fprintf(errOut, "%s: %s\n", name, oneLine(err.Error()))
		}
		return exit.Code
	}
	if IsUsage(err) {
		fmt.Fprintf(errOut, "%s: %s\n", name, oneLine(err.Error()))
		fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", name)
		return usageCode
	}
	fmt.Fprintf(errOut, "%s: %s\n", name, oneLine(err.Error()))
	return 1
}

// isCobraUsage recognises the errors cobra itself builds for an unknown
// command or subcommand; cobra gives them no type of their own.
func isCobraUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") ||
		strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "unknown shorthand flag") ||
		strings.HasPrefix(msg, "required flag")
}

func prepare(c *cobra.Command, streams *IOStreams) {
	c.SilenceErrors = true
	c.SilenceUsage = true
	c.SetIn(streams.In)
	c.SetOut(streams.Out)
	c.SetErr(streams.ErrOut)
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &UsageError{Err: err}
	})
	for _, sub := range c.Commands() {
		prepare(sub, streams)
	}
}

func oneLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return strings.ReplaceAll(s, "\n", "; ")
}
