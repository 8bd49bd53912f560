package otlptest

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Span is one received span, read out of the collector's data.
type Span struct {
	Name              string
	TraceID           string
	SpanID, ParentID  string
	Kind              string
	Start, End        time.Time
	StatusCode        string
	StatusMessage     string
	Attrs             map[string]any
	Events            []Event
	ScopeName         string
	ScopeSchemaURL    string
	ResourceSchemaURL string
	Resource          map[string]any
}

// Event is one event of a span.
type Event struct {
	Name  string
	At    time.Time
	Attrs map[string]any
}

// Spans are the spans received so far, in the order they arrived.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Span
	for _, td := range r.traces {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					sp := Span{
						Name: s.Name(), TraceID: s.TraceID().String(), SpanID: s.SpanID().String(), ParentID: s.ParentSpanID().String(),
						Kind: s.Kind().String(), Start: s.StartTimestamp().AsTime(), End: s.EndTimestamp().AsTime(),
						StatusCode: s.Status().Code().String(), StatusMessage: s.Status().Message(),
						Attrs: s.Attributes().AsRaw(), ScopeName: ss.Scope().Name(), ScopeSchemaURL: ss.SchemaUrl(),
						ResourceSchemaURL: rs.SchemaUrl(), Resource: rs.Resource().Attributes().AsRaw(),
					}
					for _, e := range s.Events().All() {
						sp.Events = append(sp.Events, Event{Name: e.Name(), At: e.Timestamp().AsTime(), Attrs: e.Attributes().AsRaw()})
					}
					out = append(out, sp)
				}
			}
		}
	}
	return out
}

// Attrs is a map of attributes as the collector holds them.
func Attrs(m pcommon.Map) map[string]any { return m.AsRaw() }

// Log is one received log record (an event, for the clients that send
// their events as logs: the body or the event name says which).
type Log struct {
	Body      string
	EventName string
	At        time.Time
	Attrs     map[string]any
	ScopeName string
	Resource  map[string]any
}

// Logs are the log records received so far, in the order they arrived.
func (r *Receiver) Logs() []Log {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Log
	for _, ld := range r.logs {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, l := range sl.LogRecords().All() {
					out = append(out, Log{Body: l.Body().AsString(), EventName: l.EventName(), At: l.Timestamp().AsTime(),
						Attrs: l.Attributes().AsRaw(), ScopeName: sl.Scope().Name(), Resource: rl.Resource().Attributes().AsRaw()})
				}
			}
		}
	}
	return out
}

// MetricNames are the names of the metrics received so far, each once.
func (r *Receiver) MetricNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, md := range r.metrics {
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					if !seen[m.Name()] {
						seen[m.Name()] = true
						out = append(out, m.Name())
					}
				}
			}
		}
	}
	return out
}
