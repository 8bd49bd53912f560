// Package otlptest runs the OpenTelemetry Collector's own OTLP receiver
// inside a test, on loopback, so what laserkit (or an agent client) sends
// is decoded by the collector's code, not by a decoder written here. What
// it receives is kept for the test to read.
package otlptest

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// Receiver is a running OTLP/HTTP receiver.
type Receiver struct {
	// URL is its base URL (http://127.0.0.1:PORT), the value of
	// OTEL_EXPORTER_OTLP_ENDPOINT for a sender.
	URL string
	// TracesURL, MetricsURL and LogsURL are where it takes each signal
	// (URL/v1/traces and so on, unless StartAt chose other paths).
	TracesURL, MetricsURL, LogsURL string

	paths [3]string

	mu      sync.Mutex
	traces  []ptrace.Traces
	metrics []pmetric.Metrics
	logs    []plog.Logs
}

// Start starts a receiver for traces, metrics and logs over OTLP/HTTP; it
// stops when the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	return StartAt(t, "/v1/traces", "/v1/metrics", "/v1/logs")
}

// StartAt starts a receiver that takes each signal at the path given
// for it, as a collector can be set to: a sender that finds its way there
// used the signal's own URL as it was given.
func StartAt(t testing.TB, traces, metrics, logs string) *Receiver {
	t.Helper()
	r := &Receiver{paths: [3]string{traces, metrics, logs}}
	var lastErr error
	for range 5 { // a free port can be taken between its probe and the bind
		addr, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if lastErr = r.start(t, addr); lastErr == nil {
			r.URL = "http://" + addr
			r.TracesURL, r.MetricsURL, r.LogsURL = r.URL+traces, r.URL+metrics, r.URL+logs
			return r
		}
	}
	t.Fatalf("the OTLP receiver did not start: %v", lastErr)
	return nil
}

func (r *Receiver) start(t testing.TB, addr string) error {
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	http := cfg.Protocols.HTTP.GetOrInsertDefault()
	http.ServerConfig.NetAddr.Endpoint = addr
	http.TracesURLPath = otlpreceiver.SanitizedURLPath(r.paths[0])
	http.MetricsURLPath = otlpreceiver.SanitizedURLPath(r.paths[1])
	http.LogsURLPath = otlpreceiver.SanitizedURLPath(r.paths[2])
	set := receivertest.NewNopSettings(f.Type())
	ctx := context.Background()
	tr, err := f.CreateTraces(ctx, set, cfg, must(consumer.NewTraces(r.consumeTraces)))
	if err != nil {
		return err
	}
	mr, err := f.CreateMetrics(ctx, set, cfg, must(consumer.NewMetrics(r.consumeMetrics)))
	if err != nil {
		return err
	}
	lr, err := f.CreateLogs(ctx, set, cfg, must(consumer.NewLogs(r.consumeLogs)))
	if err != nil {
		return err
	}
	// The three are one receiver (the factory shares it by config):
	// starting one starts it.
	if err := tr.Start(ctx, host{}); err != nil {
		return err
	}
	t.Cleanup(func() {
		_ = tr.Shutdown(context.Background())
		_ = mr.Shutdown(context.Background())
		_ = lr.Shutdown(context.Background())
	})
	return nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("no free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err) // NewTraces and its kin fail only on a nil function
	}
	return v
}

type host struct{}

func (host) GetExtensions() map[component.ID]component.Component { return nil }

func (r *Receiver) consumeTraces(_ context.Context, td ptrace.Traces) error {
	return keep(r, &r.traces, td, ptrace.NewTraces())
}

func (r *Receiver) consumeMetrics(_ context.Context, md pmetric.Metrics) error {
	return keep(r, &r.metrics, md, pmetric.NewMetrics())
}

func (r *Receiver) consumeLogs(_ context.Context, ld plog.Logs) error {
	return keep(r, &r.logs, ld, plog.NewLogs())
}

// keep appends a copy of what arrived (into, a new empty batch) to list:
// the collector may reuse got once the consumer returns.
func keep[T interface{ CopyTo(T) }](r *Receiver, list *[]T, got, into T) error {
	got.CopyTo(into)
	r.mu.Lock()
	defer r.mu.Unlock()
	*list = append(*list, into)
	return nil
}

// Blackhole is a collector that hangs: a loopback listener that takes
// every connection and answers nothing, closed with the test. It returns
// the listener's address (host:port).
func Blackhole(t testing.TB) string {
	t.Helper()
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hole.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return hole.Addr().String()
}
