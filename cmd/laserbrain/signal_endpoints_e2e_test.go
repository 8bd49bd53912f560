package main

import (
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/internal/otlptest"
)

// Each signal goes to its own endpoint when the person names one, used as
// it is (a collector taking each signal at a path of its own), and the
// general endpoint gets none of them: laserbrain's own spans and Codex's
// own traces reach the traces endpoint, Codex's metrics the metrics one,
// its events the logs one — forwarded by the run's receiver, Codex
// itself pointed at the receiver alone.
func TestPerSignalEndpoints(t *testing.T) {
	traces := otlptest.StartAt(t, "/t/spans", "/t/no-metrics", "/t/no-logs")
	metrics := otlptest.StartAt(t, "/m/no-spans", "/m/points", "/m/no-logs")
	logs := otlptest.StartAt(t, "/l/no-spans", "/l/no-metrics", "/l/records")
	general := otlptest.Start(t)
	s, tok := clientTokensRun(t, agenttest.Codex,
		"OTEL_EXPORTER_OTLP_ENDPOINT="+general.URL,
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+traces.TracesURL,
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT="+metrics.MetricsURL,
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT="+logs.LogsURL)
	wantSent(t, s, tok)
	var ours, codex int
	for _, sp := range traces.Spans() {
		switch {
		case sp.Attrs["gen_ai.operation.name"] == "invoke_agent" && sp.Resource["service.name"] == "laserbrain":
			ours++
		case sp.Resource["service.name"] != "laserbrain":
			codex++
		}
	}
	if ours != 1 || codex == 0 {
		t.Errorf("the traces endpoint got %d invoke_agent spans of laserbrain's (want 1) and %d of Codex's own", ours, codex)
	}
	var codexMetrics []string
	for _, m := range metrics.MetricNames() {
		if strings.HasPrefix(m, "codex.") {
			codexMetrics = append(codexMetrics, m)
		}
	}
	if len(codexMetrics) == 0 {
		t.Errorf("the metrics endpoint got no metric of Codex's: %v", metrics.MetricNames())
	}
	responses := 0
	for _, l := range logs.Logs() {
		if l.Attrs["event.name"] == "codex.sse_event" && l.Attrs["event.kind"] == "response.completed" {
			responses++
		}
	}
	if responses == 0 {
		t.Errorf("the logs endpoint got no completed response of Codex's (%d records)", len(logs.Logs()))
	}
	for name, r := range map[string]*otlptest.Receiver{"traces": traces, "metrics": metrics, "logs": logs, "general": general} {
		sp, ms, ls := len(r.Spans()), len(r.MetricNames()), len(r.Logs())
		if (name != "traces" && sp > 0) || (name != "metrics" && ms > 0) || (name != "logs" && ls > 0) {
			t.Errorf("the %s endpoint got %d spans, %d metrics, %d log records of other signals", name, sp, ms, ls)
		}
	}
}
