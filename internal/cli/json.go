package cli

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// The --json conventions of both binaries:
//
//   - A result is one JSON document on stdout, indented by two spaces
//     (WriteJSON). Only a stream — check --stream, one verdict per input
//     line — prints one compact object per line (WriteJSONLine).
//   - <, > and & are written as they are: commands are full of them.
//   - A list is [] when empty, never null.
//   - An error under --json is the envelope {"error": {"code", "kind",
//     "message"}} on stdout (code is the exit code, kind its name in the
//     exit-code table), besides the message on stderr. ponder's error
//     object carries its own fields too (expected, details).

// WriteJSON writes v as one indented JSON document.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteJSONLine writes v as one compact line, for streams.
func WriteJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// ErrorObject is what the envelope holds.
type ErrorObject struct {
	Code    exitCode `json:"code"`
	Kind    string   `json:"kind"`
	Message string   `json:"message"`
}

// Envelope is err as --json prints it, {"error": {...}}; nil for an error
// that asked to print nothing more (its command has printed its result).
func Envelope(cmd *cobra.Command, err error) any {
	var exit *ExitError
	if errors.As(err, &exit) && (exit.Silent || exit.Err == nil) {
		return nil
	}
	code := CodeOf(err)
	return map[string]ErrorObject{"error": {Code: code, Kind: ExitName(code, cmd.CommandPath()), Message: joinLines(err.Error())}}
}

// WantsJSON reports whether args ask for --json, read without cobra: a
// flag mistake stops cobra before it sets the flag.
func WantsJSON(args []string) bool {
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if arg == "--json" {
			return true
		}
		if v, ok := strings.CutPrefix(arg, "--json="); ok {
			b, err := strconv.ParseBool(v)
			return err == nil && b
		}
	}
	return false
}
