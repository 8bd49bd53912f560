package client

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDecodeIntoAgreesWithEncodingJSON holds decodeInto to encoding/json,
// the oracle: on each client's payload struct, for payloads as the clients
// send them and for the shapes where setting fields value by value could
// differ from decoding the payload whole (keys that match only
// case-insensitively, repeated keys, nulls, values of the wrong type,
// nested objects), decodeInto sets exactly the fields json.Unmarshal sets
// and fails exactly when it fails. It also checks that the clients'
// ordinary payloads take the value-by-value path, or the agreement would
// hold trivially.
func TestDecodeIntoAgreesWithEncodingJSON(t *testing.T) {
	payloads := []struct {
		json string
		flat bool // the ordinary shape: set value by value
	}{
		{`{"session_id":"s-1","transcript_path":"/t.jsonl","cwd":"/repo","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"git push --force origin main"},"tool_use_id":"toolu_1"}`, true},
		{`{"session_id":"s-1","cwd":"/repo","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_5","tool_response":{"stdout":"a.go","interrupted":false},"duration_ms":12}`, true},
		{`{"session_id":"s-1","cwd":"/repo","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"exit 3"},"error":"Exit code 3","is_interrupt":true}`, true},
		{`{"session_id":"c-1","turn_id":"t-1","transcript_path":null,"cwd":"/repo","tool_name":null,"tool_input":null}`, true},
		{`{"c\u0077d":"/escaped","tool_name":"Bash"}`, true},
		{`{"cwd":"/a","cwd":"/b","tool_input":{"command":"x"},"tool_input":{"command":"y"}}`, true},
		{`{"CWD":"/upper","Tool_Name":"Bash"}`, false},
		{`{"cwd":"/exact","CWD":"/upper"}`, false},
		{`{"CWD":"/upper","cwd":"/exact"}`, false},
		{`{"ſession_id":"long s folds to s"}`, false},
		{`{"tool_name":5}`, false},
		{`{"cwd":5,"session_id":"s"}`, false},
		{`{"is_interrupt":"yes","stop_hook_active":1}`, false},
		{`{"hookName":"PreToolUse","taskId":"t","preToolUse":{"toolName":"execute_command","parameters":{"command":"ls"}},"preToolUse":{"toolName":"read_file"}}`, true},
		{`{"hookName":"PostToolUse","postToolUse":{"toolName":"execute_command","success":true},"postToolUse":{"result":"r","success":false}}`, true},
		{`{"toolName":"bash","toolArgs":"{\"command\":\"ls\"}","sessionId":"x","cwd":"/r","timestamp":1}`, true},
		{`{"sessionID":"o","callID":"c","tool":"bash","args":{"command":"ls"},"args":{"description":"d"}}`, true},
		{`{}`, true},
	}
	types := []func() any{
		func() any { return new(claudePayload) }, func() any { return new(clinePayload) }, func() any { return new(copilotPayload) },
		func() any { return new(geminiPayload) }, func() any { return new(openCodePayload) },
	}
	for _, p := range payloads {
		obj, err := object([]byte(p.json))
		if err != nil {
			t.Fatalf("%s: %v", p.json, err)
		}
		for _, newPayload := range types {
			got, want := newPayload(), newPayload()
			gotErr := decodeInto(obj, []byte(p.json), got)
			wantErr := json.Unmarshal([]byte(p.json), want)
			if (gotErr != nil) != (wantErr != nil) {
				t.Errorf("%T %s: decodeInto error %v, encoding/json %v", got, p.json, gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%T %s:\ndecodeInto   %+v\nencoding/json %+v", got, p.json, got, want)
			}
		}
		if flat := fillFlat(obj, new(claudePayload)); flat != p.flat {
			t.Errorf("%s: set value by value = %v, want %v", p.json, flat, p.flat)
		}
	}
	// A nested object (which a repeated key merges into) is decoded whole.
	obj, err := object([]byte(`{"hookName":"PreToolUse","preToolUse":{"toolName":"execute_command"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if fillFlat(obj, new(clinePayload)) {
		t.Error("Cline's preToolUse object was set value by value: a repeated preToolUse would lose the first one's fields")
	}
}
