package telemetry

import "testing"

// The OpenTelemetry standard's rule for OTLP/HTTP endpoints: a signal's
// own variable is used as it is, the general one gets /v1/<signal>
// appended, and a signal's own wins over the general one.
func TestForwardFrom(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	f := ForwardFrom(env(map[string]string{EnvEndpoint: "http://c:4318/"}))
	if f.URL("/v1/traces") != "http://c:4318/v1/traces" || f.URL("/v1/metrics") != "http://c:4318/v1/metrics" ||
		f.URL("/v1/logs") != "http://c:4318/v1/logs" || f.URL("/other") != "http://c:4318/other" {
		t.Errorf("general only: %+v", f)
	}
	f = ForwardFrom(env(map[string]string{EnvEndpoint: "http://c:4318", EnvLogsEndpoint: "http://l:1/ingest",
		EnvMetricsEndpoint: "http://m:2"}))
	if f.URL("/v1/logs") != "http://l:1/ingest" || f.URL("/v1/metrics") != "http://m:2" || f.URL("/v1/traces") != "http://c:4318/v1/traces" {
		t.Errorf("per signal: %+v", f)
	}
	f = ForwardFrom(env(map[string]string{EnvTracesEndpoint: "http://t:3/v1/traces"}))
	if f.URL("/v1/traces") != "http://t:3/v1/traces" || f.URL("/v1/logs") != "" || f.URL("/other") != "" {
		t.Errorf("traces only: %+v", f)
	}
	if !ForwardFrom(env(nil)).Empty() {
		t.Error("no variable forwards somewhere")
	}
	// Claude Code's and Gemini CLI's switches; Gemini CLI's own endpoint.
	if !ClientForward("claude", env(map[string]string{EnvEndpoint: "http://c:4318"})).Empty() {
		t.Error("Claude Code's telemetry not turned on, yet forwarded")
	}
	g := ClientForward("gemini", env(map[string]string{EnvGeminiTelemetry: "true", EnvGeminiEndpoint: "http://g:4318", EnvLogsEndpoint: "http://l:1"}))
	if g.URL("/v1/metrics") != "http://g:4318/v1/metrics" || g.URL("/v1/logs") != "http://l:1" {
		t.Errorf("gemini: %+v", g)
	}
}
