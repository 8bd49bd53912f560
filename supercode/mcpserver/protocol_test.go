package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/supercode/agentrun"
)

// TestAnswerLineByLine: each line is answered as the reference's stdio
// server answers it (its protocol as observed), except the
// lines its process dies on, which get an error here.
func TestAnswerLineByLine(t *testing.T) {
	sup, _ := testSupervisor(t, nil)
	s := New(sup)
	cases := []struct {
		line string
		want string // "" for no answer; else the answer's id and result or error as JSON
	}{
		{``, ``},
		{`   `, ``},
		{`not json`, `{"id":null,"error":{"code":-32700,"message":"parse error"}}`},
		{`{"jsonrpc": "2.0", "id": 7, "method": "tools/list"`, `{"id":null,"error":{"code":-32700,"message":"parse error"}}`},
		// No initialization state: every method works before initialize.
		{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, `{"id":"a","result":{}}`},
		{`{"jsonrpc":"2.0","method":"ping"}`, `{"id":null,"result":{}}`},
		{`{"id":0,"method":"ping"}`, `{"id":0,"result":{}}`},
		{`{"jsonrpc":"2.0","id":1.50,"method":"ping"}`, `{"id":1.50,"result":{}}`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized","id":99}`, ``},
		{`{"jsonrpc":"2.0","method":"initialized"}`, ``},
		{`{"jsonrpc":"2.0","id":3,"method":"resources/list"}`, `{"id":3,"error":{"code":-32601,"message":"no such method: resources/list"}}`},
		{`{"jsonrpc":"2.0","id":3}`, `{"id":3,"error":{"code":-32601,"message":"no such method: None"}}`},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled"}`, ``},
		{`{"jsonrpc":"2.0","id":null,"method":"prompts/list"}`, ``},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":null}`, `{"id":4,"error":{"code":-32602,"message":"no such tool: None"}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}`, `{"id":4,"error":{"code":-32602,"message":"no such tool: 5"}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Check_State"}}`, `{"id":4,"error":{"code":-32602,"message":"no such tool: Check_State"}}`},
		// The reference's process dies on these; here they are errors.
		{`null`, `{"id":null,"error":{"code":-32600,"message":"invalid request: a message is a JSON object, not null"}}`},
		{`42`, `{"id":null,"error":{"code":-32600,"message":"invalid request: a message is a JSON object, not a number"}}`},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"id":null,"error":{"code":-32600,"message":"invalid request: a message is a JSON object, not a list"}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":["check_state"]}`, `{"id":5,"error":{"code":-32602,"message":"tools/call params must be an object, not a list"}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":["check_state"]}}`, `{"id":5,"error":{"code":-32602,"message":"no such tool: ['check_state']"}}`},
	}
	for _, c := range cases {
		got := s.Answer(context.Background(), []byte(c.line))
		if c.want == "" {
			if got != nil {
				t.Errorf("%s: answered %s, want nothing", c.line, got)
			}
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(got, &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
			t.Errorf("%s: answer %s is not JSON-RPC 2.0", c.line, got)
			continue
		}
		delete(m, "jsonrpc")
		gotJSON, _ := json.Marshal(m)
		var a, b any
		_ = json.Unmarshal(gotJSON, &a)
		_ = json.Unmarshal([]byte(c.want), &b)
		if fmt.Sprint(a) != fmt.Sprint(b) || !strings.Contains(string(got), `"id":`+idOf(c.want)) {
			t.Errorf("%s:\n got  %s\n want %s", c.line, got, c.want)
		}
	}
}

// idOf is the id literal of an expected answer, so an id is checked as
// spelled (1.50 stays 1.50).
func idOf(want string) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal([]byte(want), &m)
	return string(m["id"])
}

// TestServeAnswersEveryRequestBeforeEOF: requests piped in and then closed
// (laserbrain mcp < requests.jsonl) are every one answered, in order.
func TestServeAnswersEveryRequestBeforeEOF(t *testing.T) {
	sup, _ := testSupervisor(t, map[string]string{agentrun.EnvRun: "run-eof", agentrun.EnvFleet: "f"})
	var in bytes.Buffer
	const n = 40
	for i := 0; i < n; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"check_state","arguments":{"goal":"ship the parser","distance":%d}}}`+"\n", i, 9-i/5)
		case 1:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_history","arguments":{"limit":1}}}`+"\n", i)
		case 2:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		default:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i) // the last line has no newline
			if i < n-1 {
				in.WriteByte('\n')
			}
		}
	}
	var out bytes.Buffer
	if err := New(sup).Serve(context.Background(), &in, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d answers to %d requests:\n%s", len(lines), n, out.String())
	}
	for i, l := range lines {
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.ID != i || m.Result == nil {
			t.Fatalf("answer %d: %s", i, l)
		}
	}
}

// TestModulateKeepsTheLiveGround: only check_state resumes a set-aside
// ground. After a reset, modulate on the old goal is measured against the
// new ground (goal-drift); check_state on it resumes it.
func TestModulateKeepsTheLiveGround(t *testing.T) {
	sup, _ := testSupervisor(t, map[string]string{agentrun.EnvRun: "run-mod", agentrun.EnvFleet: "f"})
	cs := connect(t, sup)
	call(t, cs, "check_state", map[string]any{"goal": "write a JSON parser in Python", "distance": 6})
	call(t, cs, "reset_task", nil)
	call(t, cs, "check_state", map[string]any{"goal": "fix the login page colours", "distance": 3})
	m, _ := call(t, cs, "modulate", map[string]any{"goal": "write a JSON parser in Python", "distance": 5})
	if m["reason"] != "goal-drift" || m["phi"] != 0.56 || m["resumed_ground"] != nil || m["ground"] != "fix the login page colours" {
		t.Fatalf("modulate on the set-aside goal = %v", m)
	}
	v, _ := call(t, cs, "check_state", map[string]any{"goal": "write a JSON parser in Python", "distance": 5})
	if v["resumed_ground"] != "write a JSON parser in Python" || v["reason"] != "advancing" {
		t.Fatalf("check_state on it = %v", v)
	}
	// The history is the resumed ground's, the resuming check marked.
	h, _ := call(t, cs, "get_history", nil)
	checks := h["checks"].([]any)
	last := checks[len(checks)-1].(map[string]any)
	if h["total"] != 2.0 || last["resumed_ground"] != "write a JSON parser in Python" || last["advice"] == nil || last["ground_score"] == nil {
		t.Fatalf("history after the resume = %v", h)
	}
}
