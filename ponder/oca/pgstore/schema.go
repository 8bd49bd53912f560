package pgstore

// The five tables ponder writes and, for each, the columns it writes or reads
// plus the NOT NULL ones it must satisfy (spec §7). The probe checks exactly
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
