package agenttest

import (
	"bytes"
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
// first). A turn with tool calls ends the way the API says "run these" (the
// client runs them and comes back with their results); a text-only turn
// ends the agent's loop.
type Turn struct {
	Text  string
	Tools []ToolUse
	// Before, when set, runs on the server's goroutine before the turn is
	// sent: the client has asked for it, so everything the turn before
	// set off (its tools, their hooks) has finished. A test acts on the
	// world between two turns there (a supervisor round, a release)
	// without sleeping.
	Before func()
	// Fail, when set, answers the request with this API error instead.
	Fail *APIError
	// Usage, when set, is the usage this turn's answer reports (the
	// Messages, Responses and Gemini APIs), over Model.Usage.
	Usage *Usage
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

// ToolUse is one scripted tool call. An empty ID is filled in by the server
// (toolu_N for the Messages API, call_N for the others).
type ToolUse struct {
	ID    string
	Name  string
	Input any
	// Namespace is the Responses API's tool namespace (Codex 0.171.0 offers
	// each MCP server's tools as one namespace, mcp__SERVER); empty for the
	// other APIs.
	Namespace string
}

// Say is a text-only turn.
func Say(text string) Turn { return Turn{Text: text} }

// Call is a turn that calls one tool with input (marshalled to JSON).
func Call(name string, input any) Turn { return Turn{Tools: []ToolUse{{Name: name, Input: input}}} }

// CallID is Call with a chosen call id, so a test can find its result.
func CallID(id, name string, input any) Turn {
	return Turn{Tools: []ToolUse{{ID: id, Name: name, Input: input}}}
}

// Calls is a turn that makes several tool calls at once.
func Calls(calls ...ToolUse) Turn { return Turn{Tools: calls} }

// Bash is a turn that runs one shell command through Claude Code's Bash tool.
// For the other clients use Client.Shell.
func Bash(id, command string) Turn {
	return CallID(id, "Bash", map[string]any{"command": command, "description": "scripted"})
}

// API is the wire shape a scripted model speaks.
type API int

const (
	// MessagesAPI is Anthropic's POST /v1/messages (Claude Code).
	MessagesAPI API = iota
	// ResponsesAPI is OpenAI's POST /v1/responses with SSE (Codex).
	ResponsesAPI
	// ChatAPI is OpenAI's POST /v1/chat/completions, streamed or not (Qwen
	// Code, opencode, Cline, Copilot CLI).
	ChatAPI
	// GeminiAPI is generateContent and streamGenerateContent?alt=sse under
	// /v1beta/models/M (Gemini CLI).
	GeminiAPI
)

func (a API) String() string {
	return [...]string{"Messages", "Responses", "Chat Completions", "Gemini"}[a]
}

// Request is one request the client made, as received.
type Request struct {
	Method string
	Path   string
	Query  string
	Body   json.RawMessage
	// Main is true for a main-loop request (a model call that offers tools);
	// side requests (titles, summaries, checks without tools) are answered
	// with a short text and do not consume the script.
	Main bool
	// Model is true for a model call of the API (main or side); false for
	// probes such as GET /v1/models or count_tokens.
	Model bool
	// Turn is the index of the scripted turn this request was answered with
	// (-1 for side requests and for requests after the script ran out).
	Turn int
	// Retry is true for a main-loop request the client sent again: the
	// same body as the main-loop request before it. It is answered with
	// that request's turn again and does not consume the script.
	Retry bool
	// Usage is the usage the answer reported (zero for probes and
	// errors).
	Usage Usage
}

// Usage is the token usage a scripted response reports: input tokens not
// read from the provider's cache, output tokens, and input tokens read
// from the cache. Each API spells it its own way (the Responses and Gemini
// APIs count the cached tokens inside the input, as the services do).
type Usage struct {
	Input, Output, CacheRead int64
}

// DefaultUsage is what every response reports unless Model.Usage says
// otherwise.
var DefaultUsage = Usage{Input: MessagesInputTokens, Output: MessagesOutputTokens}

// Total is every token u counts.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead }

// Sent adds up the usage of every answer the model sent so far: the
// oracle a test holds a client's own token count to.
func (m *Model) Sent() Usage {
	var sum Usage
	for _, r := range m.Requests() {
		sum.Input += r.Usage.Input
		sum.Output += r.Usage.Output
		sum.CacheRead += r.Usage.CacheRead
	}
	return sum
}

// SideText answers side requests (titles, summaries, requests without
// tools) unless Model.Side says otherwise.
const SideText = "ok"

// Model is a scripted model server on 127.0.0.1: it answers main-loop
// requests with the scripted turns, in order, side requests with a short
// text, and records every request. One script format serves every API.
type Model struct {
	URL string
	API API
	// Side, when set, chooses the text a side request is answered with
	// (default SideText). It runs on the server's goroutine.
	Side func(Request) string
	// Usage, when set before the first request, is the usage every
	// response of the Messages, Responses and Gemini APIs reports (default
	// DefaultUsage; the Chat Completions answers always report
	// DefaultUsage). A turn's own Usage wins over it.
	Usage *Usage

	t      testing.TB
	wire   wire
	mu     sync.Mutex
	script []Turn
	next   int
	reqs   []Request
	ids    int
	// last is the body of the last main-loop request and lastTurn its
	// answer, to know a retry (Claude Code's bodies carry the session id,
	// so one body twice in a row is one request sent again).
	last     []byte
	lastTurn int
}

// wire is one API's shape: which requests are model calls, how a turn is
// written, and where the tool results and user texts are in a request.
type wire interface {
	// call reads a request: ok is false for a non-model request (a probe),
	// which probe answers.
	call(r *http.Request, body []byte) (c modelCall, ok bool)
	probe(w http.ResponseWriter, r *http.Request)
	write(w http.ResponseWriter, c modelCall, t Turn)
	toolResults(body []byte) []ToolResult
	userTexts(body []byte) []string
	idPrefix() string
}

// modelCall is what the server needs to know of one model call.
type modelCall struct {
	main   bool
	stream bool
	model  string
	usage  Usage // what the answer reports
}

// NewModel starts a Messages API server (Claude Code) for the life of the
// test. After the script runs out, every main-loop request gets a text
// turn ending the loop.
func NewModel(t testing.TB, turns ...Turn) *Model { return NewModelFor(t, MessagesAPI, turns...) }

// NewModelFor starts a scripted server speaking api for the life of the test.
func NewModelFor(t testing.TB, api API, turns ...Turn) *Model {
	t.Helper()
	m := &Model{t: t, API: api, script: turns}
	switch api {
	case MessagesAPI:
		m.wire = messagesWire{}
	case ResponsesAPI:
		m.wire = responsesWire{}
	case ChatAPI:
		m.wire = chatWire{}
	case GeminiAPI:
		m.wire = geminiWire{}
	default:
		t.Fatalf("agenttest: unknown API %d", api)
	}
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

// MainRequests returns the main-loop requests received so far, in order.
func (m *Model) MainRequests() []Request {
	var out []Request
	for _, r := range m.Requests() {
		if r.Main {
			out = append(out, r)
		}
	}
	return out
}

// Played reports how many scripted turns were sent.
func (m *Model) Played() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next
}

func (m *Model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body, Turn: -1}
	c, ok := m.wire.call(r, body)
	if !ok {
		m.mu.Lock()
		m.reqs = append(m.reqs, req)
		m.mu.Unlock()
		m.wire.probe(w, r)
		return
	}
	req.Main, req.Model = c.main, true
	var turn Turn
	m.mu.Lock()
	switch {
	case !req.Main:
		text := SideText
		if m.Side != nil {
			m.mu.Unlock()
			text = m.Side(req)
			m.mu.Lock()
		}
		turn = Say(text)
	case m.API == MessagesAPI && m.last != nil && m.lastTurn >= 0 && m.script[m.lastTurn].Fail == nil && bytes.Equal(body, m.last):
		// The client sent the request again (its connection dropped or
		// timed out under load): the model's answer to one conversation
		// is one turn, whatever the transport did.
		turn = m.script[m.lastTurn]
		turn.Before = nil
		req.Turn, req.Retry = m.lastTurn, true
	case m.next < len(m.script):
		turn = m.script[m.next]
		req.Turn = m.next
		m.last, m.lastTurn = body, m.next
		m.next++
	default:
		turn = Say("Done.")
	}
	turn.Tools = append([]ToolUse(nil), turn.Tools...)
	for i := range turn.Tools {
		if turn.Tools[i].ID == "" {
			m.ids++
			turn.Tools[i].ID = fmt.Sprintf("%s%d", m.wire.idPrefix(), m.ids)
		}
		if turn.Tools[i].Input == nil {
			turn.Tools[i].Input = map[string]any{}
		}
	}
	c.usage = DefaultUsage
	if m.API != ChatAPI {
		if m.Usage != nil {
			c.usage = *m.Usage
		}
		if turn.Usage != nil {
			c.usage = *turn.Usage
		}
	}
	if turn.Fail == nil {
		req.Usage = c.usage
	}
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	if turn.Before != nil {
		turn.Before()
	}
	if turn.Fail != nil {
		// The Messages API's error object; the OpenAI-style APIs read the
		// same "error" member.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(turn.Fail.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "error",
			"error": map[string]string{"type": turn.Fail.Type, "message": turn.Fail.Message}})
		return
	}
	m.wire.write(w, c, turn)
}

// ToolResult is the result of one tool call as the client sent it back.
type ToolResult struct {
	// ToolUseID is the call's id (tool_use_id, call_id, tool_call_id, or a
	// Gemini functionResponse's id).
	ToolUseID string
	// Name is the tool's name where the API repeats it (Gemini).
	Name string
	// IsError is the API's own error flag where it has one (Messages:
	// is_error; Gemini: a response with an "error" key).
	IsError bool
	// Text is the result's text: a string content, or the text parts of a
	// structured one joined by newlines.
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
		for _, r := range m.wire.toolResults(reqs[i].Body) {
			if r.ToolUseID == toolUseID {
				return r, true
			}
		}
	}
	return ToolResult{}, false
}

// ResultAfter finds the result of a tool call in the main-loop request
// that came right after the scripted turn that made it: the very next thing
// the model was told. It fails the test when the call was never scripted or
// the next request does not carry its result.
func (m *Model) ResultAfter(t testing.TB, toolUseID string) ToolResult {
	t.Helper()
	mains := m.MainRequests()
	turn := -1
	for i, tn := range m.script {
		for _, tu := range tn.Tools {
			if tu.ID == toolUseID {
				turn = i
			}
		}
	}
	if turn < 0 {
		t.Fatalf("agenttest: no scripted call has id %q (give it one with CallID or Client.Shell)", toolUseID)
	}
	for i, r := range mains {
		if r.Turn != turn {
			continue
		}
		if i+1 >= len(mains) {
			t.Fatalf("agenttest: the model was never called again after turn %d (the call %s)", turn, toolUseID)
		}
		for _, tr := range m.wire.toolResults(mains[i+1].Body) {
			if tr.ToolUseID == toolUseID {
				return tr
			}
		}
		t.Fatalf("agenttest: the request after turn %d carries no result for %s; it was:\n%s", turn, toolUseID, clipText(string(mains[i+1].Body)))
	}
	t.Fatalf("agenttest: turn %d (the call %s) was never played; %d of %d turns were", turn, toolUseID, m.Played(), len(m.script))
	return ToolResult{}
}

// Trace is a line for each model call received so far, in order: main
// or side, the scripted turn it was answered with, a retry, and the tool
// results it carried. A test prints it when a script went other than
// planned, to show what the client asked for and when.
func (m *Model) Trace() string {
	var b strings.Builder
	for i, r := range m.Requests() {
		if !r.Model {
			continue
		}
		kind := "side"
		if r.Main {
			kind = "main"
		}
		fmt.Fprintf(&b, "%d %s turn=%d", i, kind, r.Turn)
		if r.Retry {
			b.WriteString(" retry")
		}
		if r.Main {
			for _, tr := range m.wire.toolResults(r.Body) {
				fmt.Fprintf(&b, " result(%s error=%v)", tr.ToolUseID, tr.IsError)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// UserTexts are the plain user texts of the last main-loop request (prompts,
// hook feedback, reminders), in the API's shape.
func (m *Model) UserTexts() []string {
	reqs := m.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Main {
			return m.wire.userTexts(reqs[i].Body)
		}
	}
	return nil
}

// sse writes one server-sent event; name may be empty.
func sse(w io.Writer, name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
}

func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func inputJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil || v == nil {
		return "{}"
	}
	return string(b)
}

// textOf reads content that is a string or a list of parts with "text".
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	var out string
	for i, p := range parts {
		if p.Text == "" {
			continue
		}
		if i > 0 && out != "" {
			out += "\n"
		}
		out += p.Text
	}
	return out
}
