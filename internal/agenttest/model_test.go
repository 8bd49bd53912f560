package agenttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The model plays its script on main-loop requests only, streams each turn
// as the Messages API's events, and finds the tool results sent back.
func TestModelPlaysAndRecords(t *testing.T) {
	m := NewModel(t, Bash("toolu_x", "ls"), Say("done"))
	post := func(body string) []string {
		resp, err := http.Post(m.URL+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var events []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events = append(events, name)
			}
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && !json.Valid([]byte(data)) {
				t.Fatalf("invalid JSON in data: %s", data)
			}
		}
		return events
	}
	// A side request (no tools) does not consume the script.
	post(`{"model":"m","stream":true,"messages":[{"role":"user","content":"title?"}]}`)
	ev := post(`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`)
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(ev, " ") != want {
		t.Fatalf("events = %v", ev)
	}
	post(`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","is_error":true,"content":"denied: because"}]}]}`)
	if m.Played() != 2 {
		t.Fatalf("played %d turns, want 2", m.Played())
	}
	tr, ok := m.ToolResult("toolu_x")
	if !ok || !tr.IsError || tr.Text != "denied: because" {
		t.Fatalf("ToolResult = %+v, %v", tr, ok)
	}
	if reqs := m.Requests(); len(reqs) != 3 || reqs[0].Main || !reqs[1].Main || reqs[1].Turn != 0 {
		t.Fatalf("requests = %+v", reqs)
	}
}

// recorded is one client's requests as it really sent them (testdata/).
type recorded struct {
	Client   string `json:"client"`
	Requests []struct {
		Path  string          `json:"path"`
		Query string          `json:"query"`
		Body  json.RawMessage `json:"body"`
	} `json:"requests"`
}

// Each API's server, replayed the requests a real client sent it: the
// requests with tools play the script, the others (opencode's title) are
// side requests, and the shell call's result is found in the request
// after the turn that made it, with the output the client really sent.
func TestModelReplaysRealClients(t *testing.T) {
	for _, c := range Clients {
		t.Run(c.Name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", c.Name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var rec recorded
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatal(err)
			}
			m := NewModelFor(t, c.API, c.Shell("call_m", "touch ran-marker && echo made-it"), Say("Finished."))
			for _, r := range rec.Requests {
				u := m.URL + r.Path
				if r.Query != "" {
					u += "?" + r.Query
				}
				resp, err := http.Post(u, "application/json", bytes.NewReader(r.Body))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !wellFormed(body) {
					t.Fatalf("%s answered %d, not well-formed:\n%s", r.Path, resp.StatusCode, body)
				}
			}
			if m.Played() != 2 {
				t.Fatalf("played %d turns, want 2", m.Played())
			}
			side := 0
			for _, r := range m.Requests() {
				if !r.Main {
					side++
				}
			}
			if wantSide := map[string]int{"opencode": 1}[c.Name]; side != wantSide {
				t.Fatalf("%d side requests, want %d", side, wantSide)
			}
			tr := m.ResultAfter(t, "call_m")
			if !strings.Contains(tr.Text, "made-it") || tr.IsError {
				t.Fatalf("the result after the call: %+v", tr)
			}
			if got, ok := m.ToolResult("call_m"); !ok || got != tr {
				t.Fatalf("ToolResult = %+v, %v; ResultAfter = %+v", got, ok, tr)
			}
			if texts := strings.Join(m.UserTexts(), "\n"); !strings.Contains(texts, "make the marker") {
				t.Fatalf("the prompt is not among the user texts: %q", texts)
			}
		})
	}
}

// wellFormed: a JSON document, or server-sent events whose every data line
// is JSON (or the Chat API's [DONE]).
func wellFormed(body []byte) bool {
	if json.Valid(body) {
		return true
	}
	n := 0
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if data != "[DONE]" && !json.Valid([]byte(data)) {
			return false
		}
		n++
	}
	return n > 0
}

// Each client's MCP call is spelled the way the client offered the tool
// and its hooks saw it (testdata/mcp-names.json, recorded from the clients).
func TestClientMCPNames(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "mcp-names.json"))
	if err != nil {
		t.Fatal(err)
	}
	var seen map[string]struct {
		HookSaw string   `json:"hook_saw"`
		Offered []string `json:"offered"`
	}
	if err := json.Unmarshal(raw, &seen); err != nil {
		t.Fatal(err)
	}
	for _, c := range Clients {
		want, ok := seen[c.Name]
		if !ok {
			t.Errorf("%s: nothing recorded", c.Name)
			continue
		}
		if got := c.MCPToolName("laserbrain", "check_state"); got != want.HookSaw {
			t.Errorf("%s: MCPToolName = %q, its hooks saw %q", c.Name, got, want.HookSaw)
		}
		tu := c.MCP("id", "laserbrain", "check_state", nil).Tools[0]
		called := tu.Name
		if tu.Namespace != "" {
			called = tu.Namespace + "/" + tu.Name
		}
		if len(want.Offered) > 0 && called != want.Offered[0] {
			t.Errorf("%s: the scripted call is %q, the client offered %q", c.Name, called, want.Offered)
		}
	}
}

// A request that does not ask for a stream gets the API's whole-answer
// JSON, carrying the same scripted call.
func TestModelAnswersUnstreamed(t *testing.T) {
	cases := []struct {
		api        API
		path, body string
		name       func(v map[string]any) any
	}{
		{MessagesAPI, "/v1/messages", `{"model":"m","tools":[{"name":"Bash"}],"messages":[]}`, func(v map[string]any) any {
			return dig(v, "content", 0, "name")
		}},
		{ResponsesAPI, "/v1/responses", `{"model":"m","tools":[{"type":"function","name":"exec_command"}],"input":[]}`, func(v map[string]any) any {
			return dig(v, "output", 0, "name")
		}},
		{ChatAPI, "/v1/chat/completions", `{"model":"m","tools":[{"type":"function","function":{"name":"bash"}}],"messages":[]}`, func(v map[string]any) any {
			return dig(v, "choices", 0, "message", "tool_calls", 0, "function", "name")
		}},
		{GeminiAPI, "/v1beta/models/g:generateContent", `{"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}],"contents":[]}`, func(v map[string]any) any {
			return dig(v, "candidates", 0, "content", "parts", 0, "functionCall", "name")
		}},
	}
	for _, c := range cases {
		m := NewModelFor(t, c.api, CallID("call_1", "the_tool", map[string]any{"x": 1}))
		resp, err := http.Post(m.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: not JSON: %v", c.api, err)
		}
		if got := c.name(v); got != "the_tool" || m.Played() != 1 {
			t.Errorf("%s: the call's name is %v (played %d): %v", c.api, got, m.Played(), v)
		}
	}
}

// dig walks maps by key and lists by index; nil when the path is absent.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// A main-loop request sent again (the same body right after itself, as a
// client retries over a dropped connection) gets the turn it got before
// and leaves the script where it was; the next conversation goes on.
func TestModelAnswersARetryWithItsTurn(t *testing.T) {
	m := NewModel(t, Bash("toolu_a", "ls"), Bash("toolu_b", "pwd"), Say("done"))
	post := func(body string) string { return postMessages(t, m, body) }
	first := `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"metadata":{"user_id":"{\"session_id\":\"s1\"}"},"messages":[{"role":"user","content":"go"}]}`
	if out := post(first); !strings.Contains(out, "toolu_a") {
		t.Fatalf("first answer: %s", out)
	}
	if out := post(first); !strings.Contains(out, "toolu_a") {
		t.Fatalf("the retry was answered with another turn: %s", out)
	}
	if m.Played() != 1 {
		t.Fatalf("played %d turns after a request and its retry, want 1", m.Played())
	}
	if out := post(`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"metadata":{"user_id":"{\"session_id\":\"s1\"}"},"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"x"}]}]}`); !strings.Contains(out, "toolu_b") {
		t.Fatalf("the next conversation: %s", out)
	}
	mains := m.MainRequests()
	if len(mains) != 3 || mains[0].Retry || !mains[1].Retry || mains[1].Turn != 0 || mains[2].Turn != 1 {
		t.Fatalf("main requests: %+v", mains)
	}
}

// Trace lists the model calls in order: main or side, the turn each was
// answered with, a retry, and the tool results a main call carried.
func TestModelTraceListsTheCalls(t *testing.T) {
	m := NewModel(t, Bash("toolu_a", "ls"), Say("done"))
	post := func(body string) { postMessages(t, m, body) }
	first := `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`
	post(first)
	post(first)
	post(`{"model":"m","stream":true,"messages":[{"role":"user","content":"a title"}]}`)
	post(`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"x","is_error":true}]}]}`)
	want := "0 main turn=0\n1 main turn=0 retry\n2 side turn=-1\n3 main turn=1 result(toolu_a error=true)\n"
	if got := m.Trace(); got != want {
		t.Fatalf("trace:\n%s\nwant:\n%s", got, want)
	}
}

// postMessages sends one Messages API request to m and returns the answer.
func postMessages(t *testing.T, m *Model, body string) string {
	t.Helper()
	resp, err := http.Post(m.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
