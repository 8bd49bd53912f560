package pgstore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// The OCA bridge's read-back queries, for a human inspecting what ponder
// wrote. Each takes its slug (or subject) as a bind parameter, escaped for
// LIKE so that a slug's characters match only themselves, and breaks
// timestamp ties (rows written in one transaction share now()) by id.

// SessionSummary is one row of "which sessions are in here?".
type SessionSummary struct {
	Slug        string    `json:"slug"`
	Started     time.Time `json:"started"`
	LastTouched time.Time `json:"lastTouched"`
	Passes      int       `json:"passes"`
	Converged   bool      `json:"converged"`
	Applied     bool      `json:"applied"`
}

const sessionsSQL = `
SELECT substring(content from '\[([^\]]+)\]')                   AS slug,
       min(timestamp)                                           AS started,
       max(timestamp)                                           AS last_touched,
       count(DISTINCT substring(content from ' pass=([0-9]+)$'))
             FILTER (WHERE event_type = 'ponder_pass')            AS passes,
       bool_or(event_type = 'ponder_converged')                  AS converged,
       bool_or(event_type = 'ponder_applied')                    AS applied
FROM episodic_memory
WHERE event_type IN ('ponder_start', 'ponder_pass', 'ponder_converged', 'ponder_stopped', 'ponder_applied')
GROUP BY 1
ORDER BY started DESC, slug`

// Sessions lists every ponder session in the database, newest first. Its
// passes are distinct pass numbers, not ponder_pass rows: judge writes a row
// each time it runs, and a re-run judge is not another pass. (The OCA
// bridge's own query counts rows; the pass number is the content's last token, pass=N.)
func (s *Store) Sessions(ctx context.Context) ([]SessionSummary, error) {
	rows, err := s.conn.Query(ctx, sessionsSQL)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.CollectableRow, v *SessionSummary) error {
		var slug *string
		err := r.Scan(&slug, &v.Started, &v.LastTouched, &v.Passes, &v.Converged, &v.Applied)
		if slug != nil {
			v.Slug = *slug
		}
		return err
	})
}

// TimelineRow is one row of "the whole session, in order".
type TimelineRow struct {
	ID            int64     `json:"id"`
	Timestamp     time.Time `json:"timestamp"`
	EventType     string    `json:"eventType"`
	Prediction    *string   `json:"prediction"`
	ActualOutcome *string   `json:"actualOutcome"`
	Surprise      *float64  `json:"surpriseMagnitude"`
	Importance    *float64  `json:"importanceScore"`
	Content       string    `json:"content"`
}

const timelineSQL = `
SELECT id, timestamp, event_type, prediction, actual_outcome, surprise_magnitude, importance_score, content
FROM episodic_memory
WHERE event_type IN ('ponder_start', 'ponder_pass', 'ponder_converged', 'ponder_stopped', 'ponder_applied')
  AND content LIKE '%[' || $1::text || ']%' ESCAPE '\'
ORDER BY timestamp, id`

// Timeline returns a session's episodic rows in order.
func (s *Store) Timeline(ctx context.Context, slug string) ([]TimelineRow, error) {
	rows, err := s.conn.Query(ctx, timelineSQL, likeLiteral(slug))
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.CollectableRow, v *TimelineRow) error {
		return r.Scan(&v.ID, &v.Timestamp, &v.EventType, &v.Prediction, &v.ActualOutcome, &v.Surprise, &v.Importance, &v.Content)
	})
}

// LedgerRow is one row of the prediction ledger.
type LedgerRow struct {
	ID                 int64    `json:"id"`
	ForecastMadeInPass *int     `json:"forecastMadeInPass"`
	AboutPass          *int     `json:"aboutPass"`
	Forecast           *float64 `json:"forecast"`
	Confidence         float64  `json:"confidence"`
	Status             *string  `json:"status"`
	Surprise           *float64 `json:"surpriseMagnitude"`
	ConfidenceDelta    *float64 `json:"confidenceDelta"`
	ModelUpdate        *string  `json:"modelUpdate"`
}

const ledgerSQL = `
SELECT id,
       (source_data->>'pass')::int                    AS forecast_made_in_pass,
       (source_data->>'for_pass')::int                AS about_pass,
       (source_data->>'forecast_churn')::float8       AS forecast,
       confidence,
       status,
       surprise_magnitude,
       confidence_delta,
       model_update
FROM hypotheses
WHERE domain = 'ponder:' || $1::text
ORDER BY created_at, id`

// Ledger returns a session's forecasts in the order they were made: did
// the loop model itself?
func (s *Store) Ledger(ctx context.Context, slug string) ([]LedgerRow, error) {
	rows, err := s.conn.Query(ctx, ledgerSQL, slug)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.CollectableRow, v *LedgerRow) error {
		return r.Scan(&v.ID, &v.ForecastMadeInPass, &v.AboutPass, &v.Forecast, &v.Confidence, &v.Status,
			&v.Surprise, &v.ConfidenceDelta, &v.ModelUpdate)
	})
}

// SelfModelRow is one session of "how well does ponder model itself?".
type SelfModelRow struct {
	Domain       string   `json:"domain"`
	Held         int      `json:"held"`
	Missed       int      `json:"missed"`
	MeanSurprise *float64 `json:"meanSurprise"` // rounded to 3 decimals
}

const selfModelSQL = `
SELECT domain,
       count(*) FILTER (WHERE status = 'confirmed')      AS held,
       count(*) FILTER (WHERE status = 'refuted')        AS missed,
       round(avg(surprise_magnitude)::numeric, 3)::float8 AS mean_surprise
FROM hypotheses
WHERE domain LIKE 'ponder:%' AND tested_at IS NOT NULL
GROUP BY domain
ORDER BY mean_surprise, domain`

// SelfModel scores the forecasts of every session that tested any.
func (s *Store) SelfModel(ctx context.Context) ([]SelfModelRow, error) {
	rows, err := s.conn.Query(ctx, selfModelSQL)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.CollectableRow, v *SelfModelRow) error {
		return r.Scan(&v.Domain, &v.Held, &v.Missed, &v.MeanSurprise)
	})
}

// PerspectiveRow is one deliberating pass: the four voices' confidences and
// arguments (NULL for a voice that did not speak).
type PerspectiveRow struct {
	ID                int64      `json:"id"`
	StartedAt         time.Time  `json:"startedAt"`
	CompletedAt       *time.Time `json:"completedAt"`
	Decision          string     `json:"decision"`
	Stakes            *string    `json:"stakes"`
	SkepticConfidence *float64   `json:"skepticConfidence"`
	BuilderConfidence *float64   `json:"builderConfidence"`
	DreamerConfidence *float64   `json:"dreamerConfidence"`
	EmpathConfidence  *float64   `json:"empathConfidence"`
	SkepticArgument   *string    `json:"skepticArgument"`
	BuilderArgument   *string    `json:"builderArgument"`
	DreamerArgument   *string    `json:"dreamerArgument"`
	EmpathArgument    *string    `json:"empathArgument"`
	Voices            int        `json:"voices"`
	Resolution        *string    `json:"resolution"`
}

const perspectivesSQL = `
SELECT id, started_at, completed_at, decision, stakes,
       skeptic_confidence, builder_confidence, dreamer_confidence, empath_confidence,
       skeptic_argument, builder_argument, dreamer_argument, empath_argument,
       (skeptic_argument IS NOT NULL)::int + (builder_argument IS NOT NULL)::int
     + (dreamer_argument IS NOT NULL)::int + (empath_argument IS NOT NULL)::int AS voices,
       resolution
FROM deliberations
WHERE resolution_method = 'ponder-pass'
  AND decision LIKE 'ponder ' || $1::text || ' pass%' ESCAPE '\'
ORDER BY started_at, id`

// Perspectives returns a session's deliberations, pass by pass.
func (s *Store) Perspectives(ctx context.Context, slug string) ([]PerspectiveRow, error) {
	rows, err := s.conn.Query(ctx, perspectivesSQL, likeLiteral(slug))
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.CollectableRow, v *PerspectiveRow) error {
		return r.Scan(&v.ID, &v.StartedAt, &v.CompletedAt, &v.Decision, &v.Stakes,
			&v.SkepticConfidence, &v.BuilderConfidence, &v.DreamerConfidence, &v.EmpathConfidence,
			&v.SkepticArgument, &v.BuilderArgument, &v.DreamerArgument, &v.EmpathArgument,
			&v.Voices, &v.Resolution)
	})
}

// ObservationRow is one row of "what the loop noticed about itself".
type ObservationRow struct {
	ID                  int64           `json:"id"`
	Timestamp           time.Time       `json:"timestamp"`
	Type                string          `json:"observationType"`
	Severity            *float64        `json:"severity"`
	Description         string          `json:"description"`
	Intervention        *string         `json:"recommendedIntervention"`
	InterventionApplied *bool           `json:"interventionApplied"`
	Evidence            json.RawMessage `json:"evidence"`
}

const observationsSQL = `
SELECT id, timestamp, observation_type, severity, description,
       recommended_intervention, intervention_applied, evidence
FROM metacognitive_observations
WHERE target_layer = 'ponder:' || $1::text
ORDER BY severity DESC, timestamp DESC, id DESC`

// Observations returns every observation of a session, open or not.
func (s *Store) Observations(ctx context.Context, slug string) ([]ObservationRow, error) {
	rows, err := s.conn.Query(ctx, observationsSQL, slug)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.CollectableRow, v *ObservationRow) error {
		var ev []byte
		err := r.Scan(&v.ID, &v.Timestamp, &v.Type, &v.Severity, &v.Description, &v.Intervention,
			&v.InterventionApplied, &ev)
		if ev != nil {
			v.Evidence = ev
		}
		return err
	})
}

// EventRow is one row of a session's event stream.
type EventRow struct {
	ID        int64           `json:"id"`
	Timestamp time.Time       `json:"timestamp"`
	EventType string          `json:"eventType"`
	Priority  *float64        `json:"priority"`
	Payload   json.RawMessage `json:"payload"`
}

const eventsSQL = `
SELECT id, timestamp, event_type::text, priority, payload
FROM cognitive_events
WHERE source_layer = 'ponder' AND target_layer = 'ponder:' || $1::text
ORDER BY timestamp, id`

// Events returns a session's cognitive events in order (OCA deletes events
// older than a day; the other tables are the durable record).
func (s *Store) Events(ctx context.Context, slug string) ([]EventRow, error) {
	rows, err := s.conn.Query(ctx, eventsSQL, slug)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.CollectableRow, v *EventRow) error {
		var pl []byte
		err := r.Scan(&v.ID, &v.Timestamp, &v.EventType, &v.Priority, &pl)
		v.Payload = pl
		return err
	})
}

// collect scans every row into a T, returning an empty (not nil) slice for
// no rows so JSON output says [] rather than null.
func collect[T any](rows pgx.Rows, scan func(pgx.CollectableRow, *T) error) ([]T, error) {
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) {
		var v T
		err := scan(r, &v)
		return v, err
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}
