package telemetry

// The names laserkit gives what the semantic conventions do not name: its
// event names, its attributes (all under laserbrain.*), and its error
// types. docs/telemetry.md lists them with what each means.
const (
	// EventGuardrail is the gate's decision on a tool call, an event on
	// the call's execute_tool span (the pinned conventions define no
	// guardrail event).
	EventGuardrail = "laserbrain.guardrail"
	// EventEvaluation is the conventions' evaluation result event: a
	// drift check on the run's invoke_agent span.
	EventEvaluation = "gen_ai.evaluation.result"
	// EvaluationDrift is its gen_ai.evaluation.name for a drift check.
	EvaluationDrift = "laserbrain.drift"
)

// Attributes.
const (
	AttrFleet  = "laserbrain.fleet"
	AttrClient = "laserbrain.client"

	AttrGuardrailDecision = "laserbrain.guardrail.decision"
	AttrGuardrailRule     = "laserbrain.guardrail.rule"
	AttrGuardrailReason   = "laserbrain.guardrail.reason"
	AttrGuardrailLabels   = "laserbrain.guardrail.labels"
	AttrGuardrailPresence = "laserbrain.guardrail.presence"

	AttrStep       = "laserbrain.step"
	AttrVerdict    = "laserbrain.verdict"
	AttrDrifting   = "laserbrain.drifting"
	AttrPhi        = "laserbrain.phi"
	AttrAnchored   = "laserbrain.anchored"
	AttrLaserscore = "laserbrain.laserscore"
	AttrDistance   = "laserbrain.distance"

	AttrToolCalls  = "laserbrain.coverage.tool_calls"
	AttrChecks     = "laserbrain.coverage.checks"
	AttrCoverage   = "laserbrain.coverage.ratio"
	AttrUnmeasured = "laserbrain.coverage.unmeasured"
	AttrJudgment   = "laserbrain.judgment"
	AttrExitCode   = "laserbrain.exit_code"
	AttrStopped    = "laserbrain.stopped"
	// AttrCost is what the run's model requests cost, in US dollars, as
	// the agent's client reported it (the conventions name no cost).
	AttrCost = "laserbrain.usage.cost_usd"
	// AttrCallsAsked is, on a tool call's span that carries the tokens of
	// the model response that asked for it, how many calls that response
	// asked for at once (they share its tokens).
	AttrCallsAsked = "laserbrain.usage.calls_asked"
)

// Error types (error.type) and the rule a limit's refusal is named by.
const (
	ErrorRefused = "laserbrain.refused"
	ErrorFailed  = "laserbrain.tool_failed"
	ErrorStopped = "laserbrain.limit"
	RuleLimit    = "limit"
)

// The supervisor's names: one span per hand-off of its journal, each
// record an event named EventSupervisePrefix + its kind (halt, release,
// escalation, answer, round, start, stop, …), and each collision a round
// found an event of its own.
const (
	SpanSupervise        = "laserbrain.supervise"
	EventSupervisePrefix = "laserbrain.supervise."
	EventCollision       = "laserbrain.supervise.collision"
	AttrJournalSeq       = "laserbrain.journal.seq"
	AttrSuperviseRound   = "laserbrain.supervise.round"
	AttrSuperviseText    = "laserbrain.supervise.text"
	AttrSuperviseAgents  = "laserbrain.supervise.agents"
	AttrAgent            = "laserbrain.agent"
)
