package fleet

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// FuzzParseEvent: the hand reading of an event line gives what
// encoding/json gives, event and error alike, whatever the line.
func FuzzParseEvent(f *testing.F) {
	yes := true
	for _, e := range []RunEvent{
		{ID: "post:toolu_1", At: time.Date(2026, 8, 24, 15, 0, 0, 5, time.UTC), Kind: KindTool, Name: "Bash", OK: &yes, Result: json.RawMessage(`{"stdout":"ok \"quoted\"","n":[1,{"a":null}]}`), Text: "make test", Session: "s1"},
		{ID: "x", Kind: KindCheck, Name: "advancing"},
	} {
		line, _ := marshalEvent(e)
		f.Add(line[:len(line)-1])
	}
	for _, s := range []string{`{}`, `{"ok":null}`, `{"result":null}`, `{"result":"a"}`, `{"result":[1,2`, `{"ID":"a"}`, `{"id":"a\u0041"}`, `{"at":"2026-13-01T00:00:00Z"}`,
		`{"ok":1}`, `{"text":"\xff"}`, `{"result":{"a":"}"}}`, `{"result":01}`, `{"id":"a","id":"b"}`, `{"result":{"a":1} }`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, gerr := parseEvent(line)
		var want RunEvent
		werr := json.Unmarshal(line, &want)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, encoding/json %v", line, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", line, got, want)
		}
	})
}
