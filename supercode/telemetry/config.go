package telemetry

import (
	"fmt"
	"strings"
	"time"
)

// CloseDeadline is the longest an exporting process waits for the
// collector: a dead or slow one costs the end of a run no more.
const CloseDeadline = 3 * time.Second

// The variables that turn export on and off. The OTLP ones are the
// OpenTelemetry standard's; the exporter reads them (and the headers,
// timeout and certificate variables beside them) itself.
const (
	// EnvSwitch turns export off ("off") whatever else is set, or on
	// ("on") to the standard's default endpoint when no endpoint is named.
	EnvSwitch         = "LASERBRAIN_OTEL"
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	// The metrics' and logs' own endpoints: laserkit exports neither,
	// but forwards the clients' to them.
	EnvMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	EnvLogsEndpoint    = "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"
	EnvProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol  = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvSDKDisabled     = "OTEL_SDK_DISABLED"
)

// Settings is where a run's telemetry goes; the zero value exports
// nothing.
type Settings struct {
	// On: a collector is named and export is not switched off.
	On bool
	// Endpoint is the traces URL the project policy names, used when the
	// environment names none ("" = the environment's, or the standard's
	// default under LASERBRAIN_OTEL=on).
	Endpoint string
	// Why says where the setting came from, for a note to the person.
	Why string
}

// Configure decides whether a run exports, from the environment and the
// project policy's endpoint ("" when it names none). The environment wins
// over the policy; LASERBRAIN_OTEL=off and OTEL_SDK_DISABLED=true win over
// both. A value it cannot use is an error naming the variable.
func Configure(getenv func(string) string, policyEndpoint string) (Settings, error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv(EnvSwitch))); v {
	case "", "on":
	case "off":
		return Settings{Why: EnvSwitch + "=off"}, nil
	default:
		return Settings{}, fmt.Errorf("%s=%q: use on or off", EnvSwitch, getenv(EnvSwitch))
	}
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSDKDisabled)), "true") {
		return Settings{Why: EnvSDKDisabled + "=true"}, nil
	}
	for _, name := range []string{EnvTracesProtocol, EnvProtocol} {
		if p := strings.TrimSpace(getenv(name)); p != "" {
			if p != "http/protobuf" {
				return Settings{}, fmt.Errorf("%s=%q: laserkit exports OTLP over HTTP only (http/protobuf); unset it or set %s=off", name, p, EnvSwitch)
			}
			break // the traces variable wins over the general one
		}
	}
	for _, name := range []string{EnvTracesEndpoint, EnvEndpoint} {
		if strings.TrimSpace(getenv(name)) != "" {
			return Settings{On: true, Why: name}, nil
		}
	}
	if policyEndpoint != "" {
		return Settings{On: true, Endpoint: policyEndpoint, Why: "the project policy's telemetry.endpoint"}, nil
	}
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSwitch)), "on") {
		return Settings{On: true, Why: EnvSwitch + "=on"}, nil
	}
	return Settings{Why: "no OTLP endpoint configured"}, nil
}
