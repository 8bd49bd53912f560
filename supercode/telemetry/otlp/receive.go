package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/telemetry"
)

// maxBody bounds one OTLP request the receiver reads.
const maxBody = 16 << 20

// forwardDeadline bounds one forward to the person's endpoint.
const forwardDeadline = 3 * time.Second

// Receiver takes the OTLP/HTTP an agent's client sends (logs, metrics,
// traces; protobuf or JSON, gzip or not), says each model request the
// client reported to Request, and forwards every request's body, as
// received, to the URL Forward names for its signal with Headers.
type Receiver struct {
	Forward telemetry.Forward
	Headers map[string]string
	Request func(at time.Time, req fleet.ModelRequest)

	client       http.Client
	mu           sync.Mutex
	notForwarded int
	forwardErr   error
}

// NotForwarded is how many requests could not be forwarded, and the
// last error.
func (r *Receiver) NotForwarded() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notForwarded, r.forwardErr
}

// ServeHTTP answers one OTLP/HTTP export request.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "OTLP/HTTP takes POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "the request body could not be read whole", http.StatusBadRequest)
		return
	}
	if req.URL.Path == "/v1/logs" {
		if err := r.logs(req.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	r.forward(req, body)
	// An empty message is the empty export response, in protobuf and JSON.
	if isJSON(req.Header) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func isJSON(h http.Header) bool {
	return strings.HasPrefix(strings.TrimSpace(h.Get("Content-Type")), "application/json")
}

// logs reads the model requests among the log records of body.
func (r *Receiver) logs(h http.Header, body []byte) error {
	if strings.EqualFold(h.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		if body, err = io.ReadAll(io.LimitReader(zr, maxBody)); err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
	}
	er := plogotlp.NewExportRequest()
	var err error
	if isJSON(h) {
		err = er.UnmarshalJSON(body)
	} else {
		err = er.UnmarshalProto(body)
	}
	if err != nil {
		return fmt.Errorf("not an OTLP logs export request: %w", err)
	}
	for _, rl := range er.Logs().ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, l := range sl.LogRecords().All() {
				if req, ok := modelRequest(eventName(l.Body().AsString(), l.EventName(), l.Attributes()), l.Attributes()); ok && r.Request != nil {
					at := l.Timestamp().AsTime()
					if l.Timestamp() == 0 {
						at = time.Now().UTC()
					}
					r.Request(at, req)
				}
			}
		}
	}
	return nil
}

// eventName is a log record's event name among those modelRequest
// reads: the record's own, its event.name attribute (Codex, Gemini CLI),
// or its body (Claude Code, whose event.name leaves out its prefix).
func eventName(body, event string, a pcommon.Map) string {
	for _, n := range []string{event, str(a, "event.name"), body} {
		switch n {
		case "claude_code.api_request", "codex.sse_event", "gemini_cli.api_response":
			return n
		}
	}
	return ""
}

// modelRequest reads one model request out of a client's event, when it
// is one: Claude Code's claude_code.api_request, Codex's completed
// response (a codex.sse_event of kind response.completed that counts
// tokens), Gemini CLI's gemini_cli.api_response. Token counts come as
// numbers or as strings.
func modelRequest(event string, a pcommon.Map) (fleet.ModelRequest, bool) {
	var req fleet.ModelRequest
	switch {
	case event == "claude_code.api_request":
		req = fleet.ModelRequest{Client: "claude", Session: str(a, "session.id"), Model: str(a, "model")}
		req.Input, req.Output = num(a, "input_tokens"), num(a, "output_tokens")
		req.CacheRead, req.CacheWrite = num(a, "cache_read_tokens"), num(a, "cache_creation_tokens")
		req.CostUSD = cost(a)
	case event == "codex.sse_event" && str(a, "event.kind") == "response.completed" && has(a, "input_token_count"):
		// Its input counts the cached tokens; its output the reasoning.
		req = fleet.ModelRequest{Client: "codex", Session: str(a, "conversation.id"), Model: str(a, "model")}
		req.CacheRead, req.CacheWrite = num(a, "cached_token_count"), num(a, "cache_write_token_count")
		req.Input = max(0, num(a, "input_token_count")-req.CacheRead-req.CacheWrite)
		req.Output = num(a, "output_token_count")
	case event == "gemini_cli.api_response":
		// Its input counts the cached tokens; the thoughts and the tool
		// prompts are counted apart from the output and the input.
		req = fleet.ModelRequest{Client: "gemini", Session: str(a, "session.id"), Model: str(a, "model")}
		req.CacheRead = num(a, "cached_content_token_count")
		req.Input = max(0, num(a, "input_token_count")-req.CacheRead) + num(a, "tool_token_count")
		req.Output = num(a, "output_token_count") + num(a, "thoughts_token_count")
	default:
		return fleet.ModelRequest{}, false
	}
	req.Requests = 1
	return req, true
}

// cost reads a client's own cost_usd, nil when it gave none.
func cost(a pcommon.Map) *float64 {
	v, ok := a.Get("cost_usd")
	if !ok {
		return nil
	}
	var c float64
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		c = v.Double()
	case pcommon.ValueTypeInt:
		c = float64(v.Int())
	default:
		c, _ = strconv.ParseFloat(v.AsString(), 64)
	}
	return &c
}

func has(a pcommon.Map, k string) bool {
	_, ok := a.Get(k)
	return ok
}

func str(a pcommon.Map, k string) string {
	if v, ok := a.Get(k); ok {
		return v.AsString()
	}
	return ""
}

func num(a pcommon.Map, k string) int64 {
	v, ok := a.Get(k)
	if !ok {
		return 0
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeDouble:
		return int64(v.Double())
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(v.AsString()), 10, 64)
	return n
}

// forward sends body, as received, to the person's endpoint for its
// signal, within forwardDeadline; what fails is counted.
func (r *Receiver) forward(in *http.Request, body []byte) {
	u := r.Forward.URL(in.URL.Path)
	if u == "" {
		return
	}
	if err := r.send(in, u, body); err != nil {
		r.mu.Lock()
		r.notForwarded++
		r.forwardErr = err
		r.mu.Unlock()
	}
}

// send posts body to u with the request's content headers and Headers.
func (r *Receiver) send(in *http.Request, u string, body []byte) error {
	ctx, cancel := context.WithTimeout(in.Context(), forwardDeadline)
	defer cancel()
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, k := range []string{"Content-Type", "Content-Encoding", "User-Agent"} {
		if v := in.Header.Get(k); v != "" {
			out.Header.Set(k, v)
		}
	}
	for k, v := range r.Headers {
		out.Header.Set(k, v)
	}
	resp, err := r.client.Do(out)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s", u, resp.Status)
	}
	return nil
}

// ParseHeaders reads OTEL_EXPORTER_OTLP_HEADERS as the standard spells
// it: key=value pairs, comma separated, values URL-encoded.
func ParseHeaders(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			continue
		}
		if dv, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
			v = dv
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}
