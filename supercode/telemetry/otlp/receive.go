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
)

// maxBody bounds one OTLP request the receiver reads.
const maxBody = 16 << 20

// forwardDeadline bounds one forward to the person's endpoint.
const forwardDeadline = 3 * time.Second

// Receiver takes the OTLP/HTTP an agent's client sends (logs, metrics,
// traces; protobuf or JSON, gzip or not), says each model request the
// client reported to Request, and forwards every request's body, as
// received, to Forward (a base URL, "" for none) with Headers.
type Receiver struct {
	Forward string
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
				if req, ok := modelRequest(l.Body().AsString(), l.EventName(), l.Attributes()); ok && r.Request != nil {
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

// modelRequest reads one model request out of a client's event, when it
// is one: Claude Code's claude_code.api_request (its body, or event.name
// api_request), whose token counts come as numbers or as strings.
func modelRequest(body, event string, a pcommon.Map) (fleet.ModelRequest, bool) {
	if body != "claude_code.api_request" && event != "claude_code.api_request" {
		return fleet.ModelRequest{}, false
	}
	req := fleet.ModelRequest{Client: "claude", Session: str(a, "session.id"), Model: str(a, "model")}
	req.Input, req.Output = num(a, "input_tokens"), num(a, "output_tokens")
	req.CacheRead, req.CacheWrite = num(a, "cache_read_tokens"), num(a, "cache_creation_tokens")
	if v, ok := a.Get("cost_usd"); ok {
		var c float64
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			c = v.Double()
		case pcommon.ValueTypeInt:
			c = float64(v.Int())
		default:
			c, _ = strconv.ParseFloat(v.AsString(), 64)
		}
		req.CostUSD = &c
	}
	req.Requests = 1
	return req, true
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

// forward sends body, as received, to the person's endpoint (the same
// signal's path under it), within forwardDeadline; what fails is counted.
func (r *Receiver) forward(in *http.Request, body []byte) {
	if r.Forward == "" {
		return
	}
	u, err := url.JoinPath(r.Forward, in.URL.Path)
	if err == nil {
		ctx, cancel := context.WithTimeout(in.Context(), forwardDeadline)
		defer cancel()
		var out *http.Request
		if out, err = http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body)); err == nil {
			for _, k := range []string{"Content-Type", "Content-Encoding", "User-Agent"} {
				if v := in.Header.Get(k); v != "" {
					out.Header.Set(k, v)
				}
			}
			for k, v := range r.Headers {
				out.Header.Set(k, v)
			}
			var resp *http.Response
			if resp, err = r.client.Do(out); err == nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					err = fmt.Errorf("%s answered %s", u, resp.Status)
				}
			}
		}
	}
	if err != nil {
		r.mu.Lock()
		r.notForwarded++
		r.forwardErr = err
		r.mu.Unlock()
	}
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
