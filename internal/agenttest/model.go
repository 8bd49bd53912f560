package agenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Turn is one scripted assistant message: text, tool calls, or both (text
// first). A turn with tool calls ends with stop_reason "tool_use", so the
// client runs them and comes back with their results; a text-only turn ends
// the agent's loop ("end_turn").
type Turn struct {
	Text  string
	Tools []ToolUse
	// Fail, when set, answers the request with this API error instead.
	Fail *APIError
}

// APIError is an error response of the Messages API: the HTTP status and
// the error object's type and message.
type APIError struct {
	Status  int
	Type    string
	Message string
}

// Fail is a turn that answers with an API error. A 4xx other than 429 is
// not retried by the client.
func Fail(status int, typ, message string) Turn {
	return Turn{Fail: &APIError{Status: status, Type: typ, Message: message}}
}

// ToolUse is one scripted tool call. An empty ID is filled in as toolu_N.
type ToolUse struct {
	ID    string
	Name  string
	Input any
}

// Say is a text-only turn.
func Say(text string) Turn { return Turn{Text: text} }

// Call is a turn that calls one tool with input (marshalled to JSON).
func Call(name string, input any) Turn { return Turn{Tools: []ToolUse{{Name: name, Input: input}}} }

// CallID is Call with a chosen tool_use id, so a test can find its result.
func CallID(id, name string, input any) Turn {
	return Turn{Tools: []ToolUse{{ID: id, Name: name, Input: input}}}
}

// Bash is a turn that runs one shell command through Claude Code's Bash tool.
func Bash(id, command string) Turn {
	return CallID(id, "Bash", map[string]any{"command": command, "description": "scripted"})
}

// Request is one request the client made, as received.
type Request struct {
	Method string
	Path   string
	Body   json.RawMessage
	// Main is true for a main-loop request (one that carries a tools array);
	// side requests (titles, summaries) are answered with a short text and do
	// not consume the script.
	Main bool
	// Turn is the index of the scripted turn this request was answered with
	// (-1 for side requests and for requests after the script ran out).
	Turn int
}

// Model is a Messages API server on 127.0.0.1 that answers main-loop
// requests with scripted turns, in order, and records every request.
type Model struct {
	URL string

	t      testing.TB
	mu     sync.Mutex
	script []Turn
	next   int
	reqs   []Request
	ids    int
}

// NewModel starts the server for the life of the test. After the script
// runs out, every main-loop request gets a text turn ending the loop.
func NewModel(t testing.TB, turns ...Turn) *Model {
	t.Helper()
	m := &Model{t: t, script: turns}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("agenttest: listen on 127.0.0.1: %v", err)
	}
	srv := &http.Server{Handler: m}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	m.URL = "http://" + ln.Addr().String()
	return m
}

// Requests returns every request received so far.
func (m *Model) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.reqs...)
}

// Played reports how many scripted turns were sent.
func (m *Model) Played() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next
}

func (m *Model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := Request{Method: r.Method, Path: r.URL.Path, Body: body, Turn: -1}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		// HEAD/GET probes and count_tokens: a small JSON answer.
		m.record(req)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			io.WriteString(w, `{"input_tokens":10}`)
			return
		}
		io.WriteString(w, `{}`)
		return
	}
	var in struct {
		Model  string            `json:"model"`
		Tools  []json.RawMessage `json:"tools"`
		Stream bool              `json:"stream"`
	}
	_ = json.Unmarshal(body, &in)
	req.Main = len(in.Tools) > 0
	var turn Turn
	m.mu.Lock()
	switch {
	case !req.Main:
		turn = Say("ok")
	case m.next < len(m.script):
		turn = m.script[m.next]
		req.Turn = m.next
		m.next++
	default:
		turn = Say("Done.")
	}
	for i := range turn.Tools {
		if turn.Tools[i].ID == "" {
			m.ids++
			turn.Tools[i].ID = fmt.Sprintf("toolu_%d", m.ids)
		}
	}
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	if turn.Fail != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(turn.Fail.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "error",
			"error": map[string]string{"type": turn.Fail.Type, "message": turn.Fail.Message}})
		return
	}
	if in.Model == "" {
		in.Model = "claude-scripted"
	}
	if !in.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(message(in.Model, turn))
		return
	}
	writeStream(w, in.Model, turn)
}

func (m *Model) record(r Request) {
	m.mu.Lock()
	m.reqs = append(m.reqs, r)
	m.mu.Unlock()
}

func stopReason(t Turn) string {
	if len(t.Tools) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// message is the whole (non-streamed) answer for a turn.
func message(model string, t Turn) map[string]any {
	var content []any
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for _, tu := range t.Tools {
		content = append(content, map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": tu.Input})
	}
	return map[string]any{
		"id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stopReason(t), "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 10},
	}
}

// writeStream sends a turn as the Messages API's server-sent events
// (agents.md §1): message_start, one block per text or tool call, message_delta
// with the stop reason, message_stop.
func writeStream(w http.ResponseWriter, model string, t Turn) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	send := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 10, "output_tokens": 1},
	}})
	i := 0
	if t.Text != "" {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "text_delta", "text": t.Text}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	for _, tu := range t.Tools {
		input, _ := json.Marshal(tu.Input)
		if tu.Input == nil {
			input = []byte("{}")
		}
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(t), "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 10}})
	send("message_stop", map[string]any{"type": "message_stop"})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// ToolResult is a tool_result block the client sent back to the model.
type ToolResult struct {
	ToolUseID string
	IsError   bool
	// Text is the result's text: the content string, or the text blocks of
	// a content array joined by newlines.
	Text string
}

// ToolResult finds the result the model was shown for a tool call, in the
// last main-loop request that carries it.
func (m *Model) ToolResult(toolUseID string) (ToolResult, bool) {
	reqs := m.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if !reqs[i].Main {
			continue
		}
		for _, r := range toolResults(reqs[i].Body) {
			if r.ToolUseID == toolUseID {
				return r, true
			}
		}
	}
	return ToolResult{}, false
}

// UserTexts are the plain text blocks of the user messages the model was
// shown in the last main-loop request (prompts, hook feedback, system
// reminders).
func (m *Model) UserTexts() []string {
	reqs := m.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Main {
			return userTexts(reqs[i].Body)
		}
	}
	return nil
}

// SystemTexts are the text blocks of the system messages inside the last
// main-loop request's conversation: what the client put before the model
// between turns, such as a PreToolUse hook's additionalContext (Claude Code
// 2.1.328 sends it as {"role":"system"} right after the tool result,
// prefixed "PreToolUse:Bash hook additional context: ").
func (m *Model) SystemTexts() []string {
	reqs := m.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if !reqs[i].Main {
			continue
		}
		var in struct {
			Messages []wireMessage `json:"messages"`
		}
		if json.Unmarshal(reqs[i].Body, &in) != nil {
			return nil
		}
		var out []string
		for _, msg := range in.Messages {
			if msg.Role != "system" {
				continue
			}
			var s string
			if json.Unmarshal(msg.Content, &s) == nil {
				out = append(out, s)
				continue
			}
			var bs []wireBlock
			if json.Unmarshal(msg.Content, &bs) == nil {
				for _, b := range bs {
					if b.Type == "text" {
						out = append(out, b.Text)
					}
				}
			}
		}
		return out
	}
	return nil
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

func blocks(body []byte) []wireBlock {
	var in struct {
		Messages []wireMessage `json:"messages"`
	}
	if json.Unmarshal(body, &in) != nil {
		return nil
	}
	var out []wireBlock
	for _, msg := range in.Messages {
		if msg.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(msg.Content, &s) == nil {
			out = append(out, wireBlock{Type: "text", Text: s})
			continue
		}
		var bs []wireBlock
		if json.Unmarshal(msg.Content, &bs) == nil {
			out = append(out, bs...)
		}
	}
	return out
}

func toolResults(body []byte) []ToolResult {
	var out []ToolResult
	for _, b := range blocks(body) {
		if b.Type != "tool_result" {
			continue
		}
		out = append(out, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Text: contentText(b.Content)})
	}
	return out
}

func userTexts(body []byte) []string {
	var out []string
	for _, b := range blocks(body) {
		if b.Type == "text" {
			out = append(out, b.Text)
		}
	}
	return out
}

func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []wireBlock
	if json.Unmarshal(raw, &bs) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
