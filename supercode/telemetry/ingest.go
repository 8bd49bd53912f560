package telemetry

import (
	"strings"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// Ingest: under laserbrain run, the agent's client sends its own
// OpenTelemetry (Claude Code's events: one per model request, with its
// tokens and the cost it computed) to a receiver laserbrain-otel runs for
// that run, outside the boundary. The receiver says each model request on
// its standard output as a Received line, and forwards what it received,
// byte for byte, to the person's own endpoint when they had the client
// export there.

// Received is one line the receiver writes: its address first (Listen),
// then each model request the client reported (Request, At).
type Received struct {
	Listen  string              `json:"listen,omitempty"`
	At      time.Time           `json:"at,omitzero"`
	Request *fleet.ModelRequest `json:"request,omitempty"`
	// Forwarded is, on the receiver's last line, what it could not
	// forward to the person's endpoint (the count and the last error).
	NotForwarded int    `json:"not_forwarded,omitempty"`
	ForwardError string `json:"forward_error,omitempty"`
}

// The variables Claude Code reads for its own telemetry.
const (
	EnvClaudeTelemetry = "CLAUDE_CODE_ENABLE_TELEMETRY"
	EnvLogsExporter    = "OTEL_LOGS_EXPORTER"
	EnvMetricsExporter = "OTEL_METRICS_EXPORTER"
	EnvLogsInterval    = "OTEL_LOGS_EXPORT_INTERVAL"
	EnvMetricsInterval = "OTEL_METRIC_EXPORT_INTERVAL"
	EnvHeaders         = "OTEL_EXPORTER_OTLP_HEADERS"
)

// IngestInterval is how often, in milliseconds, the client is asked to
// send what it recorded: a model request reaches the run within about
// this much of being made.
const IngestInterval = "200"

// ClaudeForward is where the person had Claude Code send its own
// telemetry, "" when they did not turn it on (CLAUDE_CODE_ENABLE_TELEMETRY)
// or named no OTLP endpoint: the receiver forwards there.
func ClaudeForward(getenv func(string) string) string {
	if v := strings.TrimSpace(getenv(EnvClaudeTelemetry)); v == "" || v == "0" || strings.EqualFold(v, "false") {
		return ""
	}
	return strings.TrimSpace(getenv(EnvEndpoint))
}

// ClaudeEnv is environ with Claude Code's telemetry pointed at the
// receiver at url: on, logs (its events) and metrics over OTLP/HTTP
// protobuf, sent every IngestInterval. The person's own OTLP settings for
// it (endpoints, headers, protocols, exporters) are taken out: the
// receiver forwards to their endpoint with their headers, so those never
// reach the agent.
func ClaudeEnv(environ []string, url string) []string {
	out := make([]string, 0, len(environ)+8)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OTEL_EXPORTER_OTLP_") || name == EnvClaudeTelemetry || name == EnvLogsExporter ||
			name == EnvMetricsExporter || name == EnvLogsInterval || name == EnvMetricsInterval || name == EnvSDKDisabled {
			continue
		}
		out = append(out, kv)
	}
	return append(out, EnvClaudeTelemetry+"=1", EnvLogsExporter+"=otlp", EnvMetricsExporter+"=otlp",
		EnvProtocol+"=http/protobuf", EnvEndpoint+"="+url, EnvLogsInterval+"="+IngestInterval, EnvMetricsInterval+"=1000")
}
