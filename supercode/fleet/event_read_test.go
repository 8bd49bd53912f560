package fleet

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/jsonl"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
)

// FuzzParseEvent: the hand reading of an event line gives what
// encoding/json gives, event and error alike, whatever the line, with or
// without an interner kept from earlier lines.
func FuzzParseEvent(f *testing.F) {
	for _, e := range []RunEvent{
		{ID: "post:toolu_1", At: time.Date(2026, 8, 24, 15, 0, 0, 5, time.UTC), Kind: KindTool, Name: "Bash", OK: laserbrain.OKTrue, Result: json.RawMessage(`{"stdout":"ok \"quoted\"","n":[1,{"a":null}]}`), Text: "make test", Session: "s1"},
		{ID: "x", Kind: KindCheck, Name: "advancing"},
	} {
		line, _ := marshalEvent(e)
		f.Add(line[:len(line)-1])
	}
	for _, s := range []string{`{}`, `{"ok":null}`, `{"result":null}`, `{"result":"a"}`, `{"result":[1,2`, `{"ID":"a"}`, `{"id":"a\u0041"}`, `{"at":"2026-13-01T00:00:00Z"}`,
		`{"ok":1}`, `{"text":"\xff"}`, `{"result":{"a":"}"}}`, `{"result":01}`, `{"id":"a","id":"b"}`, `{"result":{"a":1} }`} {
		f.Add([]byte(s))
	}
	in := &jsonl.Interner{} // shared across lines, as a run's reader shares it
	f.Fuzz(func(t *testing.T, line []byte) {
		var want RunEvent
		werr := json.Unmarshal(line, &want)
		for _, strs := range []*jsonl.Interner{nil, in} {
			got, gerr := parseEventIn(line, strs)
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("%q: error %v, encoding/json %v", line, gerr, werr)
			}
			if werr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%q:\n got %+v\nwant %+v", line, got, want)
			}
		}
	})
}

// The hand reading takes every field an event line has (a line of a
// subagent's call included), so that no line the writer writes goes to
// encoding/json's reflection, and gives what encoding/json gives for it.
func TestParseEventReadsEveryField(t *testing.T) {
	e := RunEvent{ID: "post:toolu_1", At: time.Date(2026, 8, 24, 15, 0, 0, 5, time.UTC), Kind: KindTool, Name: "Bash", OK: laserbrain.OKFalse,
		Result: json.RawMessage(`{"exit":1}`), Text: "make test", Session: "s1", Subagent: "code-reviewer"}
	line, err := marshalEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	line = line[:len(line)-1]
	var keys []string
	if err := jsonl.Members(line, func(key string, _ []byte) error { keys = append(keys, key); return nil }); err != nil {
		t.Fatal(err)
	}
	if n := reflect.TypeFor[RunEvent]().NumField(); len(keys) != n {
		t.Fatalf("the line has %d fields %v, the event %d: a field was left empty", len(keys), keys, n)
	}
	var got RunEvent
	for _, key := range keys {
		if err := jsonl.Members(line, func(k string, val []byte) error {
			if k == key && !got.member(k, val, nil) {
				t.Errorf("the hand reading leaves %q (%s) to encoding/json", k, val)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if parsed, err := parseEvent(line); err != nil || !reflect.DeepEqual(parsed, e) {
		t.Errorf("parseEvent = %+v, %v; want %+v", parsed, err, e)
	}
}

// A run event's tri-state ok is stored as JSON's true, false or null, the
// form every store and the reference's observed events share, and read
// back as it was.
func TestOKIsStoredAsTrueFalseOrNull(t *testing.T) {
	for ok, word := range map[laserbrain.OK]string{laserbrain.OKTrue: "true", laserbrain.OKFalse: "false", laserbrain.OKUnknown: "null"} {
		line, err := marshalEvent(RunEvent{ID: "e", Kind: KindTool, OK: ok})
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(line, &raw); err != nil || string(raw["ok"]) != word {
			t.Errorf("ok %v is stored as %s (%v), want %s", ok, raw["ok"], err, word)
		}
		if back, err := parseEvent(line[:len(line)-1]); err != nil || back.OK != ok {
			t.Errorf("ok %v reads back as %v (%v)", ok, back.OK, err)
		}
	}
}

// A gate event's result says its decision in one of the three words, and
// ReadGateResult takes only a result that says one.
func TestReadGateResult(t *testing.T) {
	for i, a := range []operator.Answer{operator.Allow, operator.Ask, operator.Deny} {
		b, err := json.Marshal(GateResult{Decision: a, Labels: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		if err := json.Unmarshal(b, &raw); err != nil || raw["decision"] != []string{"allow", "ask", "deny"}[i] {
			t.Errorf("answer %v is stored as %v (%v)", a, raw["decision"], err)
		}
		if res, ok := ReadGateResult(b); !ok || res.Decision != a {
			t.Errorf("%s reads back as %+v, %v", b, res, ok)
		}
	}
	for _, s := range []string{``, `{}`, `{"labels":["x"]}`, `{"decision":"warn"}`, `{"decision":null}`, `[1]`} {
		if res, ok := ReadGateResult(json.RawMessage(s)); ok {
			t.Errorf("%q reads as a decision: %+v", s, res)
		}
	}
}
