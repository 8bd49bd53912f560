package fleet

import (
	"bytes"

	"github.com/laserkit/laserkit/internal/jsonl"
	"github.com/laserkit/laserkit/laserbrain"
)

// parseEvent reads one line of a run's events: the shape marshalEvent
// writes is read by hand, a field at a time (the report and a supervisor
// read whole fleets of events, and encoding/json's reflection was most of
// their time); any other is read by encoding/json, so the result is always
// what json.Unmarshal gives (FuzzParseEvent holds it to that).
func parseEvent(line []byte) (RunEvent, error) { return parseEventIn(line, nil) }

// parseEventIn is parseEvent keeping one copy of each repeated string (a
// run's kinds, tool names, commands, verdicts) in in.
func parseEventIn(line []byte, in *jsonl.Interner) (RunEvent, error) {
	return jsonl.Read(line, func(e *RunEvent, key string, val []byte) bool { return e.member(key, val, in) })
}

// member reads one field of an event line; false leaves the line to
// encoding/json.
func (e *RunEvent) member(key string, val []byte, in *jsonl.Interner) bool {
	ok := true
	switch key {
	case "id":
		e.ID, ok = jsonl.MemberString(val, nil)
	case "at":
		e.At, ok = jsonl.Time(val)
	case "kind":
		e.Kind, ok = jsonl.MemberString(val, in)
	case "name":
		e.Name, ok = jsonl.MemberString(val, in)
	case "ok":
		if string(val) == "null" {
			e.OK = laserbrain.OKUnknown
			break
		}
		var b bool
		b, ok = jsonl.Bool(val)
		e.OK = laserbrain.OKOf(b)
	case "result":
		e.Result = bytes.Clone(val)
	case "text":
		e.Text, ok = jsonl.MemberString(val, in)
	case "session":
		e.Session, ok = jsonl.MemberString(val, in)
	case "subagent":
		e.Subagent, ok = jsonl.MemberString(val, in)
	default:
		ok = false
	}
	return ok
}
