package agenttest

import (
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// chatWire is OpenAI's Chat Completions API, streamed or not.
type chatWire struct{}

func (chatWire) idPrefix() string { return "call_" }

func (chatWire) call(r *http.Request, body []byte) (modelCall, bool) {
	return openCall(r, body, "/chat/completions")
}

func (chatWire) probe(w http.ResponseWriter, r *http.Request) { openAIProbe(w, r) }

func chatFinish(t Turn) string {
	if len(t.Tools) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func (chatWire) write(w http.ResponseWriter, c modelCall, t Turn) {
	created := time.Now().Unix()
	usage := map[string]int{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
	if !c.stream {
		msg := map[string]any{"role": "assistant", "content": nil}
		if t.Text != "" {
			msg["content"] = t.Text
		}
		var calls []any
		for _, tu := range t.Tools {
			calls = append(calls, map[string]any{"id": tu.ID, "type": "function",
				"function": map[string]any{"name": tu.Name, "arguments": inputJSON(tu.Input)}})
		}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		writeJSON(w, map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion", "created": created, "model": c.model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": chatFinish(t)}}, "usage": usage})
		return
	}
	sseHeaders(w)
	chunk := func(delta map[string]any, finish any) {
		sse(w, "", map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": created, "model": c.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if t.Text != "" {
		chunk(map[string]any{"content": t.Text}, nil)
	}
	for i, tu := range t.Tools {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tu.ID, "type": "function",
			"function": map[string]any{"name": tu.Name, "arguments": ""}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
			"function": map[string]any{"arguments": inputJSON(tu.Input)}}}}, nil)
	}
	chunk(map[string]any{}, chatFinish(t))
	sse(w, "", map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": created, "model": c.model,
		"choices": []any{}, "usage": usage})
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	flush(w)
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
}

func chatMessages(body []byte) []chatMessage {
	var in struct {
		Messages []chatMessage `json:"messages"`
	}
	_ = json.Unmarshal(body, &in)
	return in.Messages
}

func (chatWire) toolResults(body []byte) []ToolResult {
	var out []ToolResult
	for _, m := range chatMessages(body) {
		if m.Role == "tool" {
			out = append(out, ToolResult{ToolUseID: m.ToolCallID, Text: textOf(m.Content)})
		}
	}
	return out
}

func (chatWire) userTexts(body []byte) []string {
	var out []string
	for _, m := range chatMessages(body) {
		if m.Role == "user" {
			out = append(out, textOf(m.Content))
		}
	}
	return out
}
