package telemetry

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// Ingest: under laserbrain run, the agent's client sends its own
// OpenTelemetry (one event per model request, with its tokens, and for
// Claude Code the cost it computed) to a receiver laserbrain-otel runs
// for that run, outside the boundary. The receiver says each model
// request on its standard output as a Received line, and forwards what it
// received, byte for byte, to the person's own endpoints when they had
// the client export there.

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

// The variables the clients read for their own telemetry.
const (
	EnvClaudeTelemetry = "CLAUDE_CODE_ENABLE_TELEMETRY"
	EnvLogsExporter    = "OTEL_LOGS_EXPORTER"
	EnvMetricsExporter = "OTEL_METRICS_EXPORTER"
	EnvLogsInterval    = "OTEL_LOGS_EXPORT_INTERVAL"
	EnvMetricsInterval = "OTEL_METRIC_EXPORT_INTERVAL"
	EnvHeaders         = "OTEL_EXPORTER_OTLP_HEADERS"
	// EnvLogsDelay is the batch log processor's delay, which Codex's
	// OpenTelemetry SDK reads.
	EnvLogsDelay = "OTEL_BLRP_SCHEDULE_DELAY"

	EnvGeminiTelemetry  = "GEMINI_TELEMETRY_ENABLED"
	EnvGeminiTarget     = "GEMINI_TELEMETRY_TARGET"
	EnvGeminiEndpoint   = "GEMINI_TELEMETRY_OTLP_ENDPOINT"
	EnvGeminiProtocol   = "GEMINI_TELEMETRY_OTLP_PROTOCOL"
	EnvGeminiPrompts    = "GEMINI_TELEMETRY_LOG_PROMPTS"
	EnvGeminiCollector  = "GEMINI_TELEMETRY_USE_COLLECTOR"
	EnvGeminiOutfile    = "GEMINI_TELEMETRY_OUTFILE"
	envGeminiTelemetryP = "GEMINI_TELEMETRY_"
)

// IngestInterval is how often, in milliseconds, the client is asked to
// send what it recorded: a model request reaches the run within about
// this much of being made.
const IngestInterval = "200"

// The OTLP signals and their paths under a base endpoint.
const (
	SignalTraces  = "traces"
	SignalMetrics = "metrics"
	SignalLogs    = "logs"
)

// Forward is where the receiver forwards what a client sent: the URL of
// each signal, as the OpenTelemetry standard has an exporter find it — a
// signal's own endpoint variable used as it is, else the general one with
// /v1/<signal> appended. Base is the general one, for a path that is no
// signal's. The zero value forwards nothing.
type Forward struct {
	Base                  string
	Traces, Metrics, Logs string
}

// Empty reports whether f forwards nothing.
func (f Forward) Empty() bool { return f == Forward{} }

// ForwardFrom reads the standard OTLP endpoint variables.
func ForwardFrom(getenv func(string) string) Forward {
	f := Forward{Base: strings.TrimSpace(getenv(EnvEndpoint))}
	for _, s := range []struct {
		dst  *string
		env  string
		path string
	}{{&f.Traces, EnvTracesEndpoint, SignalTraces}, {&f.Metrics, EnvMetricsEndpoint, SignalMetrics}, {&f.Logs, EnvLogsEndpoint, SignalLogs}} {
		if v := strings.TrimSpace(getenv(s.env)); v != "" {
			*s.dst = v
		} else if f.Base != "" {
			*s.dst = signalURL(f.Base, s.path)
		}
	}
	return f
}

// signalURL is a signal's URL under a base endpoint.
func signalURL(base, signal string) string {
	return strings.TrimRight(base, "/") + "/v1/" + signal
}

// URL is where a request the client sent to path goes, "" for nowhere:
// its signal's own URL, else the same path under Base.
func (f Forward) URL(path string) string {
	own := map[string]string{"/v1/" + SignalTraces: f.Traces, "/v1/" + SignalMetrics: f.Metrics, "/v1/" + SignalLogs: f.Logs}[path]
	if own != "" {
		return own
	}
	if f.Base == "" {
		return ""
	}
	u, err := url.JoinPath(f.Base, path)
	if err != nil {
		return ""
	}
	return u
}

// Args are the receiver's flags that forward to f.
func (f Forward) Args() []string {
	var args []string
	for _, a := range []struct{ flag, v string }{{"--forward", f.Base}, {"--forward-traces", f.Traces},
		{"--forward-metrics", f.Metrics}, {"--forward-logs", f.Logs}} {
		if a.v != "" {
			args = append(args, a.flag, a.v)
		}
	}
	return args
}

// String names where f forwards, for a note to the person.
func (f Forward) String() string {
	if f.Base != "" && f.Traces == signalURL(f.Base, SignalTraces) && f.Metrics == signalURL(f.Base, SignalMetrics) && f.Logs == signalURL(f.Base, SignalLogs) {
		return f.Base
	}
	var parts []string
	for _, p := range []struct{ name, v string }{{SignalTraces, f.Traces}, {SignalMetrics, f.Metrics}, {SignalLogs, f.Logs}} {
		if p.v != "" {
			parts = append(parts, p.name+" "+p.v)
		}
	}
	return strings.Join(parts, ", ")
}

// on reads a client's switch variable: set, and not 0 or false.
func on(v string) bool {
	v = strings.TrimSpace(v)
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// ClientForward is where the person had the client (claude, codex,
// gemini) send its own telemetry; empty when they did not turn it on or
// named no OTLP endpoint. Claude Code's is on with
// CLAUDE_CODE_ENABLE_TELEMETRY, Gemini CLI's with
// GEMINI_TELEMETRY_ENABLED (its own endpoint variable a base URL, as the
// standard's); Codex's settings live in its config.toml, which the run's
// own settings replace, so the standard variables say where it goes.
func ClientForward(client string, getenv func(string) string) Forward {
	switch client {
	case "claude":
		if !on(getenv(EnvClaudeTelemetry)) {
			return Forward{}
		}
	case "gemini":
		if !on(getenv(EnvGeminiTelemetry)) {
			return Forward{}
		}
		if v := strings.TrimSpace(getenv(EnvGeminiEndpoint)); v != "" {
			return ForwardFrom(func(k string) string {
				if k == EnvEndpoint {
					return v
				}
				return getenv(k)
			})
		}
	case "codex":
	default:
		return Forward{}
	}
	return ForwardFrom(getenv)
}

// ClientEnv is environ with the client's telemetry pointed at the
// receiver at url. The person's own OTLP settings for it (endpoints,
// headers, protocols, exporters) are taken out: the receiver forwards to
// their endpoints with their headers, so those never reach the agent.
func ClientEnv(client string, environ []string, url string) []string {
	out := make([]string, 0, len(environ)+8)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OTEL_EXPORTER_OTLP_") || name == EnvClaudeTelemetry || name == EnvLogsExporter ||
			name == EnvMetricsExporter || name == EnvLogsInterval || name == EnvMetricsInterval || name == EnvSDKDisabled ||
			name == EnvLogsDelay || (client == "gemini" && strings.HasPrefix(name, envGeminiTelemetryP) && name != EnvGeminiPrompts) {
			continue
		}
		out = append(out, kv)
	}
	switch client {
	case "claude":
		return append(out, EnvClaudeTelemetry+"=1", EnvLogsExporter+"=otlp", EnvMetricsExporter+"=otlp",
			EnvProtocol+"=http/protobuf", EnvEndpoint+"="+url, EnvLogsInterval+"="+IngestInterval, EnvMetricsInterval+"=1000")
	case "gemini":
		return append(out, EnvGeminiTelemetry+"=true", EnvGeminiTarget+"=local", EnvGeminiEndpoint+"="+url,
			EnvGeminiProtocol+"=http", EnvGeminiCollector+"=false")
	case "codex":
		return append(out, EnvLogsDelay+"="+IngestInterval)
	}
	return out
}

// CodexArgs are the configuration overrides (codex -c) that send Codex's
// own telemetry to the receiver at url: its events (logs), and, when the
// person's endpoints are forwarded to, its metrics and traces too. Codex
// does not send the prompts' text unless the person's config says so.
func CodexArgs(url string, forwarding bool) []string {
	exporter := func(signal string) string {
		return fmt.Sprintf(`{otlp-http={endpoint=%q,protocol="binary"}}`, signalURL(url, signal))
	}
	args := []string{"-c", "otel.exporter=" + exporter(SignalLogs)}
	if forwarding {
		args = append(args, "-c", "otel.metrics_exporter="+exporter(SignalMetrics), "-c", "otel.trace_exporter="+exporter(SignalTraces))
	}
	return args
}
