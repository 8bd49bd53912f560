package otlp

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/telemetry"
)

// ExportJournal sends a supervisor's decisions as one laserbrain.supervise
// span from the first record to the last, each record an event on it (the
// collisions a round found begun each an event of their own), and closes the exporter:
// what Close says.
func ExportJournal(ctx context.Context, s telemetry.Settings, j telemetry.Journal, service, version string) (lost int64, err error) {
	if len(j.Records) == 0 {
		return 0, nil
	}
	e, err := New(ctx, s, service, version)
	if err != nil {
		return 0, err
	}
	first, last := j.Records[0], j.Records[len(j.Records)-1]
	_, span := e.start(context.Background(), telemetry.SpanSupervise, recordTime(first),
		attribute.String(telemetry.AttrFleet, j.Fleet))
	for _, r := range j.Records {
		at := trace.WithTimestamp(recordTime(r))
		kv := []attribute.KeyValue{attribute.Int64(telemetry.AttrJournalSeq, r.Seq), attribute.String(telemetry.AttrSuperviseText, r.Text)}
		if r.Round > 0 {
			kv = append(kv, attribute.Int64(telemetry.AttrSuperviseRound, r.Round))
		}
		if r.Agent != "" {
			kv = append(kv, attribute.String(telemetry.AttrAgent, r.Agent))
		}
		span.AddEvent(telemetry.EventSupervisePrefix+r.Kind, at, trace.WithAttributes(kv...))
		if r.Kind != fleet.JournalRound {
			continue
		}
		// A round lists the collisions that began since the last one
		// journaled (a record from before that, every collision standing).
		var round struct {
			Collisions [][2]string `json:"collisions"`
			Began      [][2]string `json:"collisions_began"`
		}
		_ = json.Unmarshal(r.Data, &round) // a round without collisions has none to send
		for _, c := range append(round.Collisions, round.Began...) {
			span.AddEvent(telemetry.EventCollision, at, trace.WithAttributes(attribute.Int64(telemetry.AttrSuperviseRound, r.Round),
				attribute.StringSlice(telemetry.AttrSuperviseAgents, c[:])))
		}
	}
	span.End(trace.WithTimestamp(recordTime(last)))
	return e.Close(ctx)
}

// recordTime is when a record was appended (now, for one whose time
// cannot be read).
func recordTime(r fleet.JournalRecord) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, r.At); err == nil {
		return t
	}
	return time.Now()
}
