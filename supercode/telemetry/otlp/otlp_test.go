package otlp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/otlptest"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/telemetry"
)

var t0 = time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)

// aRun is a run's record as the hooks keep it: a Bash call that ran, a
// force push the gate refused, a check_state, and two checks.
func aRun(t *testing.T) (telemetry.Agent, []fleet.RunEvent, []laserbrain.StepRecord) {
	t.Helper()
	deny, err := json.Marshal(fleet.GateResult{Decision: operator.Deny, Labels: []string{"git push --force"}, Rule: "outward", Presence: "unattended"})
	if err != nil {
		t.Fatal(err)
	}
	events := []fleet.RunEvent{
		{ID: "tool:toolu_ls", At: t0.Add(time.Second), Kind: fleet.KindTool, Name: "Bash", OK: laserbrain.OKTrue, Text: "ls"},
		{ID: "gate:toolu_push", At: t0.Add(2 * time.Second), Kind: fleet.KindGate, Name: "Bash", OK: laserbrain.OKFalse, Text: "refused: git push --force", Result: deny},
		{ID: "c1", At: t0.Add(3 * time.Second), Kind: fleet.KindCheck, Name: "grounded"},
		{ID: "own:toolu_c1", At: t0.Add(3 * time.Second), Kind: fleet.KindOwn, Name: "mcp__laserbrain__check_state", OK: laserbrain.OKTrue},
		{ID: "c2", At: t0.Add(4 * time.Second), Kind: fleet.KindCheck, Name: "goal-drift"},
	}
	score := "0.8"
	checks := []laserbrain.StepRecord{
		{At: t0.Add(3 * time.Second), Goal: "ship", Reason: "grounded", Phi: 0.9, Distance: laserbrain.Distance{Known: true, Value: 4}},
		{At: t0.Add(4 * time.Second), Goal: "ship", Reason: "goal-drift", Drifting: true, Phi: 0.2, Laserscore: &score, Advice: "go back"},
	}
	return telemetry.Agent{Run: fleet.Run{ID: "r1", Agent: "pusher", Fleet: "f1", Created: t0, Sessions: []string{"s1"}}, Client: "claude", Model: "claude-sonnet-4-5"}, events, checks
}

func exportRun(t *testing.T, s telemetry.Settings) (lost int64, err error) {
	t.Helper()
	e, err := New(context.Background(), s, "laserbrain", "test")
	if err != nil {
		t.Fatal(err)
	}
	a, events, checks := aRun(t)
	r := e.StartRun(a)
	r.Add(events[:1], checks[:1])
	r.Add(events, checks) // again, longer: only what is new is sent
	r.End(telemetry.Ending{At: t0.Add(5 * time.Second), ExitCode: 0, Judgment: "narrow"})
	return e.Close(context.Background())
}

// The collector's own OTLP receiver takes the run as one invoke_agent span
// with an execute_tool span per call beneath it, named and attributed as
// the pinned GenAI conventions say.
func TestRunReachesTheCollector(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv(telemetry.EnvEndpoint, rcv.URL)
	s, err := telemetry.Configure(func(k string) string { return map[string]string{telemetry.EnvEndpoint: rcv.URL}[k] }, "")
	if err != nil || !s.On {
		t.Fatalf("Configure: %+v, %v", s, err)
	}
	if lost, err := exportRun(t, s); err != nil || lost != 0 {
		t.Fatalf("Close: lost %d, %v", lost, err)
	}
	spans := rcv.Spans()
	byName := map[string]otlptest.Span{}
	for _, sp := range spans {
		if sp.Attrs["gen_ai.tool.call.id"] != "toolu_push" {
			byName[sp.Name] = sp
		}
	}
	if len(spans) != 4 {
		t.Fatalf("received %d spans, want 4 (the run, ls, the refused push, check_state): %v", len(spans), names(spans))
	}
	run := byName["invoke_agent pusher"]
	wantAttrs(t, run, map[string]any{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "pusher", "gen_ai.agent.id": "r1",
		"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.conversation.id": "s1",
		"laserbrain.judgment": "narrow", "laserbrain.coverage.tool_calls": int64(1), "laserbrain.coverage.checks": int64(2),
	})
	if run.ParentID != "" || run.ScopeSchemaURL != "https://opentelemetry.io/schemas/1.40.0" || run.Resource["service.name"] != "laserbrain" {
		t.Errorf("the run span: parent %q, schema %q, resource %v", run.ParentID, run.ScopeSchemaURL, run.Resource)
	}
	if !run.Start.Equal(t0) || !run.End.Equal(t0.Add(5*time.Second)) {
		t.Errorf("the run span runs %v to %v", run.Start, run.End)
	}
	var evals []otlptest.Event
	for _, e := range run.Events {
		if e.Name == "gen_ai.evaluation.result" {
			evals = append(evals, e)
		}
	}
	if len(evals) != 2 || evals[1].Attrs["gen_ai.evaluation.score.label"] != "goal-drift" || evals[1].Attrs["laserbrain.drifting"] != true ||
		evals[1].Attrs["gen_ai.evaluation.name"] != "laserbrain.drift" || evals[1].Attrs["laserbrain.laserscore"] != "0.8" ||
		evals[0].Attrs["gen_ai.evaluation.score.value"] != 0.9 || evals[0].Attrs["laserbrain.distance"] != int64(4) {
		t.Errorf("the drift checks as evaluation events: %+v", evals)
	}
	for _, name := range []string{"execute_tool Bash", "execute_tool mcp__laserbrain__check_state"} {
		if sp, ok := byName[name]; !ok || sp.ParentID != run.SpanID || sp.TraceID != run.TraceID || sp.Attrs["gen_ai.operation.name"] != "execute_tool" {
			t.Errorf("%s: %+v", name, sp)
		}
	}
	if byName["execute_tool mcp__laserbrain__check_state"].Attrs["gen_ai.tool.type"] != "extension" {
		t.Errorf("check_state's tool type: %v", byName["execute_tool mcp__laserbrain__check_state"].Attrs)
	}
}

// The refused force push is a call of its own, an error, with the gate's
// decision, rule and reason as its guardrail event.
func TestRefusalIsAGuardrailEvent(t *testing.T) {
	rcv := otlptest.Start(t)
	if _, err := exportRun(t, telemetry.Settings{On: true, Endpoint: rcv.URL}); err != nil {
		t.Fatal(err)
	}
	var push *otlptest.Span
	for _, sp := range rcv.Spans() {
		if sp.Attrs["gen_ai.tool.call.id"] == "toolu_push" {
			push = &sp
		}
	}
	if push == nil {
		t.Fatal("no span for the refused call toolu_push")
	}
	wantAttrs(t, *push, map[string]any{"gen_ai.tool.name": "Bash", "error.type": "laserbrain.refused"})
	if push.StatusCode != "Error" || len(push.Events) != 1 {
		t.Fatalf("the refused call: status %s, events %+v", push.StatusCode, push.Events)
	}
	g := push.Events[0]
	if g.Name != "laserbrain.guardrail" || g.Attrs["laserbrain.guardrail.decision"] != "deny" || g.Attrs["laserbrain.guardrail.rule"] != "outward" ||
		g.Attrs["laserbrain.guardrail.reason"] != "refused: git push --force" || !g.At.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("the guardrail event: %+v", g)
	}
}

// A collector that takes the connection and never answers, or one that
// is not there, costs the exporting process no more than CloseDeadline,
// and the spans it could not deliver are counted, not waited for.
func TestDeadCollectorIsBounded(t *testing.T) {
	hole := otlptest.Blackhole(t)
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + gone.Addr().String()
	gone.Close()
	for name, url := range map[string]string{"blackholed": "http://" + hole, "refused": refused} {
		t.Run(name, func(t *testing.T) {
			began := time.Now()
			lost, err := exportRun(t, telemetry.Settings{On: true, Endpoint: url})
			took := time.Since(began)
			if err == nil || lost != 4 {
				t.Errorf("Close: lost %d, err %v; want the 4 spans counted lost", lost, err)
			}
			if took > CloseDeadline+time.Second {
				t.Errorf("the export held its process %v, past its deadline %v", took, CloseDeadline)
			}
		})
	}
}

func wantAttrs(t *testing.T, sp otlptest.Span, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if sp.Attrs[k] != v {
			t.Errorf("%s: %s = %#v, want %#v", sp.Name, k, sp.Attrs[k], v)
		}
	}
}

func names(spans []otlptest.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// A supervisor's journal records reach the collector as one span, each
// record an event named for its kind, a round's collisions events of
// their own naming both agents.
func TestJournalReachesTheCollector(t *testing.T) {
	rcv := otlptest.Start(t)
	round, err := json.Marshal(map[string]any{"collisions": [][2]string{{"a:r1", "b:r2"}}})
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int) string { return fleet.JournalTime(t0.Add(time.Duration(s) * time.Second)) }
	j := telemetry.Journal{Fleet: "f1", Records: []fleet.JournalRecord{
		{Seq: 7, At: at(0), Kind: fleet.JournalStart, Text: "started"},
		{Seq: 8, At: at(1), Kind: fleet.JournalRound, Round: 3, Text: "2 agents", Data: round},
		{Seq: 9, At: at(2), Kind: fleet.JournalHalt, Agent: "b:r2", Text: "yields to a:r1"},
		{Seq: 10, At: at(3), Kind: fleet.JournalRelease, Agent: "b:r2", Text: "go on"},
		{Seq: 11, At: at(4), Kind: fleet.JournalStop},
	}}
	if lost, err := ExportJournal(context.Background(), telemetry.Settings{On: true, Endpoint: rcv.URL}, j, "laserbrain", "test"); err != nil || lost != 0 {
		t.Fatalf("ExportJournal: lost %d, %v", lost, err)
	}
	spans := rcv.Spans()
	if len(spans) != 1 || spans[0].Name != "laserbrain.supervise" || spans[0].Attrs["laserbrain.fleet"] != "f1" ||
		!spans[0].Start.Equal(t0) || !spans[0].End.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("received %+v", spans)
	}
	var got []string
	for _, e := range spans[0].Events {
		got = append(got, e.Name)
		switch e.Name {
		case "laserbrain.supervise.collision":
			if a, _ := e.Attrs["laserbrain.supervise.agents"].([]any); len(a) != 2 || a[0] != "a:r1" || a[1] != "b:r2" || e.Attrs["laserbrain.supervise.round"] != int64(3) {
				t.Errorf("the collision: %v", e.Attrs)
			}
		case "laserbrain.supervise.halt":
			if e.Attrs["laserbrain.agent"] != "b:r2" || e.Attrs["laserbrain.journal.seq"] != int64(9) || !e.At.Equal(t0.Add(2*time.Second)) {
				t.Errorf("the halt: %v at %v", e.Attrs, e.At)
			}
		}
	}
	want := "laserbrain.supervise.start laserbrain.supervise.round laserbrain.supervise.collision laserbrain.supervise.halt laserbrain.supervise.release laserbrain.supervise.stop"
	if strings.Join(got, " ") != want {
		t.Errorf("events %v\nwant %s", got, want)
	}
}

// A round journaled with the collisions that began and ended since the
// last one sends an event for each that began, none for those that ended.
func TestJournalSendsCollisionsBegun(t *testing.T) {
	rcv := otlptest.Start(t)
	began, _ := json.Marshal(map[string]any{"collisions_began": [][2]string{{"a:r1", "c:r3"}}, "collisions_ended": [][2]string{{"a:r1", "b:r2"}}, "collisions_standing": 1})
	quiet, _ := json.Marshal(map[string]any{"collisions_standing": 1})
	at := func(s int) string { return fleet.JournalTime(t0.Add(time.Duration(s) * time.Second)) }
	j := telemetry.Journal{Fleet: "f1", Records: []fleet.JournalRecord{
		{Seq: 1, At: at(0), Kind: fleet.JournalRound, Round: 4, Data: began},
		{Seq: 2, At: at(1), Kind: fleet.JournalRound, Round: 5, Data: quiet},
	}}
	if lost, err := ExportJournal(context.Background(), telemetry.Settings{On: true, Endpoint: rcv.URL}, j, "laserbrain", "test"); err != nil || lost != 0 {
		t.Fatalf("ExportJournal: lost %d, %v", lost, err)
	}
	spans := rcv.Spans()
	if len(spans) != 1 {
		t.Fatalf("received %+v", spans)
	}
	var cols []string
	for _, e := range spans[0].Events {
		if e.Name == "laserbrain.supervise.collision" {
			cols = append(cols, fmt.Sprint(e.Attrs["laserbrain.supervise.agents"], e.Attrs["laserbrain.supervise.round"]))
		}
	}
	if strings.Join(cols, ";") != "[a:r1 c:r3] 4" {
		t.Fatalf("collision events %v, want the one that began in round 4", cols)
	}
}
