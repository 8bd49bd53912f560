package oca

import (
	"context"
	"encoding/json"
	"time"
)

// Backend is the database side of the bridge: one value per process, opened
// by a Connector, closed when the command ends. Every method takes a context
// carrying the per-call deadline (5 s) and returns an error rather than
// panicking; the Bridge turns errors into log lines and nil results.
type Backend interface {
	// Probe checks the five tables, the columns ponder writes and the enum
	// labels it uses, and reports what is missing.
	Probe(ctx context.Context) (ProbeReport, error)
	// PriorPondering returns up to five earlier start/converged/stopped
	// episodes whose content contains subject literally (ILIKE with %, _ and
	// \ escaped), newest first.
	PriorPondering(ctx context.Context, subject string) ([]Episode, error)
	RecordStart(ctx context.Context, s Session) (StartResult, error)
	// RecordPass writes the pass's ponder_pass episode and, in the same
	// transaction, runs the hypothesis lifecycle (close the forecast made
	// for this pass, open one for the next) under its three guards.
	RecordPass(ctx context.Context, r PassRecord) (PassResult, error)
	// RecordDeliberation opens the pass's deliberations row (resolution NULL)
	// and emits deliberation_result; with Summary set (the judge fallback) it
	// writes the row complete.
	RecordDeliberation(ctx context.Context, r DeliberationRecord) (DeliberationResult, error)
	// ResolveDeliberation fills resolution and completed_at of an open row
	// ponder created; a row already resolved is left alone (Resolved false).
	ResolveDeliberation(ctx context.Context, s Session, deliberationID int64, summary string) (ResolveResult, error)
	RecordObservation(ctx context.Context, r ObservationRecord) (ObservationResult, error)
	// RecordConverged writes ponder_converged or ponder_stopped, expires every
	// pending forecast of the session and emits reasoning_trace_created.
	RecordConverged(ctx context.Context, r ConvergedRecord) (ConvergedResult, error)
	RecordApply(ctx context.Context, r ApplyRecord) (ApplyResult, error)
	// ExpireForecasts expires every pending forecast of the session (abort:
	// a finished session leaves no untestable hypothesis pending).
	ExpireForecasts(ctx context.Context, s Session) (ExpireResult, error)
	// SessionRows reads what the database holds of the session, so that
	// a sync writes only the rows it is missing.
	SessionRows(ctx context.Context, s Session) (SessionRows, error)
	// OpenObservations returns the session's observations with
	// intervention_applied = false, highest severity first.
	OpenObservations(ctx context.Context, s Session) ([]Observation, error)
	Close()
}

// Connector opens a Backend for a DSN within ctx's deadline.
type Connector func(ctx context.Context, dsn string) (Backend, error)

// ProbeReport is the database's half of probe(): whether the schema is
// complete, and if not what is missing ("table", "table.column",
// "enum:label"); with the schema complete, Missing lists the privileges the
// role lacks to write it ("privilege:INSERT on episodic_memory").
type ProbeReport struct {
	Schema  bool
	Missing []string
}

// Session identifies a session to the database. Domain and target layer are
// both "ponder:" + Slug.
type Session struct {
	Slug    string
	Subject string
	Lens    string
	Project string
	Passes  int // pass budget
}

// Domain is the session's key in hypotheses.domain and *.target_layer.
func (s Session) Domain() string { return "ponder:" + s.Slug }

// Episode is one prior-pondering row.
type Episode struct {
	Content       string    `json:"content"`
	ActualOutcome *string   `json:"actualOutcome"`
	Timestamp     time.Time `json:"timestamp"`
}

// StartResult is what recordStart returns.
type StartResult struct {
	ID         int64  `json:"id"`
	EpisodeID  int64  `json:"episodeId"`
	SessionRef string `json:"sessionRef"`
}

// PassMetrics are a judged pass's metrics exactly as the engine computed
// them; nil means null (pass 1, or no forecast), never zero.
type PassMetrics struct {
	Coverage        float64  `json:"coverage"`
	Churn           *float64 `json:"churn"`
	Novelty         *float64 `json:"novelty"`
	Thrash          *float64 `json:"thrash"`
	Surprise        *float64 `json:"surprise"`
	Voices          int      `json:"voices"`
	DeltaVoices     int      `json:"deltaVoices"`
	Skeptic         bool     `json:"skeptic"` // the Skeptic argued: a Rule-6 condition from pass 2 on
	ConfidenceFloor int      `json:"confidenceFloor"`
	Ops             OpCounts `json:"ops"`
	Verdict         string   `json:"verdict"`
}

// OpCounts are the pass's finding operations by kind.
type OpCounts struct {
	Add    int `json:"add"`
	Edit   int `json:"edit"`
	Change int `json:"change"`
	Delete int `json:"delete"`
}

// Forecast is the agent's own churn forecast for a pass (predict.json).
type Forecast struct {
	Churn float64 `json:"churn"`
	Claim string  `json:"claim"`
}

// PassRecord is everything recordPass writes for one judged pass.
type PassRecord struct {
	Session Session
	Pass    int
	Metrics PassMetrics
	Predict *Forecast // nil without predict.json
}

// PassResult reports the episode written and what the hypothesis lifecycle
// did. ForecastChurn is nil exactly when no forecast could be made (pass 1).
type PassResult struct {
	EpisodeID          int64    `json:"episodeId"`
	HypothesisID       *int64   `json:"hypothesisId"`
	ClosedHypothesisID *int64   `json:"closedHypothesisId"`
	ClosedStatus       *string  `json:"closedStatus"` // confirmed | refuted
	ClosedSurprise     *float64 `json:"closedSurprise"`
	ForecastChurn      *float64 `json:"forecastChurn"`
	Lock               string   `json:"lock"`      // held | contended
	CloseNote          string   `json:"closeNote"` // closed | nothing-pending | contended
	OpenNote           string   `json:"openNote"`  // opened | no-churn-signal | already-forecast | contended
}

// Voice is one perspective's argument and confidence; a silent voice has
// both nil and is written as NULL.
type Voice struct {
	Argument   *string  `json:"argument"`
	Confidence *float64 `json:"confidence"`
}

// DeliberationRecord is one pass's deliberation.
type DeliberationRecord struct {
	Session Session
	Pass    int
	Stakes  string // "medium" when the file has none
	Skeptic Voice
	Builder Voice
	Dreamer Voice
	Empath  Voice
	// Summary is set only on the judge fallback, when the row is written
	// complete in one go.
	Summary *string
}

// DeliberationResult is what recordDeliberation returns.
type DeliberationResult struct {
	DeliberationID int64 `json:"deliberationId"`
	EventID        int64 `json:"eventId"`
	Voices         int   `json:"voices"`
}

// ResolveResult is what resolveDeliberation returns.
type ResolveResult struct {
	DeliberationID int64 `json:"deliberationId"`
	Resolved       bool  `json:"resolved"`
}

// ObservationRecord is one metacognize call.
type ObservationRecord struct {
	Session      Session
	Type         string // stuck_state | perseveration | thrash | low_confidence | deliberation_skipped
	Description  string
	Evidence     json.RawMessage // any JSON; nil is {}
	Severity     float64         // already mapped to [0,1]
	Intervention *string
}

// ObservationResult is what recordObservation returns.
type ObservationResult struct {
	ObservationID int64 `json:"observationId"`
	EventID       int64 `json:"eventId"`
}

// ConvergedRecord is what decide stop writes.
type ConvergedRecord struct {
	Session   Session
	Converged bool            // ponder_converged, else ponder_stopped
	Passes    int             // passes judged
	Outcome   json.RawMessage // the final counts, compact JSON
}

// ConvergedResult is what recordConverged returns.
type ConvergedResult struct {
	EpisodeID         int64 `json:"episodeId"`
	EventID           int64 `json:"eventId"`
	ExpiredHypotheses int   `json:"expiredHypotheses"`
}

// ExpireResult is what expireForecasts returns.
type ExpireResult struct {
	ExpiredHypotheses int `json:"expiredHypotheses"`
}

// SessionRows is what the database holds of one session.
type SessionRows struct {
	Start bool // a ponder_start episode
	// Passes are the passes with a ponder_pass episode, ascending.
	Passes  []int
	End     bool // a ponder_converged or ponder_stopped episode
	Applied bool // a ponder_applied episode
	// Deliberations are the session's deliberations rows, by pass.
	Deliberations map[int]DeliberationRow
	Observations  []ObservationRow
}

// DeliberationRow is one deliberations row of a session.
type DeliberationRow struct {
	ID       int64 `json:"id"`
	Resolved bool  `json:"resolved"`
}

// ObservationRow is one metacognitive_observations row of a session.
type ObservationRow struct {
	ID          int64
	Type        string
	Description string
	Severity    float64
}

// ApplyRecord is what a committed apply writes.
type ApplyRecord struct {
	Session Session
	Outcome json.RawMessage // what the plan covers, compact JSON
}

// ApplyResult is what recordApply returns.
type ApplyResult struct {
	ID        int64 `json:"id"`
	EpisodeID int64 `json:"episodeId"`
}

// Observation is one open observation read back for the judge.
type Observation struct {
	ID           int64           `json:"id"`
	Type         string          `json:"type"`
	Description  string          `json:"description"`
	Severity     float64         `json:"severity"`
	Intervention *string         `json:"intervention"`
	Evidence     json.RawMessage `json:"evidence"`
	Timestamp    time.Time       `json:"timestamp"`
}
