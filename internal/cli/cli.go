package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/envconfig"
	"github.com/laserkit/laserkit/internal/fsx"
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

// ExitError asks the binary to exit with Code. When Silent is set the command
// has already said everything it had to say and nothing more is printed.
type ExitError struct {
	Code   exitCode
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
func Exit(code exitCode, err error) error { return &ExitError{Code: code, Err: err} }

// Exitf is Exit with a formatted message.
func Exitf(code exitCode, format string, a ...any) error {
	return &ExitError{Code: code, Err: fmt.Errorf(format, a...)}
}

// Failure is Exit(ExitFailure, err): a store, file or database failed.
func Failure(err error) error { return Exit(ExitFailure, err) }

// SilentExit exits with code without printing anything more.
func SilentExit(code exitCode) error { return &ExitError{Code: code, Silent: true} }

// PassThrough exits with another program's status, printing nothing more:
// laserbrain run's agent's, the loop's SCRIPT's, a hook's answer to its
// client, a relayed command's.
func PassThrough(status int) error { return SilentExit(exitCode(status)) }

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
	if len(args) > 0 && cmd.HasAvailableSubCommands() {
		return unknownCommand(cmd, args[0])
	}
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

// Run executes root with args on streams and returns the exit code and the
// command that ran (the one the arguments named, even when it failed). It is
// the single mapping from errors to exit codes for a binary: the error goes
// to stderr, and under --json also to stdout as the error envelope.
func Run(root *cobra.Command, args []string, streams *IOStreams) (int, *cobra.Command) {
	cmd, err := Execute(root, args, streams)
	if err != nil && WantsJSON(args) {
		if env := Envelope(cmd, err); env != nil {
			_ = WriteJSON(streams.Out, env)
		}
	}
	return int(Code(cmd, err, streams.ErrOut)), cmd
}

// Execute runs root with args on streams, flag and argument mistakes turned
// into *UsageError, and returns the command that ran and its error,
// unprinted: for a binary that reports some errors itself (as JSON, say)
// before Code maps it.
func Execute(root *cobra.Command, args []string, streams *IOStreams) (*cobra.Command, error) {
	prepare(root, streams)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if cmd == nil {
		cmd = root
	}
	return cmd, err
}

// IsUsage reports whether err is a usage mistake: a *UsageError, a typed
// error of the usage kind, or one of the errors cobra builds for an unknown
// command or flag.
func IsUsage(err error) bool {
	var usage *UsageError
	if errors.As(err, &usage) || isCobraUsage(err) {
		return true
	}
	code, ok := kindCode(err)
	return ok && code == ExitUsage
}

// kinded is a library's typed error: it names its kind as the table does
// (a row's Name or Also), and the table gives its code. A library needs
// nothing of this package to be one.
type kinded interface{ ExitKind() string }

// kindCode is the code of err's kind, when err is a typed error the table
// knows.
func kindCode(err error) (exitCode, bool) {
	var k kinded
	if !errors.As(err, &k) {
		return 0, false
	}
	return codeOfKind(k.ExitKind())
}

// CodeOf is the exit code err maps to: the one place an error becomes a
// code.
func CodeOf(err error) exitCode {
	var exit *ExitError
	switch {
	case err == nil:
		return ExitOK
	case envconfig.Is(err):
		return ExitUsage
	case errors.As(err, &exit):
		return exit.Code
	case IsUsage(err):
		return ExitUsage
	}
	if code, ok := kindCode(err); ok {
		return code
	}
	return ExitFailure
}

// Code maps err to an exit code, printing it to errOut as "name: message";
// a usage mistake also names the help of the command it was made in.
func Code(cmd *cobra.Command, err error, errOut io.Writer) exitCode {
	if err == nil {
		return ExitOK
	}
	name := cmd.Root().Name()
	if envconfig.Is(err) {
		// A bad LASERBRAIN_HOME or LASERBRAIN_STORE, wherever a command
		// met it (often wrapped as a store failure): the caller's to fix.
		fmt.Fprintf(errOut, "%s: %s\n", name, joinLines(err.Error()))
		return ExitUsage
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if !exit.Silent && exit.Err != nil {
			// err, not exit.Err: wrappers around the ExitError add context.
			fmt.Fprintf(errOut, "%s: %s\n", name, joinLines(err.Error()))
		}
		return exit.Code
	}
	fmt.Fprintf(errOut, "%s: %s\n", name, joinLines(err.Error()))
	if IsUsage(err) {
		fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return ExitUsage
	}
	return CodeOf(err)
}

// RunWith is the RunE of a command built as options and a run function:
// runF when a test gives one (it reads what was parsed into opts), else
// run.
func RunWith[O any](opts *O, runF, run func(*O) error) func(*cobra.Command, []string) error {
	return func(*cobra.Command, []string) error {
		if runF != nil {
			return runF(opts)
		}
		return run(opts)
	}
}

// RunArgs is RunWith for a command that keeps its arguments in *args.
func RunArgs[O any](opts *O, args *[]string, runF, run func(*O) error) func(*cobra.Command, []string) error {
	return RunAfter(opts, func(_ *cobra.Command, a []string) error {
		*args = a
		return nil
	}, runF, run)
}

// RunAfter is RunWith after first, which takes into opts what the flags do
// not put there (the arguments, which flags were given) or refuses the
// command line with a usage error.
func RunAfter[O any](opts *O, first func(cmd *cobra.Command, args []string) error, runF, run func(*O) error) func(*cobra.Command, []string) error {
	then := RunWith(opts, runF, run)
	return func(cmd *cobra.Command, args []string) error {
		if err := first(cmd, args); err != nil {
			return err
		}
		return then(cmd, args)
	}
}

// Finish ends a program that has no command tree (a generator, a
// script's helper, a test's child process) the way a command ends: on nil
// with status 0; otherwise "prog: err" on stderr and the code CodeOf maps
// err to (a *UsageError 2, any other error 8). It does not return.
func Finish(prog string, err error) {
	code := CodeOf(err)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s\n", prog, joinLines(err.Error()))
	}
	os.Exit(int(code))
}

// isCobraUsage recognises the errors cobra itself builds for an unknown
// command or subcommand; cobra gives them no type of their own.
func isCobraUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") ||
		strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "unknown shorthand flag") ||
		strings.HasPrefix(msg, "required flag") ||
		strings.HasPrefix(msg, "invalid argument")
}

// argsAnnotation marks a command whose Args prepare has wrapped.
const argsAnnotation = "laserkit.args"

func prepare(c *cobra.Command, streams *IOStreams) {
	c.SilenceErrors = true
	c.SilenceUsage = true
	c.SetIn(streams.In)
	c.SetOut(streams.Out)
	c.SetErr(streams.ErrOut)
	c.SetFlagErrorFunc(flagError)
	if args := c.Args; args != nil && c.Annotations[argsAnnotation] == "" {
		// Before the words are checked: a flag that swallowed another
		// leaves a word over, which would be blamed instead. (Once: a
		// tree may be executed again.)
		c.Args = func(cmd *cobra.Command, words []string) error {
			if err := flagAsValue(cmd); err != nil {
				return err
			}
			return args(cmd, words)
		}
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[argsAnnotation] = "flag values checked"
	}
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	if !c.HasParent() {
		prepareRoot(c)
	}
	if _, ok := c.Annotations[exitAnnotation]; !ok && c.HasAvailableSubCommands() {
		// A command that only groups others prints its help, or refuses a
		// word that names none of them.
		SetExits(c, ExitDoc{Code: ExitUsage, When: "an unknown command or flag"})
	}
	for _, sub := range c.Commands() {
		prepare(sub, streams)
	}
}

// joinLines puts a message of several lines on one, the lines joined by
// "; " (an error that lists its causes one per line).
func joinLines(s string) string {
	s = strings.TrimRight(s, "\n")
	return strings.ReplaceAll(s, "\n", "; ")
}

// FileError maps an error reading or writing a file the caller named: a
// file or directory that is missing, not what it should be, or not
// permitted is the caller's to fix (usage, exit 2); anything else (a full
// disk, an I/O error) is a failure (exit 8).
func FileError(err error) error {
	if err == nil {
		return nil
	}
	var big *fsx.ErrTooLarge
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) || errors.As(err, &big) {
		return &UsageError{Err: err}
	}
	return Failure(err)
}
