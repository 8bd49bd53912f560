package vectors

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const mcpCopy = "mcp-upstream-0.53.0.json.gz"

// The reference's MCP sessions pass, every one, and the built-in copy
// holds exactly them; the report says how many answers were compared by
// error status only.
func TestMCPVectorsUpstream(t *testing.T) {
	data := shippedFile(t, mcpCopy).Data
	r := checkFile(t, mcpCopy, data)
	if r.Passed != 150 {
		t.Errorf("%d sessions passed; want all 150", r.Passed)
	}
	if r.Tally[tallyByError] == 0 || r.Tally[tallyExact] < 2900 || r.Tally[tallyKilled] == 0 {
		t.Errorf("tally %v", r.Tally)
	}
	holdsUpstream(t, mcpCopy, data, "mcp-vectors.json", "cases")
}

// session builds one mcp case from lines and the reference's answers.
func session(t *testing.T, sends []string, recv [][]string, exit int, stderrLast string) Case {
	t.Helper()
	req := MCPRequest{}
	want := mcpWant{MCPAnswer: MCPAnswer{Exit: exit}}
	for i, s := range sends {
		req.Send = append(req.Send, json.RawMessage(s))
		var r []json.RawMessage
		for _, m := range recv[i] {
			r = append(r, json.RawMessage(m))
		}
		if r == nil {
			r = []json.RawMessage{}
		}
		want.Recv = append(want.Recv, r)
	}
	if stderrLast != "" {
		want.StderrLast = &stderrLast
	}
	in, _ := json.Marshal(req)
	w, _ := json.Marshal(want)
	return Case{Label: "session", In: in, Want: w}
}

func textResult(id int, v any, isErr bool) string {
	text, _ := json.Marshal(v)
	if s, ok := v.(string); ok {
		text, _ = json.Marshal(s)
		var raw string
		_ = json.Unmarshal(text, &raw)
		text = []byte(raw)
	}
	res := map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}}
	if isErr {
		res["isError"] = true
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
	return string(b)
}

func answerOf(t *testing.T, recv ...[]string) json.RawMessage {
	t.Helper()
	a := MCPAnswer{Recv: [][]json.RawMessage{}}
	for _, r := range recv {
		row := []json.RawMessage{}
		for _, m := range r {
			row = append(row, json.RawMessage(m))
		}
		a.Recv = append(a.Recv, row)
	}
	b, _ := json.Marshal(a)
	return b
}

// The comparison is not vacuous: it fails a value that differs, a key the
// reference lacks and this file does not allow, a result where the
// reference errored, a missing answer; it passes what it sets aside (a
// note, a Python exception's text, the lines after the reference died) and
// counts each.
func TestMCPComparison(t *testing.T) {
	check := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"check_state","arguments":{"goal":"ship it"}}}`
	reset := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reset_task"}}`
	hist := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_history","arguments":{"limit":"x"}}}`
	ref := map[string]any{"drifting": false, "reason": "grounded", "phi": 0.0}
	c := session(t, []string{check, reset, hist},
		[][]string{{textResult(1, ref, false)}, {textResult(2, map[string]any{"ok": true, "note": "cleared", "suspended": 0}, false)},
			{textResult(3, "ValueError: invalid literal for int() with base 10: 'x'", true)}}, 0, "")

	ours := func(v map[string]any, note string, histErr bool) json.RawMessage {
		return answerOf(t, []string{textResult(1, v, false)}, []string{textResult(2, map[string]any{"ok": true, "note": note, "suspended": 0}, false)},
			[]string{textResult(3, map[string]any{"error": "limit must be a whole number"}, histErr)})
	}
	same := map[string]any{"drifting": false, "reason": "grounded", "phi": 0, "run": "r1", "why": "ground is ..."}
	cmp := compareMCP(c, ours(same, "set aside", true))
	if len(cmp.Diff) != 0 || cmp.Tally[tallyByError] != 1 || cmp.Tally[tallyExact] != 2 {
		t.Fatalf("agreeing session: %+v", cmp)
	}
	for name, tc := range map[string]struct {
		got  json.RawMessage
		want string
	}{
		"a value":         {ours(map[string]any{"drifting": false, "reason": "advancing", "phi": 0}, "n", true), `line 0 (tools/call check_state): text/reason: expected "grounded", got "advancing"`},
		"an extra key":    {ours(map[string]any{"drifting": false, "reason": "grounded", "phi": 0, "verdict": "x"}, "n", true), "text/verdict: not expected"},
		"a missing key":   {ours(map[string]any{"drifting": false, "reason": "grounded"}, "n", true), "text/phi: missing"},
		"not an error":    {ours(same, "n", false), "line 2 (tools/call get_history): the reference failed (ValueError"},
		"too few answers": {answerOf(t, nil, nil, nil), "line 0 (tools/call check_state): expected 1 answers, got 0"},
	} {
		cmp := compareMCP(c, tc.got)
		if !strings.Contains(strings.Join(cmp.Diff, "\n"), tc.want) {
			t.Errorf("%s: diff %q, want %q", name, cmp.Diff, tc.want)
		}
	}

	// A line the reference died on: the answer must be an error; nothing
	// after it is compared.
	dead := session(t, []string{check, `42`, check}, [][]string{{textResult(1, ref, false)}, {}, {}}, 1, "AttributeError: 'int' object has no attribute 'get'")
	okErr := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`
	cmp = compareMCP(dead, answerOf(t, []string{textResult(1, same, false)}, []string{okErr}, []string{textResult(1, same, false)}))
	if len(cmp.Diff) != 0 || cmp.Tally[tallyKilled] != 1 || cmp.Tally[tallyDied] != 1 {
		t.Errorf("a session the reference died in: %+v", cmp)
	}
	cmp = compareMCP(dead, answerOf(t, []string{textResult(1, same, false)}, []string{textResult(7, same, false)}, nil))
	if !strings.Contains(strings.Join(cmp.Diff, "\n"), "the reference's process died on this line; the answer must be an error") {
		t.Errorf("a result where the reference died: %+v", cmp)
	}
}

// Our server, in process, answers one session as the reference did, and
// emit writes what check accepts.
func TestMCPEmitRoundTrip(t *testing.T) {
	var doc struct {
		Kind   string            `json:"kind"`
		Source string            `json:"source"`
		Cases  []json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(shippedFile(t, mcpCopy).Data, &doc); err != nil {
		t.Fatal(err)
	}
	doc.Cases = doc.Cases[:3]
	small, _ := json.Marshal(doc)
	out, err := Emit("mcp", small)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(out)
	if err != nil || r.Passed != 3 {
		for _, f := range r.Failures {
			t.Errorf("%s: %s %v", f.Label, f.Error, f.Diff)
		}
		t.Fatalf("emitted file: %v, %s", err, r.Summary())
	}
	if bytes.Contains(out, []byte(`\"run\"`)) {
		t.Error("the emitted file records our run ids")
	}
	if !bytes.Contains(out, []byte(`"serverInfo":{"name":"laserbrain"`)) && !bytes.Contains(out, []byte(`"name": "laserbrain"`)) {
		t.Errorf("emitted file has no initialize answer of ours")
	}
}
