package otlp

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/telemetry"
)

// Run is one agent run's trace: its invoke_agent span, open until End,
// and what of the run's record it has sent. Add may be called again with a
// longer record; it sends only what is new.
type Run struct {
	e    *Exporter
	ctx  context.Context
	span trace.Span
	// sent are the events taken in, by id; calls the tool calls whose
	// span is sent, by call id; gates a call's gate decisions waiting for
	// the call's end.
	sent  map[string]bool
	calls map[string]bool
	gates map[string][]fleet.RunEvent
	order []string // call ids of gates, oldest first
	// tokens are what each call cost, by call id, as far as known.
	tokens map[string]fleet.CallUsage
	checks int
	tally  coverage.Tally
}

// StartRun opens the run's invoke_agent span at the run's creation.
func (e *Exporter) StartRun(a telemetry.Agent) *Run {
	r := a.Run
	kv := []attribute.KeyValue{
		semconv.GenAIOperationNameInvokeAgent,
		semconv.GenAIAgentName(agentName(r)),
		semconv.GenAIAgentID(r.ID),
		attribute.String(telemetry.AttrFleet, r.Fleet),
	}
	if p, ok := providers[a.Client]; ok {
		kv = append(kv, p)
	}
	if a.Client != "" {
		kv = append(kv, attribute.String(telemetry.AttrClient, a.Client))
	}
	if a.Model != "" {
		kv = append(kv, semconv.GenAIRequestModel(a.Model))
	}
	if len(r.Sessions) > 0 {
		kv = append(kv, semconv.GenAIConversationID(r.Sessions[0]))
	}
	created := r.Created
	if created.IsZero() {
		created = time.Now()
	}
	ctx, span := e.start(context.Background(), "invoke_agent "+agentName(r), created, kv...)
	return &Run{e: e, ctx: ctx, span: span, sent: map[string]bool{}, calls: map[string]bool{}, gates: map[string][]fleet.RunEvent{}, tokens: map[string]fleet.CallUsage{}}
}

// providers are the gen_ai.provider.name of the clients whose provider is
// one the conventions name.
var providers = map[string]attribute.KeyValue{
	"claude": semconv.GenAIProviderNameAnthropic,
	"codex":  semconv.GenAIProviderNameOpenAI,
	"gemini": semconv.GenAIProviderNameGCPGemini,
}

func agentName(r fleet.Run) string {
	if r.Agent == "" {
		return "agent"
	}
	return r.Agent
}

// Add sends what is new in the run's record: each completed tool call as
// an execute_tool span (its gate decisions as guardrail events on it),
// each drift check as an evaluation event on the run's span.
func (t *Run) Add(events []fleet.RunEvent, checks []laserbrain.StepRecord) {
	for id, cu := range fleet.CallTokens(events) {
		t.tokens[id] = cu
	}
	for _, e := range events {
		if e.ID != "" && t.sent[e.ID] {
			continue
		}
		t.sent[e.ID] = true
		t.tally.Add(e)
		switch e.Kind {
		case fleet.KindGate:
			id := callID(e.ID)
			if id == "" {
				t.call(e.Name, "", e.At, e.At, laserbrain.OKFalse, []fleet.RunEvent{e})
				continue
			}
			if len(t.gates[id]) == 0 {
				t.order = append(t.order, id)
			}
			t.gates[id] = append(t.gates[id], e)
		case fleet.KindTool, fleet.KindOwn:
			id := callID(e.ID)
			if id != "" && t.calls[id] {
				continue
			}
			gates := t.gates[id]
			delete(t.gates, id)
			start := e.At
			if len(gates) > 0 && gates[0].At.Before(start) {
				start = gates[0].At
			}
			t.call(e.Name, id, start, e.At, e.OK, gates)
		}
	}
	for ; t.checks < len(checks); t.checks++ {
		t.check(t.checks+1, checks[t.checks])
	}
}

// End sends the calls whose end never came (refused ones: the gate's
// decision is their end) and ends the run's span with its coverage and
// judgment.
func (t *Run) End(end telemetry.Ending) {
	for _, id := range t.order {
		gates, ok := t.gates[id]
		if !ok {
			continue
		}
		delete(t.gates, id)
		last := gates[len(gates)-1]
		t.call(last.Name, id, gates[0].At, last.At, laserbrain.OKFalse, gates)
	}
	f := t.tally.Figures()
	t.span.SetAttributes(
		attribute.Int(telemetry.AttrToolCalls, f.ToolCalls),
		attribute.Int(telemetry.AttrChecks, f.Checks),
		attribute.Float64(telemetry.AttrCoverage, f.Coverage),
		attribute.Bool(telemetry.AttrUnmeasured, f.Unmeasured),
		attribute.Int(telemetry.AttrExitCode, end.ExitCode),
	)
	if end.Judgment != "" {
		t.span.SetAttributes(attribute.String(telemetry.AttrJudgment, end.Judgment))
	}
	if end.Stopped != "" {
		t.span.SetAttributes(attribute.String(telemetry.AttrStopped, end.Stopped), semconv.ErrorTypeKey.String(telemetry.ErrorStopped))
		t.span.SetStatus(codes.Error, end.Stopped)
	}
	at := end.At
	if at.IsZero() {
		at = time.Now()
	}
	t.span.End(trace.WithTimestamp(at))
}

// Usage puts the model tokens the agent's client recorded on the run's
// span.
func (t *Run) Usage(u fleet.Usage) {
	t.span.SetAttributes(usageAttrs(u)...)
	if u.CostUSD != nil {
		t.span.SetAttributes(attribute.Float64(telemetry.AttrCost, *u.CostUSD))
	}
}

// usageAttrs are the conventions' token counts of u.
func usageAttrs(u fleet.Usage) []attribute.KeyValue {
	return []attribute.KeyValue{semconv.GenAIUsageInputTokens(int(u.Input)), semconv.GenAIUsageOutputTokens(int(u.Output)),
		semconv.GenAIUsageCacheReadInputTokens(int(u.CacheRead)), semconv.GenAIUsageCacheCreationInputTokens(int(u.CacheWrite))}
}

// call sends one tool call's execute_tool span. A call that did not work
// (refused, or failed) is an error span; a refusal's error type says so.
func (t *Run) call(tool, id string, start, end time.Time, ok laserbrain.OK, gates []fleet.RunEvent) {
	if id != "" {
		t.calls[id] = true
	}
	kv := []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(tool), semconv.GenAIToolType(toolType(tool))}
	if id != "" {
		kv = append(kv, semconv.GenAIToolCallID(id))
	}
	if cu, ok := t.tokens[id]; ok && id != "" {
		kv = append(kv, usageAttrs(cu.Usage)...)
		kv = append(kv, attribute.Int(telemetry.AttrCallsAsked, cu.Shared))
	}
	_, span := t.e.start(t.ctx, "execute_tool "+tool, start, kv...)
	refused := false
	for _, g := range gates {
		refused = guardrail(span, g) || refused
	}
	switch {
	case refused:
		span.SetAttributes(semconv.ErrorTypeKey.String(telemetry.ErrorRefused))
		span.SetStatus(codes.Error, "refused by laserbrain")
	case ok.Failed():
		span.SetAttributes(semconv.ErrorTypeKey.String(telemetry.ErrorFailed))
		span.SetStatus(codes.Error, "the tool call failed")
	}
	span.End(trace.WithTimestamp(end))
}

// guardrail adds a gate decision to its call's span; it says whether the
// decision refused the call.
func guardrail(span trace.Span, g fleet.RunEvent) bool {
	res, ok := fleet.ReadGateResult(g.Result)
	decision := res.Decision
	if !ok { // a limit's refusal, or a decision recorded without one
		decision = operator.Allow
		if g.OK.Failed() {
			decision = operator.Deny
		}
	}
	rule := res.Rule
	if rule == "" && strings.HasPrefix(g.ID, "limit:") {
		rule = telemetry.RuleLimit
	}
	kv := []attribute.KeyValue{
		attribute.String(telemetry.AttrGuardrailDecision, decision.String()),
		attribute.String(telemetry.AttrGuardrailReason, g.Text),
	}
	if rule != "" {
		kv = append(kv, attribute.String(telemetry.AttrGuardrailRule, rule))
	}
	if len(res.Labels) > 0 {
		kv = append(kv, attribute.StringSlice(telemetry.AttrGuardrailLabels, res.Labels))
	}
	if res.Presence != "" {
		kv = append(kv, attribute.String(telemetry.AttrGuardrailPresence, res.Presence))
	}
	span.AddEvent(telemetry.EventGuardrail, trace.WithTimestamp(g.At), trace.WithAttributes(kv...))
	return decision == operator.Deny
}

// check adds one drift check to the run's span as an evaluation result.
func (t *Run) check(n int, s laserbrain.StepRecord) {
	kv := []attribute.KeyValue{
		semconv.GenAIEvaluationName(telemetry.EvaluationDrift),
		semconv.GenAIEvaluationScoreLabel(s.Reason),
		semconv.GenAIEvaluationScoreValue(s.Phi),
		attribute.Int(telemetry.AttrStep, n),
		attribute.String(telemetry.AttrVerdict, s.Reason),
		attribute.Bool(telemetry.AttrDrifting, s.Drifting),
		attribute.Float64(telemetry.AttrPhi, s.Phi),
		attribute.Float64(telemetry.AttrAnchored, s.Anchored),
	}
	if s.Advice != "" {
		kv = append(kv, semconv.GenAIEvaluationExplanation(s.Advice))
	}
	if s.Laserscore != nil {
		kv = append(kv, attribute.String(telemetry.AttrLaserscore, *s.Laserscore))
	}
	if s.Distance.Known {
		kv = append(kv, attribute.Int(telemetry.AttrDistance, s.Distance.Value))
	}
	t.span.AddEvent(telemetry.EventEvaluation, trace.WithTimestamp(s.At), trace.WithAttributes(kv...))
}

// callID is the client's id of the call an event is about ("" when the
// event has none).
func callID(eventID string) string {
	for _, p := range []string{"gate:", "tool:", "own:", "limit:"} {
		if id, ok := strings.CutPrefix(eventID, p); ok {
			return id
		}
	}
	return ""
}

// toolType is the conventions' gen_ai.tool.type: an MCP server's tool is
// an extension, the client's own tools functions.
func toolType(tool string) string {
	if strings.HasPrefix(tool, "mcp__") || strings.Contains(tool, "__") {
		return "extension"
	}
	return "function"
}
