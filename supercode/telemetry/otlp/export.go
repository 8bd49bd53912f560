package otlp

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/laserkit/laserkit/supercode/telemetry"
)

// SemconvVersion is the version of the OpenTelemetry semantic conventions
// the spans follow (their schema URL says it too).
const SemconvVersion = "1.40.0"

// QueueSize is how many spans wait in the queue before more are dropped.
const QueueSize = 4096

// CloseDeadline is how long the process that exports waits for delivery
// when it closes (and one export may take).
const CloseDeadline = telemetry.CloseDeadline

// ScopeName is the instrumentation scope of laserkit's spans.
const ScopeName = "github.com/laserkit/laserkit/supercode/telemetry/otlp"

// Exporter sends spans to one OTLP/HTTP endpoint, batched, through a
// bounded queue.
type Exporter struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	sent   *countingExporter
	made   atomic.Int64
}

// New starts an exporter for the settings, naming the service (laserbrain,
// its version). It connects to nothing until the first batch is sent.
func New(ctx context.Context, s telemetry.Settings, service, version string) (*Exporter, error) {
	if !s.On {
		return nil, fmt.Errorf("telemetry is off: %s", s.Why)
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithTimeout(CloseDeadline),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 250 * time.Millisecond,
			MaxInterval: time.Second, MaxElapsedTime: CloseDeadline}),
	}
	if s.Endpoint != "" {
		// A base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is: the traces path
		// is the standard's.
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimRight(s.Endpoint, "/")+"/v1/traces"))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("the OTLP exporter: %w", err)
	}
	counted := &countingExporter{SpanExporter: exp}
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(service), semconv.ServiceVersion(version))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(sdktrace.NewBatchSpanProcessor(counted,
			sdktrace.WithMaxQueueSize(QueueSize), sdktrace.WithExportTimeout(CloseDeadline))),
	)
	// The SDK reports a failed export to the process's error handler,
	// which by default prints it; Close counts what was lost instead.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	e := &Exporter{tp: tp, sent: counted}
	e.tracer = tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))
	return e, nil
}

// Close sends what is queued, waiting no longer than CloseDeadline, and
// says how many spans did not reach the collector (dropped from a full
// queue, refused, or not sent in time).
func (e *Exporter) Close(ctx context.Context) (lost int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, CloseDeadline)
	defer cancel()
	err = e.tp.Shutdown(ctx)
	lost = e.made.Load() - e.sent.delivered.Load()
	switch {
	case lost > 0 && err != nil:
		err = fmt.Errorf("%d of %d spans were not delivered within %v: %w", lost, e.made.Load(), CloseDeadline, err)
	case lost > 0:
		err = fmt.Errorf("%d of %d spans were not delivered", lost, e.made.Load())
	}
	return lost, err
}

// start starts a span, counting it.
func (e *Exporter) start(ctx context.Context, name string, at time.Time, kv ...attribute.KeyValue) (context.Context, trace.Span) {
	e.made.Add(1)
	return e.tracer.Start(ctx, name, trace.WithTimestamp(at), trace.WithAttributes(kv...), trace.WithSpanKind(trace.SpanKindInternal))
}

// countingExporter counts the spans the collector took.
type countingExporter struct {
	sdktrace.SpanExporter
	delivered atomic.Int64
}

func (c *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		c.delivered.Add(int64(len(spans)))
	}
	return err
}

// Export sends one ended run and closes the exporter: what Close says.
func Export(ctx context.Context, s telemetry.Settings, rec telemetry.Record, service, version string) (lost int64, err error) {
	e, err := New(ctx, s, service, version)
	if err != nil {
		return 0, err
	}
	r := e.StartRun(rec.Agent)
	r.Add(rec.Events, rec.Checks)
	if rec.Usage != nil {
		r.Usage(*rec.Usage)
	}
	r.End(rec.Ending)
	return e.Close(ctx)
}
