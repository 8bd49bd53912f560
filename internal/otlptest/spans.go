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
