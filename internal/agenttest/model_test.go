package agenttest

import (
	"bufio"
	"encoding/json"
	"net/http"
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
