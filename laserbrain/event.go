package laserbrain

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// EventKind says what an observed event is.
type EventKind string

// The four kinds of observed event (the reference's catches.Event).
const (
	// EventCheck: a check ran. Name is what was checked, OK whether it passed.
	EventCheck EventKind = "check"
	// EventTool: a tool returned. Name is the tool, Result what came back,
	// Args what it was called with, OK whether the call succeeded (often
	// unknown: a blank screenshot is a "successful" call).
	EventTool EventKind = "tool"
	// EventClaim: an assertion was made. Name is its subject, Text the words.
	EventClaim EventKind = "claim"
	// EventEdit: a file changed. Name is the file, Sites how many places.
	EventEdit EventKind = "edit"
)

// Valid reports whether k is one of the four kinds.
func (k EventKind) Valid() bool {
	switch k {
	case EventCheck, EventTool, EventClaim, EventEdit:
		return true
	}
	return false
}

// OK is an observed outcome that can also be unknown: a tool that returned
// something has not thereby passed or failed. The zero value is unknown.
// In JSON it is true, false or null.
type OK int8

// The three outcomes.
const (
	OKUnknown OK = iota // nobody said whether it worked
	OKTrue              // it passed or succeeded
	OKFalse             // it failed
)

// OKOf turns a known outcome into an OK.
func OKOf(passed bool) OK {
	if passed {
		return OKTrue
	}
	return OKFalse
}

// Known reports whether the outcome was observed.
func (o OK) Known() bool { return o == OKTrue || o == OKFalse }

// Failed reports a known failure. Unknown is not a failure: the reference
// counts an event as backing a check whenever its ok "is not False".
func (o OK) Failed() bool { return o == OKFalse }

// String is "true", "false" or "unknown".
func (o OK) String() string {
	switch o {
	case OKTrue:
		return "true"
	case OKFalse:
		return "false"
	}
	return "unknown"
}

// MarshalJSON writes true, false or null.
func (o OK) MarshalJSON() ([]byte, error) { return o.AppendJSON(nil), nil }

// AppendJSON appends true, false or null to b.
func (o OK) AppendJSON(b []byte) []byte {
	switch o {
	case OKTrue:
		return append(b, "true"...)
	case OKFalse:
		return append(b, "false"...)
	}
	return append(b, "null"...)
}

// UnmarshalJSON reads true, false or null.
func (o *OK) UnmarshalJSON(data []byte) error {
	switch string(bytes.TrimSpace(data)) {
	case "true":
		*o = OKTrue
	case "false":
		*o = OKFalse
	case "null":
		*o = OKUnknown
	default:
		return fmt.Errorf("ok must be true, false or null, not %s", data)
	}
	return nil
}

// Event is one thing observed to happen to an agent — what a check or a
// tool actually returned, a claim it made, an edit — as opposed to the
// state it spells about itself. Run.Saw takes events as corroboration;
// Catches reads them for drift in how an agent verifies; the machine's
// evidence counters (Evidence.Record) count tool events.
//
// The fields are the reference's (kind, name, ok, result, text, sites);
// Args is ours: the tool's arguments, from which the evidence window's
// repetition signature is taken.
type Event struct {
	Kind   EventKind `json:"kind"`
	Name   string    `json:"name"`
	OK     OK        `json:"ok"`
	Result any       `json:"result,omitempty"`
	Text   string    `json:"text,omitempty"`
	Sites  int       `json:"sites,omitempty"`
	Args   any       `json:"args,omitempty"`
}

// CheckEvent is a check that ran and passed or failed.
func CheckEvent(name string, passed bool) Event {
	return Event{Kind: EventCheck, Name: name, OK: OKOf(passed)}
}

// ToolEvent is a tool that returned result, with its success unknown.
func ToolEvent(name string, result any) Event {
	return Event{Kind: EventTool, Name: name, Result: result}
}

// ToolCall is a completed tool call whose success the runtime saw, as the
// PostToolUse hook records it: the tool, its arguments, and whether it
// worked.
func ToolCall(name string, args any, ok bool) Event {
	return Event{Kind: EventTool, Name: name, Args: args, OK: OKOf(ok)}
}

// ClaimEvent is an assertion text about subject.
func ClaimEvent(subject, text string) Event {
	return Event{Kind: EventClaim, Name: subject, Text: text}
}

// EditEvent is a change to file in sites places.
func EditEvent(file string, sites int) Event {
	return Event{Kind: EventEdit, Name: file, Sites: sites}
}

// Validate reports an event whose kind is not one of the four.
func (ev Event) Validate() error {
	if !ev.Kind.Valid() {
		return fmt.Errorf("event kind %q: want check, tool, claim or edit", ev.Kind)
	}
	return nil
}

// UnmarshalJSON reads an event and refuses an unknown kind, so a
// misspelt "kind" is an error at the boundary instead of an event every
// reader silently ignores. The tool-call shape runs saved before events
// had kinds ({"tool", "args", "ok"}) reads as a tool event.
func (ev *Event) UnmarshalJSON(data []byte) error {
	var p struct {
		plainEvent
		Tool *string `json:"tool"`
	}
	// Numbers stay json.Number, so a result of 1 and one of 1.0 remain
	// different results, as they are to the reference.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	e := Event(p.plainEvent)
	if e.Kind == "" && p.Tool != nil {
		e.Kind, e.Name = EventTool, *p.Tool
	}
	if err := e.Validate(); err != nil {
		return err
	}
	*ev = e
	return nil
}

// plainEvent is Event without its methods, for decoding.
type plainEvent Event
