package telemetry

import "testing"

func TestConfigure(t *testing.T) {
	for _, c := range []struct {
		env    map[string]string
		policy string
		on     bool
		bad    bool
	}{
		{env: nil, on: false},
		{env: map[string]string{EnvEndpoint: "http://127.0.0.1:4318"}, on: true},
		{env: map[string]string{EnvTracesEndpoint: "http://127.0.0.1:4318/v1/traces"}, on: true},
		{env: map[string]string{EnvEndpoint: "http://x", EnvSwitch: "off"}, on: false},
		{env: map[string]string{EnvEndpoint: "http://x", EnvSDKDisabled: "true"}, on: false},
		{env: map[string]string{EnvSwitch: "on"}, on: true},
		{policy: "http://127.0.0.1:4318", on: true},
		{policy: "http://127.0.0.1:4318", env: map[string]string{EnvSwitch: "OFF"}, on: false},
		{env: map[string]string{EnvSwitch: "maybe"}, bad: true},
		{env: map[string]string{EnvEndpoint: "http://x", EnvProtocol: "grpc"}, bad: true},
		{env: map[string]string{EnvEndpoint: "http://x", EnvProtocol: "grpc", EnvTracesProtocol: "http/protobuf"}, on: true},
	} {
		s, err := Configure(func(k string) string { return c.env[k] }, c.policy)
		if (err != nil) != c.bad || s.On != c.on {
			t.Errorf("env %v policy %q: %+v, %v; want on=%v bad=%v", c.env, c.policy, s, err, c.on, c.bad)
		}
	}
}
