package laserbrain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Evidence is the machine's record of tool calls, bumped by the PostToolUse
// hook as they complete (the reference's evidence.json). Checks read it to
// decide whether a claim of progress has successful work under it.
type Evidence struct {
	OK       int           `json:"ok"`
	Fail     int           `json:"fail"`
	At       Stamp         `json:"at"`
	Window   []WindowEntry `json:"window"`
	Progress string        `json:"progress"`
	Steps    int           `json:"steps"`
}

// WindowEntry is one recent tool call: its signature and whether it worked.
type WindowEntry struct {
	Sig string `json:"sig"`
	OK  bool   `json:"ok"`
}

// observeWindow is how many recent tool calls the progress inference reads.
const observeWindow = 6

// Record adds one completed tool call to the counters and the window, and
// re-reads observed progress from the window. A call whose outcome is
// unknown counts as not failed, as it does for Run.Saw.
func (e *Evidence) Record(ev Event, at time.Time) {
	ok := !ev.OK.Failed()
	if ok {
		e.OK++
	} else {
		e.Fail++
	}
	e.Steps++
	e.At = Stamp{at}
	e.Window = append(e.Window, WindowEntry{Sig: ev.Signature(), OK: ok})
	if len(e.Window) > observeWindow {
		e.Window = slices.Delete(e.Window, 0, len(e.Window)-observeWindow)
	}
	e.Progress, _ = InferProgress(e.Window)
}

// EvidenceSource reads the current counters. ok is false when there is no
// evidence to read (no file yet, or unreadable): a check then counts as dark.
type EvidenceSource interface {
	Evidence() (Evidence, bool)
}

// signatureMax is how many characters of the argument JSON a signature keeps.
const signatureMax = 400

// Signature identifies a tool call for repetition counting: the tool
// (Name), "|", and the arguments as Python's json.dumps(args,
// sort_keys=True) writes them, cut to 400 characters.
func (ev Event) Signature() string {
	return Signature(ev.Name, ev.Args)
}

// Signature is Event.Signature for a tool and its arguments. Arguments
// Python reads as false — none, {}, [], "", 0, false — are no arguments:
// the signature is the tool and "|" alone, as the reference writes it.
func Signature(tool string, args any) string {
	if pyFalsy(args) {
		return tool + "|"
	}
	var b strings.Builder
	writePyJSON(&b, args)
	s := b.String() // all ASCII: one byte per character
	if len(s) > signatureMax {
		s = s[:signatureMax]
	}
	return tool + "|" + s
}

// writePyJSON writes v as Python's json.dumps(v, sort_keys=True) does:
// ", " and ": " separators, every non-ASCII character escaped, floats as
// Python's repr. Values come from encoding/json (with or without UseNumber)
// or from Go callers.
func writePyJSON(b *strings.Builder, v any) { writePy(b, v, &pyJSONStyle) }

// Thresholds of the progress inference (the reference's observe.py).
const (
	circlingRepeats  = 3 // the latest call seen this often in the window
	stuckTrailing    = 2 // this many failures in a row at the end
	observedAdvances = ProgressAdvancing
)

// InferProgress reads progress from the recent tool calls (the last
// observeWindow of them): the latest signature occurring circlingRepeats
// times or more is circling; otherwise stuckTrailing or more failures at the
// end is stuck; otherwise (and with no calls at all) advancing. It never
// infers distance and never overrides a verdict.
func InferProgress(window []WindowEntry) (progress, why string) {
	if len(window) > observeWindow {
		window = window[len(window)-observeWindow:]
	}
	if len(window) == 0 {
		return observedAdvances, "no tool calls observed yet"
	}
	last := window[len(window)-1].Sig
	n := 0
	for _, w := range window {
		if w.Sig == last {
			n++
		}
	}
	if n >= circlingRepeats {
		return ProgressCircling, fmt.Sprintf("the latest call was made %d times in the last %d", n, len(window))
	}
	fails := 0
	for i := len(window) - 1; i >= 0 && !window[i].OK; i-- {
		fails++
	}
	if fails >= stuckTrailing {
		return ProgressStuck, fmt.Sprintf("the last %d calls failed", fails)
	}
	return observedAdvances, fmt.Sprintf("%d recent calls, no repetition or failure streak", len(window))
}

// Observer keeps a run of tool calls and reads progress from it.
type Observer struct {
	window []WindowEntry
}

// Record adds one call (an unknown outcome counts as not failed).
func (o *Observer) Record(ev Event) {
	o.window = append(o.window, WindowEntry{Sig: ev.Signature(), OK: !ev.OK.Failed()})
	if len(o.window) > observeWindow {
		o.window = slices.Delete(o.window, 0, len(o.window)-observeWindow)
	}
}

// Progress is the inferred progress of the calls recorded so far.
func (o *Observer) Progress() string {
	p, _ := InferProgress(o.window)
	return p
}

// pyFalsy reports whether Python would read v, decoded from JSON or given
// by a Go caller, as false: None, False, a zero number, an empty string,
// list or object.
func pyFalsy(v any) bool {
	if zeroish(v) {
		return true
	}
	if x, ok := v.(json.RawMessage); ok {
		if len(bytes.TrimSpace(x)) == 0 {
			return true
		}
		var g any
		d := json.NewDecoder(bytes.NewReader(x))
		d.UseNumber()
		return d.Decode(&g) == nil && pyFalsy(g)
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array:
		return r.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return r.IsNil()
	}
	return false
}
