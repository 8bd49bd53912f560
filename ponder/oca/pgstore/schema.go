package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The five tables ponder writes and, for each, the columns it writes or reads
// plus the NOT NULL ones it must satisfy. The probe checks exactly
// these; InitSchema creates exactly these.
var requiredColumns = []struct {
	table   string
	columns []string
}{
	{"episodic_memory", []string{"id", "timestamp", "event_type", "content", "prediction", "actual_outcome",
		"surprise_magnitude", "importance_score"}},
	{"hypotheses", []string{"id", "created_at", "domain", "claim", "prediction", "confidence", "status",
		"test_type", "source_type", "actual_outcome", "model_update", "tested_at", "surprise_magnitude",
		"confidence_delta", "source_data"}},
	{"deliberations", []string{"id", "started_at", "completed_at", "decision", "stakes",
		"skeptic_argument", "skeptic_confidence", "builder_argument", "builder_confidence",
		"dreamer_argument", "dreamer_confidence", "empath_argument", "empath_confidence",
		"resolution", "resolution_method"}},
	{"metacognitive_observations", []string{"id", "timestamp", "target_layer", "observation_type", "description",
		"evidence", "severity", "recommended_intervention", "intervention_applied"}},
	{"cognitive_events", []string{"id", "timestamp", "event_type", "source_layer", "target_layer", "priority",
		"payload"}},
}

// eventTypeEnum is the Postgres enum of cognitive_events.event_type.
const eventTypeEnum = "cognitive_event_type"

// Event types ponder emits. All but the last are in OCA's migration 001;
// reasoning_trace_created arrives with migration 003.
const (
	evHypothesisFormed = "hypothesis_formed"
	evHypothesisTested = "hypothesis_tested"
	evDeliberation     = "deliberation_result"
	evMetacognition    = "metacognition_alert"
	evReasoningTrace   = "reasoning_trace_created"
)

// requiredLabels are the enum labels the probe insists on.
var requiredLabels = []string{evHypothesisFormed, evHypothesisTested, evDeliberation, evMetacognition, evReasoningTrace}

// allEventLabels are the labels InitSchema gives a new cognitive_event_type:
// OCA migration 001's twenty plus migration 003's reasoning_trace_created,
// so other OCA code can share a database ponder initialised.
var allEventLabels = []string{
	"perception_update", "motor_command", "motor_feedback", "memory_store", "memory_retrieve",
	"memory_retrieval_result", "emotion_update", evHypothesisFormed, evHypothesisTested, "simulation_result",
	evMetacognition, "deliberation_request", evDeliberation, "creative_output", "attention_shift",
	"goal_update", "workspace_broadcast", "interrupt", "body_ownership_request", "body_ownership_grant",
	evReasoningTrace,
}

// createTable holds, per table, the DDL InitSchema runs when the table is
// missing: those columns with OCA's types and defaults (no pgvector
// columns), and indexes for the lookups ponder makes.
var createTable = map[string][]string{
	"cognitive_events": {`CREATE TABLE IF NOT EXISTS cognitive_events (
	id           bigserial PRIMARY KEY,
	timestamp    timestamptz DEFAULT now(),
	event_type   cognitive_event_type NOT NULL,
	source_layer text NOT NULL,
	target_layer text,
	priority     float DEFAULT 0.5,
	payload      jsonb NOT NULL
)`, `CREATE INDEX IF NOT EXISTS ponder_ce_target ON cognitive_events (target_layer, timestamp)`},
	"episodic_memory": {`CREATE TABLE IF NOT EXISTS episodic_memory (
	id                 serial PRIMARY KEY,
	timestamp          timestamptz NOT NULL DEFAULT now(),
	event_type         text NOT NULL,
	content            text NOT NULL,
	prediction         text,
	actual_outcome     text,
	surprise_magnitude float DEFAULT 0.0,
	importance_score   float DEFAULT 0.5
)`, `CREATE INDEX IF NOT EXISTS ponder_em_type ON episodic_memory (event_type, timestamp DESC)`},
	"hypotheses": {`CREATE TABLE IF NOT EXISTS hypotheses (
	id                 serial PRIMARY KEY,
	created_at         timestamptz NOT NULL DEFAULT now(),
	domain             text NOT NULL,
	claim              text NOT NULL,
	confidence         float NOT NULL DEFAULT 0.5,
	prediction         text NOT NULL,
	test_type          text,
	status             text DEFAULT 'pending',
	actual_outcome     text,
	tested_at          timestamptz,
	surprise_magnitude float,
	model_update       text,
	confidence_delta   float,
	source_type        text,
	source_data        jsonb DEFAULT '{}'
)`, `CREATE INDEX IF NOT EXISTS ponder_hyp_domain ON hypotheses (domain, status)`},
	"deliberations": {`CREATE TABLE IF NOT EXISTS deliberations (
	id                 serial PRIMARY KEY,
	started_at         timestamptz NOT NULL DEFAULT now(),
	completed_at       timestamptz,
	decision           text NOT NULL,
	stakes             text DEFAULT 'medium',
	skeptic_argument   text,
	skeptic_confidence float,
	builder_argument   text,
	builder_confidence float,
	dreamer_argument   text,
	dreamer_confidence float,
	empath_argument    text,
	empath_confidence  float,
	resolution         text,
	resolution_method  text
)`, `CREATE INDEX IF NOT EXISTS ponder_delib_method ON deliberations (resolution_method, started_at)`},
	"metacognitive_observations": {`CREATE TABLE IF NOT EXISTS metacognitive_observations (
	id                       serial PRIMARY KEY,
	timestamp                timestamptz NOT NULL DEFAULT now(),
	target_layer             text NOT NULL,
	observation_type         text NOT NULL,
	description              text NOT NULL,
	evidence                 jsonb DEFAULT '{}',
	severity                 float DEFAULT 0.5,
	recommended_intervention text,
	intervention_applied     boolean DEFAULT false
)`, `CREATE INDEX IF NOT EXISTS ponder_meta_target ON metacognitive_observations (target_layer, severity DESC)`},
}

// InitReport says what InitSchema did and what it could not fix.
type InitReport struct {
	CreatedEnum   bool     `json:"createdEnum"`
	AddedLabels   []string `json:"addedLabels"`
	CreatedTables []string `json:"createdTables"`
	// Missing is what the probe still misses afterwards: columns of tables
	// that existed before, which InitSchema never alters.
	Missing []string `json:"missing"`
}

// initLockKey serialises concurrent InitSchema runs on one database.
const initLockKey = "ponder oca init"

// InitSchema creates, in the database at dsn, whatever of ponder's OCA
// subset is missing: the cognitive_event_type enum (or the labels ponder
// uses, added to an existing one) and the five tables. It never drops or
// alters an existing table, so running it on a real OCA database, or twice,
// changes nothing. It fails if the schema is still incomplete afterwards.
func InitSchema(ctx context.Context, dsn string) (InitReport, error) {
	s, err := OpenStore(ctx, dsn)
	if err != nil {
		return InitReport{}, err
	}
	defer s.Close()
	return s.InitSchema(ctx)
}

// InitSchema is the package-level InitSchema on an open store.
func (s *Store) InitSchema(ctx context.Context) (InitReport, error) {
	var rep InitReport
	// Tables and a new enum are created in one transaction: a failure
	// leaves nothing half made.
	err := pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, initLockKey); err != nil {
			return err
		}
		var enumExists bool
		if err := tx.QueryRow(ctx, `SELECT to_regtype($1) IS NOT NULL`, eventTypeEnum).Scan(&enumExists); err != nil {
			return err
		}
		if !enumExists {
			if _, err := tx.Exec(ctx, createEnumSQL()); err != nil {
				return fmt.Errorf("creating %s: %w", eventTypeEnum, err)
			}
			rep.CreatedEnum = true
		}
		for _, t := range requiredColumns {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, t.table).Scan(&exists); err != nil {
				return err
			}
			if exists {
				continue
			}
			for _, ddl := range createTable[t.table] {
				if _, err := tx.Exec(ctx, ddl); err != nil {
					return fmt.Errorf("creating %s: %w", t.table, err)
				}
			}
			rep.CreatedTables = append(rep.CreatedTables, t.table)
		}
		return nil
	})
	if err != nil {
		return InitReport{}, err
	}
	// Labels missing from an enum that already existed are added one
	// statement at a time outside a transaction: a label added inside one
	// cannot be used before it commits, and only missing labels are touched
	// so a database owned by someone else is left alone when complete.
	probe, err := s.Probe(ctx)
	if err != nil {
		return rep, err
	}
	for _, m := range probe.Missing {
		label, ok := strings.CutPrefix(m, "enum:")
		if !ok || !slices.Contains(requiredLabels, label) {
			continue
		}
		stmt := "ALTER TYPE " + eventTypeEnum + " ADD VALUE IF NOT EXISTS " + quoteLiteral(label)
		if _, err := s.conn.Exec(ctx, stmt); err != nil {
			return rep, fmt.Errorf("adding %s label %s: %w", eventTypeEnum, label, err)
		}
		rep.AddedLabels = append(rep.AddedLabels, label)
	}
	if probe, err = s.Probe(ctx); err != nil {
		return rep, err
	}
	rep.Missing = probe.Missing
	if len(rep.Missing) > 0 {
		return rep, fmt.Errorf("the OCA schema is still incomplete (existing tables are never altered): missing %s",
			strings.Join(rep.Missing, ", "))
	}
	return rep, nil
}

// createEnumSQL is the CREATE TYPE for a fresh database. DDL takes no bind
// parameters; the labels are this package's constants.
func createEnumSQL() string {
	quoted := make([]string, len(allEventLabels))
	for i, l := range allEventLabels {
		quoted[i] = quoteLiteral(l)
	}
	return "CREATE TYPE " + eventTypeEnum + " AS ENUM (" + strings.Join(quoted, ", ") + ")"
}

// quoteLiteral quotes one of this package's own constants for DDL.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
