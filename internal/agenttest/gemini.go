package agenttest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// geminiWire is the Gemini API's generateContent and
// streamGenerateContent?alt=sse under /v1beta/models/M (Gemini CLI).
type geminiWire struct{}

func (geminiWire) idPrefix() string { return "call_" }

func (geminiWire) call(r *http.Request, body []byte) (modelCall, bool) {
	if r.Method != http.MethodPost {
		return modelCall{}, false
	}
	path := r.URL.Path
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return modelCall{}, false
	}
	model, method, ok := strings.Cut(path[i+len("/models/"):], ":")
	if !ok || (method != "generateContent" && method != "streamGenerateContent") {
		return modelCall{}, false
	}
	var in struct {
		Tools []struct {
			FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &in)
	main := false
	for _, t := range in.Tools {
		main = main || len(t.FunctionDeclarations) > 0
	}
	return modelCall{main: main, stream: method == "streamGenerateContent", model: model}, true
}

// probe answers countTokens with a count, anything else with {}.
func (geminiWire) probe(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, ":countTokens") {
		writeJSON(w, map[string]any{"totalTokens": 10})
		return
	}
	writeJSON(w, map[string]any{})
}

func (geminiWire) write(w http.ResponseWriter, c modelCall, t Turn) {
	var parts []any
	if t.Text != "" {
		parts = append(parts, map[string]any{"text": t.Text})
	}
	for _, tu := range t.Tools {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": tu.ID, "name": tu.Name, "args": tu.Input}})
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0}},
		// The prompt's count holds the cached tokens, as the service's does.
		"usageMetadata": map[string]int64{"promptTokenCount": c.usage.Input + c.usage.CacheRead, "cachedContentTokenCount": c.usage.CacheRead,
			"candidatesTokenCount": c.usage.Output, "totalTokenCount": c.usage.Total()},
		"modelVersion": c.model, "responseId": "resp_scripted",
	}
	if !c.stream {
		writeJSON(w, resp)
		return
	}
	sseHeaders(w)
	sse(w, "", resp)
	flush(w)
}

type geminiPart struct {
	Text             string `json:"text"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

func geminiContents(body []byte) []geminiContent {
	var in struct {
		Contents []geminiContent `json:"contents"`
	}
	_ = json.Unmarshal(body, &in)
	return in.Contents
}

func (geminiWire) toolResults(body []byte) []ToolResult {
	var out []ToolResult
	for _, c := range geminiContents(body) {
		for _, p := range c.Parts {
			fr := p.FunctionResponse
			if fr == nil {
				continue
			}
			var resp struct {
				Output json.RawMessage `json:"output"`
				Error  json.RawMessage `json:"error"`
			}
			_ = json.Unmarshal(fr.Response, &resp)
			tr := ToolResult{ToolUseID: fr.ID, Name: fr.Name, IsError: resp.Error != nil}
			switch {
			case resp.Error != nil:
				tr.Text = textOf(resp.Error)
			case resp.Output != nil:
				tr.Text = textOf(resp.Output)
			default:
				tr.Text = string(fr.Response)
			}
			out = append(out, tr)
		}
	}
	return out
}

func (geminiWire) userTexts(body []byte) []string {
	var out []string
	for _, c := range geminiContents(body) {
		if c.Role != "user" {
			continue
		}
		for _, p := range c.Parts {
			if p.Text != "" {
				out = append(out, p.Text)
			}
		}
	}
	return out
}
