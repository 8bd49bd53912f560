package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/otlptest"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/telemetry"
)

func call(t *testing.T, env map[string]string, stdin string, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] })
	return code, errb.String()
}

// A record laserbrain run wrote reaches the collector's OTLP receiver.
func TestExportSendsTheRecord(t *testing.T) {
	rcv := otlptest.Start(t)
	rec := telemetry.Record{Agent: telemetry.Agent{Run: fleet.Run{ID: "r9", Agent: "a", Created: time.Now().Add(-time.Second)}},
		Ending: telemetry.Ending{At: time.Now()}}
	doc, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	// The environment's endpoint, and --endpoint (the policy's) alone.
	t.Setenv(telemetry.EnvEndpoint, rcv.URL)
	if code, stderr := call(t, map[string]string{telemetry.EnvEndpoint: rcv.URL}, string(doc), "export"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Setenv(telemetry.EnvEndpoint, "")
	if code, stderr := call(t, nil, string(doc), "export", "--endpoint", rcv.URL); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	spans := rcv.Spans()
	if len(spans) != 2 || spans[0].Attrs["gen_ai.agent.id"] != "r9" || spans[1].Attrs["gen_ai.agent.id"] != "r9" {
		t.Fatalf("received %+v", spans)
	}
}

// Bad usage and a record that is not one exit 2 naming what was wrong;
// switched off, nothing is sent and nothing is said.
func TestExportRefusesBadInput(t *testing.T) {
	on := map[string]string{telemetry.EnvEndpoint: "http://127.0.0.1:9"}
	for _, c := range []struct {
		env   map[string]string
		stdin string
		args  []string
		code  int
		says  string
	}{
		{on, "{}", nil, 2, "usage: laserbrain-otel export"},
		{on, "{}", []string{"send"}, 2, "usage:"},
		{on, "not json", []string{"export"}, 2, "the run's record on standard input"},
		{on, `{"agent":{},"surprise":1}`, []string{"export"}, 2, `unknown field "surprise"`},
		{map[string]string{telemetry.EnvSwitch: "maybe"}, "{}", []string{"export"}, 2, "LASERBRAIN_OTEL=\"maybe\""},
		{map[string]string{telemetry.EnvEndpoint: "http://127.0.0.1:9", telemetry.EnvSwitch: "off"}, "{}", []string{"export"}, 0, ""},
	} {
		code, stderr := call(t, c.env, c.stdin, c.args...)
		if code != c.code || !strings.Contains(stderr, c.says) || (c.says == "" && stderr != "") {
			t.Errorf("%v %q: exit %d, %q; want %d saying %q", c.args, c.stdin, code, stderr, c.code, c.says)
		}
	}
}

// The binaries that start on every hook link no OpenTelemetry code: only
// laserbrain-otel does.
func TestHookBinariesLinkNoOpenTelemetry(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../laserbrain", "../laserbrain-gate").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "go.opentelemetry.io/") || strings.HasPrefix(pkg, "google.golang.org/grpc") ||
			strings.HasSuffix(pkg, "/supercode/telemetry/otlp") {
			t.Errorf("laserbrain or laserbrain-gate links %s", pkg)
		}
	}
}
