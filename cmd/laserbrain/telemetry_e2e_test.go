package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/internal/otlptest"
)

// telemetryRun is a run of the real Claude Code CLI against the scripted
// model: a Bash call that runs, a force push the gate refuses, a check
// that grounds the run and one that drifts.
func telemetryRun(t *testing.T, endpoint string, env ...string) (*supervised, agenttest.Result) {
	t.Helper()
	otelBeside(t)
	s := newSupervised(t,
		check("toolu_g", "write a JSON parser in Python", 6),
		agenttest.Bash("toolu_ls", "echo parser-started"),
		agenttest.Bash("toolu_push", "git push --force origin main"),
		check("toolu_d", "redesign the company logo in purple", 5),
		agenttest.Say("Stopped."),
		agenttest.Say("Really stopped."))
	s.Env = append(append(s.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint), env...)
	r := s.runClaude(t, "otel-agent", nil, "Bash", allMCP)
	if r.ExitCode != 0 {
		t.Fatalf("laserbrain run exited %d: %s", r.ExitCode, r.Stderr)
	}
	return s, r
}

// The collector's own OTLP receiver gets, from laserbrain run of the real
// Claude Code: one invoke_agent span; one execute_tool span per tool call
// the model made, each beneath it; the refused force push with the gate's
// decision as its guardrail event; and each check as an evaluation event
// carrying the verdict the agent itself was shown.
func TestClaudeRunExportsToOTLP(t *testing.T) {
	rcv := otlptest.Start(t)
	s, r := telemetryRun(t, rcv.URL)
	if strings.Contains(r.Stderr, "telemetry") {
		t.Errorf("laserbrain run said something of its telemetry: %s", r.Stderr)
	}
	spans := rcv.Spans()
	var run otlptest.Span
	calls := map[string]otlptest.Span{}
	for _, sp := range spans {
		switch sp.Attrs["gen_ai.operation.name"] {
		case "invoke_agent":
			if run.Name != "" {
				t.Fatalf("two invoke_agent spans: %s and %s", run.Name, sp.Name)
			}
			run = sp
		case "execute_tool":
			id, _ := sp.Attrs["gen_ai.tool.call.id"].(string)
			if _, dup := calls[id]; dup {
				t.Errorf("two execute_tool spans for call %q", id)
			}
			calls[id] = sp
		default:
			t.Errorf("a span that is neither: %s %v", sp.Name, sp.Attrs)
		}
	}
	if run.Name != "invoke_agent otel-agent" || run.Attrs["gen_ai.agent.name"] != "otel-agent" ||
		run.Attrs["gen_ai.provider.name"] != "anthropic" || run.Attrs["laserbrain.client"] != "claude" {
		t.Fatalf("the run's span: %s %v", run.Name, run.Attrs)
	}
	if run.ScopeSchemaURL != "https://opentelemetry.io/schemas/1.40.0" {
		t.Errorf("schema URL %q, want the pinned conventions' 1.40.0", run.ScopeSchemaURL)
	}
	// Every call the model made, and no other.
	made := []string{"toolu_g", "toolu_ls", "toolu_push", "toolu_d"}
	if len(calls) != len(made) {
		t.Errorf("execute_tool spans for %v; the model made %v", keys(calls), made)
	}
	for _, id := range made {
		sp, ok := calls[id]
		if !ok {
			t.Errorf("no execute_tool span for %s", id)
			continue
		}
		if sp.ParentID != run.SpanID || sp.TraceID != run.TraceID {
			t.Errorf("%s is not beneath the run's span", id)
		}
	}
	if sp := calls["toolu_ls"]; sp.Attrs["gen_ai.tool.name"] != "Bash" || sp.StatusCode == "Error" {
		t.Errorf("the Bash call that ran: %s %v", sp.StatusCode, sp.Attrs)
	}
	push := calls["toolu_push"]
	shown := s.toolResult(t, "toolu_push")
	if !shown.IsError {
		t.Fatalf("the force push was not refused: %q", shown.Text)
	}
	var guard *otlptest.Event
	for i, e := range push.Events {
		if e.Name == "laserbrain.guardrail" {
			guard = &push.Events[i]
		}
	}
	if guard == nil || guard.Attrs["laserbrain.guardrail.decision"] != "deny" || guard.Attrs["laserbrain.guardrail.rule"] == "" ||
		!strings.Contains(shown.Text, guard.Attrs["laserbrain.guardrail.reason"].(string)) || push.StatusCode != "Error" {
		t.Fatalf("the refused push: status %s, events %+v; the model was shown %q", push.StatusCode, push.Events, shown.Text)
	}
	var verdicts []string
	for _, e := range run.Events {
		if e.Name == "gen_ai.evaluation.result" && e.Attrs["gen_ai.evaluation.name"] == "laserbrain.drift" {
			verdicts = append(verdicts, e.Attrs["laserbrain.verdict"].(string))
		}
	}
	want := []string{s.checkResult(t, "toolu_g")["reason"].(string), s.checkResult(t, "toolu_d")["reason"].(string)}
	if strings.Join(verdicts, " ") != strings.Join(want, " ") {
		t.Errorf("the drift events' verdicts %v; the agent was shown %v", verdicts, want)
	}

	// The supervisor's round on the fleet: its journal records, as the
	// journal itself lists them, are the events of one span.
	sv := s.Run(t, s.lb, "supervise", "--once", "--json")
	if sv.ExitCode != 0 {
		t.Fatalf("supervise --once: exit %d: %s", sv.ExitCode, sv.Stderr)
	}
	lg := s.Run(t, s.lb, "supervise", "log", "--json")
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(lg.Stdout), "\n") {
		var rec struct{ Kind string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("supervise log --json: %v: %s", err, lg.Stdout)
		}
		kinds = append(kinds, "laserbrain.supervise."+rec.Kind)
	}
	var sent []string
	for _, sp := range rcv.Spans() {
		if sp.Name == "laserbrain.supervise" {
			if sp.Attrs["laserbrain.fleet"] != "e2e-fleet" {
				t.Errorf("the supervisor's span: %v", sp.Attrs)
			}
			for _, e := range sp.Events {
				if e.Name != "laserbrain.supervise.collision" {
					sent = append(sent, e.Name)
				}
			}
		}
	}
	if len(kinds) < 2 || strings.Join(sent, " ") != strings.Join(kinds, " ") {
		t.Errorf("the supervisor sent %v; its journal holds %v", sent, kinds)
	}
}

// A collector that holds the connection and never answers neither slows
// nor breaks the hooks: every call is answered as without telemetry (the
// Bash call runs, the push is refused), the run keeps the agent's status,
// and what could not be delivered is said, not waited for.
func TestClaudeRunDeadCollector(t *testing.T) {
	hole := otlptest.Blackhole(t)
	s, r := telemetryRun(t, "http://"+hole)
	if tr := s.toolResult(t, "toolu_ls"); tr.IsError || !strings.Contains(tr.Text, "parser-started") {
		t.Errorf("the Bash call: %+v", tr)
	}
	if tr := s.toolResult(t, "toolu_push"); !tr.IsError {
		t.Errorf("the push was not refused: %+v", tr)
	}
	if !strings.Contains(r.Stderr, "telemetry") || !strings.Contains(r.Stderr, "not delivered") {
		t.Errorf("laserbrain run did not say its spans were lost:\n%s", r.Stderr)
	}
}

// otelBeside builds laserbrain-otel beside the test's laserbrain, where
// laserbrain run looks for it (make install puts it there).
func otelBeside(t *testing.T) {
	t.Helper()
	otelBuild.path(t)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The run's tokens are the sum of the usage the scripted model reported
// for each main-loop response (Claude Code's transcript records them):
// in runs --json, the summary and the exported run span alike.
func TestClaudeRunTokens(t *testing.T) {
	rcv := otlptest.Start(t)
	s, r := telemetryRun(t, rcv.URL)
	n := len(s.Model.MainRequests())
	wantIn, wantOut := int64(n*agenttest.MessagesInputTokens), int64(n*agenttest.MessagesOutputTokens)
	rows := s.runsJSON(t)
	if len(rows) != 1 {
		t.Fatalf("runs: %v", rows)
	}
	tok, _ := rows[0]["tokens"].(map[string]any)
	if tok["input"] != float64(wantIn) || tok["output"] != float64(wantOut) || tok["requests"] != float64(n) {
		t.Errorf("runs --json tokens %v; the model answered %d requests, %d in and %d out each", tok, n, agenttest.MessagesInputTokens, agenttest.MessagesOutputTokens)
	}
	rep := s.Run(t, s.lb, "report", "--json")
	var got struct {
		Summary struct {
			Agents []struct {
				Tokens *struct{ Input, Output int64 } `json:"tokens"`
			} `json:"agents"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(rep.Stdout), &got); err != nil || len(got.Summary.Agents) != 1 || got.Summary.Agents[0].Tokens == nil ||
		got.Summary.Agents[0].Tokens.Input != wantIn || got.Summary.Agents[0].Tokens.Output != wantOut {
		t.Errorf("report --json: %v\n%s%s", err, rep.Stdout, rep.Stderr)
	}
	if want := "tokens:   " + strconv.FormatInt(wantIn+wantOut, 10) + " tokens"; !strings.Contains(r.Stderr, want) {
		t.Errorf("the summary does not say %q:\n%s", want, r.Stderr)
	}
	for _, sp := range rcv.Spans() {
		if sp.Attrs["gen_ai.operation.name"] == "invoke_agent" &&
			(sp.Attrs["gen_ai.usage.input_tokens"] != wantIn || sp.Attrs["gen_ai.usage.output_tokens"] != wantOut) {
			t.Errorf("the run span's usage: %v", sp.Attrs)
		}
	}
}

// --max-tokens below the third response's total stops the run at that
// response's call: it is refused with the figures, the agent is stopped,
// and laserbrain run exits 4.
func TestClaudeMaxTokens(t *testing.T) {
	per := agenttest.MessagesInputTokens + agenttest.MessagesOutputTokens
	limit := 3*per - 1
	s := newSupervised(t,
		agenttest.Bash("toolu_1", "touch m1"),
		agenttest.Bash("toolu_2", "touch m2"),
		agenttest.Bash("toolu_3", "touch m3"),
		agenttest.Bash("toolu_4", "touch m4"),
		agenttest.Say("Stopped."),
		agenttest.Say("Really stopped."))
	args := []string{"run", "--agent", "spender", "--max-tokens", strconv.Itoa(limit), "--grace", "30s", "--", s.Claude}
	r := s.Run(t, s.lb, append(args, agenttest.ClaudeArgs("work on the task", "Bash")...)...)
	for _, m := range []string{"m1", "m2"} {
		if _, err := os.Stat(filepath.Join(s.Dir, m)); err != nil {
			t.Errorf("%s: the call under the budget did not run", m)
		}
	}
	// The third response crossed the budget: its call is refused, once
	// Claude Code has recorded that response (the run waits for it).
	if _, err := os.Stat(filepath.Join(s.Dir, "m3")); err == nil {
		t.Error("m3 exists: the call of the response that crossed --max-tokens ran")
	}
	tr, _ := s.Model.ToolResult("toolu_3")
	refusal := tr.Text
	t.Logf("the model was shown: %s", refusal)
	reached := "--max-tokens " + strconv.Itoa(limit) + " reached: "
	if !tr.IsError || !strings.Contains(refusal, reached+strconv.Itoa(3*per)+" tokens") || !strings.Contains(refusal, "tool call 3 ") {
		t.Errorf("the refusal the model was shown for the third call: %q; want the limit and the figures", refusal)
	}
	if r.ExitCode != 4 || !strings.Contains(r.Stderr, "stopped: "+reached) {
		t.Errorf("laserbrain run exited %d; want 4 with the stop in the summary:\n%s", r.ExitCode, r.Stderr)
	}
}

// The project policy's telemetry.endpoint is where a run's spans go when
// the environment names none; LASERBRAIN_OTEL=off still turns it off.
func TestPolicyTelemetryEndpoint(t *testing.T) {
	otelBeside(t)
	lb := laserbrainBinary(t)
	rcv := otlptest.Start(t)
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".laserbrain"), 0o755); err != nil {
		t.Fatal(err)
	}
	policy := `{"version": 1, "telemetry": {"endpoint": "` + rcv.URL + `"}}`
	if err := os.WriteFile(filepath.Join(dir, ".laserbrain", "policy.json"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "LASERBRAIN_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	home := t.TempDir()
	env = append(env, "HOME="+home, "LASERBRAIN_HOME="+filepath.Join(home, "lb"), "LASERBRAIN_FLEET=policy-fleet")
	for _, c := range []struct {
		agent string
		extra []string
	}{{"sent", nil}, {"kept", []string{"LASERBRAIN_OTEL=off"}}} {
		cmd := exec.Command(lb, "run", "--agent", c.agent, "--", "true")
		cmd.Dir, cmd.Env = dir, append(env[:len(env):len(env)], c.extra...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("laserbrain run --agent %s: %v\n%s", c.agent, err, out)
		}
	}
	var agents []string
	for _, sp := range rcv.Spans() {
		if sp.Attrs["gen_ai.operation.name"] == "invoke_agent" {
			agents = append(agents, sp.Attrs["gen_ai.agent.name"].(string))
		}
	}
	if strings.Join(agents, " ") != "sent" {
		t.Fatalf("invoke_agent spans for %v; want the run under the policy's endpoint only", agents)
	}
}
