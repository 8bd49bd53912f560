package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/tty"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/ponder/oca"
	"github.com/laserkit/laserkit/ponder/scan"
	"github.com/laserkit/laserkit/supercode/backend"
)

// clock is the engine's time source; tests pin it.
var clock = time.Now

// localWriteFailed is the failure exit of every command that writes the
// session.
var localWriteFailed = cli.ExitDoc{Code: cli.ExitFailure, When: "a local write failed (disk full, EIO); nothing changed"}

// app is what every command shares, ponder's factory: the streams, the
// global flags, the engine (built on first use) and where the fleet's
// store is, for the halts and messages the supervisor leaves a session.
type app struct {
	streams *cli.IOStreams
	// storeConfig says where the fleet's store is (LASERBRAIN_STORE).
	storeConfig func() (backend.Config, error)
	slug        string // --slug
	json        bool   // --json
	bridge      *oca.Bridge
	engine      *ponder.Engine
	cwd         string // the working directory; the engine's root may be above it
	// reported is set once a command has printed its error itself.
	reported bool
	cmd      *cobra.Command // the command running, for its help's name
	// anyOCAMode lets doctor run under an unknown PONDER_OCA, to report it.
	anyOCAMode bool
}

// ocaModes is what PONDER_OCA accepts, for help text.
var ocaModes = strings.Join([]string{string(oca.ModeAuto), string(oca.ModeOn), string(oca.ModeOff)}, ", ")

func newApp(streams *cli.IOStreams) *app {
	return &app{streams: streams, storeConfig: backend.FromEnv}
}

// eng builds the engine on the working directory, with the OCA bridge.
func (a *app) eng() (*ponder.Engine, error) { return a.engWith(os.Getenv) }

// engWith is eng with the bridge reading its variables through getenv.
func (a *app) engWith(getenv func(string) string) (*ponder.Engine, error) {
	if a.engine != nil {
		return a.engine, nil
	}
	if v := getenv("PONDER_OCA"); !a.anyOCAMode {
		if _, ok := oca.ParseMode(v); !ok {
			return nil, cli.Usagef("PONDER_OCA=%q: want auto (the default: use OCA when it is reachable), on (require it) or off", v)
		}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	// Like git: a command run in a subdirectory works on the enclosing
	// project's .ponder rather than starting a second one.
	a.cwd = cwd
	root := ponder.FindRoot(cwd)
	a.bridge = oca.New(oca.Config{Connect: connector, Getenv: getenv, Stderr: a.streams.ErrOut, Now: clock})
	e := ponder.New(root, a.bridge)
	e.Now = clock
	e.MapLedger = true // one command per process
	e.Halts = fleetHalts{a.storeConfig}
	e.Messages = fleetMessages{a.storeConfig}
	e.Tell = func(notice string) { fmt.Fprintf(a.streams.ErrOut, "ponder: %s\n", term(notice)) }
	e.Selected = strings.TrimSpace(getenv("PONDER_SLUG"))
	e.Warn = func(msg string) { fmt.Fprintf(a.streams.ErrOut, "ponder: warning: %s\n", msg) }
	if tty.Is(a.streams.ErrOut) {
		e.Progress = func(label string) ponder.Progress { return scan.NewProgress(a.streams.ErrOut, label) }
	}
	a.engine = e
	return e, nil
}

// changed says whether the command running was given the flag name.
func (a *app) changed(name string) bool { return a.cmd != nil && a.cmd.Flags().Changed(name) }

func (a *app) close() {
	if a.bridge != nil {
		a.bridge.Close()
	}
}

// finish prints a command's outcome: the result (JSON under --json, else
// the text renderer's lines) and then the error, if any, mapped to its exit
// code. A result and an error together happen under PONDER_OCA=on when the
// local work is done but an OCA write failed.
func (a *app) finish(result any, err error, text func(w io.Writer)) error {
	isNil := isNilResult(result)
	var pe *errorJSON
	if err != nil {
		pe = errorObject(err)
	}
	if !isNil {
		if a.json {
			// A result with an error (an OCA write lost after the local
			// work, exit 3) is one object: the result, and its "error".
			if err := emitJSON(a.streams.Out, withError(result, pe)); err != nil {
				return err
			}
		} else if text != nil {
			text(a.streams.Out)
		}
	}
	if err == nil {
		return nil
	}
	a.reported = true
	if a.json && isNil {
		_ = emitJSON(a.streams.Out, map[string]any{"error": pe})
	}
	fmt.Fprintf(a.streams.ErrOut, "ponder: %s\n", term(pe.Message))
	for _, d := range capped(pe.Details) {
		fmt.Fprintf(a.streams.ErrOut, "  %s\n", term(d))
	}
	if pe.Kind == ponder.KindUsage && a.cmd != nil {
		fmt.Fprintf(a.streams.ErrOut, "Run '%s --help' for usage.\n", a.cmd.CommandPath())
	}
	return cli.SilentExit(cli.CodeOf(pe.err))
}

// appOptions are the options of a command that takes nothing but the
// global flags (--slug, --json), which are the app's.
type appOptions struct {
	// App is what every ponder command shares.
	App *app
}

// call builds the engine, makes one call of it on the session (--slug, else
// the current one) and prints the outcome (finish): the run of every command
// that calls the engine once.
func call[R any](a *app, do func(e *ponder.Engine, slug string) (R, error), text func(w io.Writer, res R)) error {
	e, err := a.eng()
	if err != nil {
		return a.finish(nil, err, nil)
	}
	res, err := do(e, a.slug)
	return a.finish(res, err, func(w io.Writer) { text(w, res) })
}

// errorJSON is a refusal as --json prints it: the engine's error, and the
// exit code the error it stands for (err) takes.
type errorJSON struct {
	Code int `json:"code"`
	*ponder.Error
	err error
}

// withError is result as --json prints it: itself without an error, else
// its fields and "error" beside them.
func withError(result any, pe *errorJSON) any {
	if pe == nil {
		return result
	}
	data, err := json.Marshal(result)
	var obj map[string]json.RawMessage
	if err != nil || json.Unmarshal(data, &obj) != nil {
		return map[string]any{"result": result, "error": pe}
	}
	e, _ := json.Marshal(pe)
	obj["error"] = e
	return obj
}

// errorObject is err as the error object --json prints: the engine's own
// refusal, else a usage mistake (exit 2), else an exit code's kind; its
// code is the one the exit-code table gives it (cli.CodeOf).
func errorObject(err error) *errorJSON {
	var (
		pe   *ponder.Error
		exit *cli.ExitError
	)
	switch {
	case errors.As(err, &pe):
	case cli.IsUsage(err):
		pe = &ponder.Error{Kind: ponder.KindUsage, Message: err.Error(), Details: []string{}}
	case errors.As(err, &exit):
		kind := ponder.ErrorKind("error")
		switch exit.Code {
		case cli.ExitUsage:
			kind = ponder.KindState
		case cli.ExitOCA:
			kind = ponder.KindOCA
		case cli.ExitFailure:
			kind = ponder.KindFailure
		}
		pe = &ponder.Error{Kind: kind, Message: err.Error(), Details: []string{}}
		return &errorJSON{Code: int(exit.Code), Error: pe, err: exit}
	default:
		// Anything else is a failure outside the call: a local write (disk
		// full, EIO) or the file system.
		pe = &ponder.Error{Kind: ponder.KindFailure, Message: err.Error(), Details: []string{}}
	}
	return &errorJSON{Code: int(cli.CodeOf(pe)), Error: pe, err: pe}
}

// isNilResult treats a typed nil pointer as no result.
func isNilResult(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

func emitJSON(w io.Writer, v any) error { return cli.WriteJSON(w, v) }

// maxInput caps what ponder reads of one input (a delta, voices, grades,
// a units list): far above any real one, and a /dev/zero or a writer that
// never stops ends at it with a clear error.
const maxInput = 16 << 20

// readInput reads FILE, or stdin for "-", up to maxInput.
func (a *app) readInput(name string) ([]byte, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = fsx.ReadCapped(a.streams.In, "standard input", maxInput)
	} else {
		data, err = fsx.ReadFileCapped(name, maxInput)
	}
	if err != nil {
		return nil, cli.FileError(err)
	}
	return data, nil
}
