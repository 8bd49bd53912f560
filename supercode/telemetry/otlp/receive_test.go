package otlp

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/laserkit/laserkit/internal/otlptest"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/telemetry"
)

// claudeLogs is an export of two of Claude Code's events as it sends them:
// a model request (token counts as strings, the cost as a double) and a
// tool decision.
func claudeLogs() plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName("com.anthropic.claude_code.events")
	api := sl.LogRecords().AppendEmpty()
	api.Body().SetStr("claude_code.api_request")
	api.SetTimestamp(pcommon.NewTimestampFromTime(time.Unix(1700000000, 0)))
	a := api.Attributes()
	a.PutStr("model", "claude-x")
	a.PutStr("session.id", "s1")
	a.PutStr("input_tokens", "10")
	a.PutInt("output_tokens", 5)
	a.PutStr("cache_read_tokens", "7")
	a.PutStr("cache_creation_tokens", "2")
	a.PutDouble("cost_usd", 0.00024)
	other := sl.LogRecords().AppendEmpty()
	other.Body().SetStr("claude_code.tool_decision")
	other.Attributes().PutStr("input_tokens", "999")
	return ld
}

// The receiver reads the model request out of what a client sends, in
// protobuf, gzipped protobuf and JSON, and forwards each request, as sent,
// to the person's endpoint: the Collector's own receiver there decodes it.
func TestReceiverReadsAndForwards(t *testing.T) {
	person := otlptest.Start(t)
	var mu sync.Mutex
	var got []fleet.ModelRequest
	rcv := &Receiver{Forward: telemetry.ForwardFrom(func(k string) string { return map[string]string{telemetry.EnvEndpoint: person.URL}[k] }), Headers: ParseHeaders("x-team=a%20b"), Request: func(_ time.Time, r fleet.ModelRequest) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
	}}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	er := plogotlp.NewExportRequestFromLogs(claudeLogs())
	pb, err := er.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	js, err := er.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(pb)
	_ = zw.Close()
	for _, c := range []struct {
		kind, encoding string
		body           []byte
	}{{"application/x-protobuf", "", pb}, {"application/x-protobuf", "gzip", gz.Bytes()}, {"application/json", "", js}} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/logs", bytes.NewReader(c.body))
		req.Header.Set("Content-Type", c.kind)
		if c.encoding != "" {
			req.Header.Set("Content-Encoding", c.encoding)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s: %s", c.kind, c.encoding, resp.Status)
		}
	}
	if len(got) != 3 {
		t.Fatalf("read %d model requests from 3 exports of one: %+v", len(got), got)
	}
	for _, r := range got {
		if r.Client != "claude" || r.Model != "claude-x" || r.Session != "s1" || r.Input != 10 || r.Output != 5 ||
			r.CacheRead != 7 || r.CacheWrite != 2 || r.CostUSD == nil || *r.CostUSD != 0.00024 {
			t.Errorf("read %+v", r)
		}
	}
	var forwarded int
	for _, l := range person.Logs() {
		if l.Body == "claude_code.api_request" {
			forwarded++
		}
	}
	if n, err := rcv.NotForwarded(); forwarded != 3 || n != 0 {
		t.Errorf("the person's collector got %d of 3 model requests; %d not forwarded (%v)", forwarded, n, err)
	}
}

// A body that is not an OTLP logs export is refused, and a forward that
// fails is counted, never waited on past its deadline.
func TestReceiverRefusesAndCounts(t *testing.T) {
	rcv := &Receiver{Forward: telemetry.Forward{Base: "http://" + otlptest.Blackhole(t)}}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/logs", "application/x-protobuf", bytes.NewReader([]byte{0xff, 0xff, 0xff}))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("garbage: %s, want 400", resp.Status)
	}
	resp, err = http.Post(srv.URL+"/v1/metrics", "application/x-protobuf", bytes.NewReader(nil))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n, _ := rcv.NotForwarded(); resp.StatusCode != http.StatusOK || n != 1 {
		t.Errorf("metrics to a dead endpoint: %s, %d not forwarded", resp.Status, n)
	}
}
