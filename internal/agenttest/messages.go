package agenttest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// messagesWire is Anthropic's Messages API as Claude Code 2.1.328 uses it:
// POST /v1/messages?beta=true, streamed; side requests carry no tools.
type messagesWire struct{}

func (messagesWire) idPrefix() string { return "toolu_" }

func (messagesWire) call(r *http.Request, body []byte) (modelCall, bool) {
	c, ok := openCall(r, body, "/v1/messages")
	if ok && c.model == "" {
		c.model = "claude-scripted"
	}
	return c, ok
}

// probe answers HEAD/GET probes and count_tokens with small JSON.
func (messagesWire) probe(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		io.WriteString(w, `{"input_tokens":10}`)
		return
	}
	io.WriteString(w, `{}`)
}

func messagesStop(t Turn) string {
	if len(t.Tools) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// The usage every Messages API response reports unless told otherwise
// (Model.Usage, Turn.Usage): a stream's message_start says
// MessagesInputTokens in and 1 out, its message_delta the cumulative
// MessagesOutputTokens out (as the API does). The cached input is apart
// from the input, as the API counts it.
const (
	MessagesInputTokens  = 10
	MessagesOutputTokens = 10
)

func (messagesWire) write(w http.ResponseWriter, c modelCall, t Turn) {
	if !c.stream {
		var content []any
		if t.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": t.Text})
		}
		for _, tu := range t.Tools {
			content = append(content, map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": tu.Input})
		}
		writeJSON(w, map[string]any{
			"id": "msg_scripted", "type": "message", "role": "assistant", "model": c.model,
			"content": content, "stop_reason": messagesStop(t), "stop_sequence": nil,
			"usage": map[string]int64{"input_tokens": c.usage.Input, "output_tokens": c.usage.Output, "cache_read_input_tokens": c.usage.CacheRead},
		})
		return
	}
	// The Messages API's stream events: message_start, one block per text or tool
	// call, message_delta with the stop reason, message_stop.
	sseHeaders(w)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_scripted", "type": "message", "role": "assistant", "model": c.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int64{"input_tokens": c.usage.Input, "output_tokens": 1, "cache_read_input_tokens": c.usage.CacheRead},
	}})
	i := 0
	if t.Text != "" {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "text_delta", "text": t.Text}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	for _, tu := range t.Tools {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": map[string]any{}}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": inputJSON(tu.Input)}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": messagesStop(t), "stop_sequence": nil},
		"usage": map[string]int64{"output_tokens": c.usage.Output}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
	flush(w)
}

type messagesMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type messagesBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

func messagesOf(body []byte) []messagesMessage {
	var in struct {
		Messages []messagesMessage `json:"messages"`
	}
	_ = json.Unmarshal(body, &in)
	return in.Messages
}

// blocksOf is the content of messages with role as blocks (a string content
// is one text block).
func blocksOf(body []byte, role string) []messagesBlock {
	var out []messagesBlock
	for _, msg := range messagesOf(body) {
		if msg.Role != role {
			continue
		}
		var s string
		if json.Unmarshal(msg.Content, &s) == nil {
			out = append(out, messagesBlock{Type: "text", Text: s})
			continue
		}
		var bs []messagesBlock
		if json.Unmarshal(msg.Content, &bs) == nil {
			out = append(out, bs...)
		}
	}
	return out
}

func (messagesWire) toolResults(body []byte) []ToolResult {
	var out []ToolResult
	for _, b := range blocksOf(body, "user") {
		if b.Type == "tool_result" {
			out = append(out, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Text: textOf(b.Content)})
		}
	}
	return out
}

func (messagesWire) userTexts(body []byte) []string {
	var out []string
	for _, b := range blocksOf(body, "user") {
		if b.Type == "text" {
			out = append(out, b.Text)
		}
	}
	return out
}

// SystemTexts are the text blocks of the system messages inside the last
// main-loop request's conversation (Messages API only): what the client put
// before the model between turns, such as a PreToolUse hook's
// additionalContext (Claude Code 2.1.328 sends it as {"role":"system"} right
// after the tool result, prefixed "PreToolUse:Bash hook additional context: ").
func (m *Model) SystemTexts() []string {
	if m.API != MessagesAPI {
		return nil
	}
	reqs := m.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if !reqs[i].Main {
			continue
		}
		var out []string
		for _, b := range blocksOf(reqs[i].Body, "system") {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
		return out
	}
	return nil
}

// openCall reads what the three JSON wires that name the model, the tools
// and streaming in the body share: a POST to a path ending in suffix is a
// model call, the agent's main one when it offers tools.
func openCall(r *http.Request, body []byte, suffix string) (modelCall, bool) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, suffix) {
		return modelCall{}, false
	}
	var in struct {
		Model  string            `json:"model"`
		Tools  []json.RawMessage `json:"tools"`
		Stream bool              `json:"stream"`
	}
	_ = json.Unmarshal(body, &in)
	return modelCall{main: len(in.Tools) > 0, stream: in.Stream, model: in.Model}, true
}
