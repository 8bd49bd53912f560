package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responsesWire is OpenAI's Responses API as Codex uses it: POST
// /v1/responses, streamed as server-sent events.
type responsesWire struct{}

func (responsesWire) idPrefix() string { return "call_" }

func (responsesWire) call(r *http.Request, body []byte) (modelCall, bool) {
	return openCall(r, body, "/responses")
}

func (responsesWire) probe(w http.ResponseWriter, r *http.Request) { openAIProbe(w, r) }

// openAIProbe answers GET /models with one model, anything else with {}.
func openAIProbe(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		writeJSON(w, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "scripted", "object": "model", "created": 0, "owned_by": "agenttest"},
		}})
		return
	}
	writeJSON(w, map[string]any{})
}

func (responsesWire) items(t Turn) []map[string]any {
	var items []map[string]any
	if t.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": "msg_scripted", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}})
	}
	for i, tu := range t.Tools {
		call := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", i), "status": "completed",
			"call_id": tu.ID, "name": tu.Name, "arguments": inputJSON(tu.Input)}
		if tu.Namespace != "" {
			call["namespace"] = tu.Namespace
		}
		items = append(items, call)
	}
	return items
}

func (rw responsesWire) write(w http.ResponseWriter, c modelCall, t Turn) {
	u := c.usage // the input counts the cached tokens, as the service does
	usage := map[string]any{"input_tokens": u.Input + u.CacheRead, "input_tokens_details": map[string]int64{"cached_tokens": u.CacheRead},
		"output_tokens": u.Output, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": u.Total()}
	items := rw.items(t)
	resp := map[string]any{"id": "resp_scripted", "object": "response", "model": c.model, "status": "completed",
		"output": items, "usage": usage}
	if !c.stream {
		writeJSON(w, resp)
		return
	}
	sseHeaders(w)
	seq := 0
	send := func(typ string, data map[string]any) {
		data["type"] = typ
		data["sequence_number"] = seq
		seq++
		sse(w, typ, data)
	}
	send("response.created", map[string]any{"response": map[string]any{"id": "resp_scripted", "object": "response",
		"model": c.model, "status": "in_progress", "output": []any{}}})
	for i, it := range items {
		send("response.output_item.added", map[string]any{"output_index": i, "item": it})
		if it["type"] == "message" {
			send("response.output_text.delta", map[string]any{"output_index": i, "item_id": it["id"], "content_index": 0, "delta": t.Text})
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	send("response.completed", map[string]any{"response": resp})
	flush(w)
}

type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	Output  json.RawMessage `json:"output"`
	Content json.RawMessage `json:"content"`
}

func responsesInput(body []byte) []responsesItem {
	var in struct {
		Input json.RawMessage `json:"input"`
	}
	_ = json.Unmarshal(body, &in)
	var s string
	if json.Unmarshal(in.Input, &s) == nil {
		return []responsesItem{{Type: "message", Role: "user", Content: in.Input}}
	}
	var items []responsesItem
	_ = json.Unmarshal(in.Input, &items)
	return items
}

func (responsesWire) toolResults(body []byte) []ToolResult {
	var out []ToolResult
	for _, it := range responsesInput(body) {
		if strings.HasSuffix(it.Type, "_call_output") {
			out = append(out, ToolResult{ToolUseID: it.CallID, Text: responsesOutputText(it.Output)})
		}
	}
	return out
}

// responsesOutputText reads a *_call_output's output: a string, content
// items, or an object with "content"/"output".
func responsesOutputText(raw json.RawMessage) string {
	var obj struct {
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
	}
	if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &obj) == nil {
		if obj.Content != nil {
			return textOf(obj.Content)
		}
		if obj.Output != nil {
			return textOf(obj.Output)
		}
	}
	return textOf(raw)
}

func (responsesWire) userTexts(body []byte) []string {
	var out []string
	for _, it := range responsesInput(body) {
		if it.Type == "message" && it.Role == "user" {
			out = append(out, textOf(it.Content))
		}
	}
	return out
}
