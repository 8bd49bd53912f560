// Package cli is what laserbrain and ponder share at their surface: the
// project's one exit-code map (exitcodes.go, printed by `help exit-codes`),
// errors turned into exit codes in one place, the --json conventions (one
// error envelope, one indentation rule), help with examples, exit statuses
// and command groups, suggestions for mistyped commands and flags, the
// version command, and completion helpers.
//
// Commands return errors; they never call os.Exit. A command that wants a
// particular exit code returns an *ExitError (Exit, Exitf, SilentExit);
// flag and argument mistakes become usage errors (exit 2); anything else
// is a failure (exit 8).
package cli
