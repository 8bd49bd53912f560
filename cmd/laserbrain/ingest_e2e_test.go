package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/internal/otlptest"
)

// apiRequest is one claude_code.api_request event as a collector decoded
// it: Claude Code's own report of one model request.
type apiRequest struct {
	seq            int64
	input, output  int64
	cost           float64
	costed         bool
	session, model string
}

// apiRequests are Claude Code's model requests among what rcv received,
// in the order Claude Code numbered its events.
func apiRequests(t *testing.T, rcv *otlptest.Receiver) []apiRequest {
	t.Helper()
	var out []apiRequest
	for _, l := range rcv.Logs() {
		if l.Body != "claude_code.api_request" {
			continue
		}
		num := func(k string) int64 {
			n, err := strconv.ParseInt(fmt.Sprint(l.Attrs[k]), 10, 64)
			if err != nil {
				t.Fatalf("api_request %s = %v: %v", k, l.Attrs[k], err)
			}
			return n
		}
		r := apiRequest{seq: num("event.sequence"), input: num("input_tokens"), output: num("output_tokens"),
			session: fmt.Sprint(l.Attrs["session.id"]), model: fmt.Sprint(l.Attrs["model"])}
		if v, ok := l.Attrs["cost_usd"]; ok {
			c, err := strconv.ParseFloat(fmt.Sprint(v), 64)
			if err != nil {
				t.Fatalf("api_request cost_usd = %v: %v", v, err)
			}
			r.cost, r.costed = c, true
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// A person who had Claude Code send its own telemetry to their endpoint
// still gets all of it under laserbrain run (forwarded by the run's
// receiver): every model request Claude Code reported. The run's tokens
// and cost are those same requests' figures, and the tokens are the
// scripted model's usage.
func TestClaudeTelemetryForwarded(t *testing.T) {
	person := otlptest.Start(t)
	s, _ := telemetryRun(t, person.URL, "CLAUDE_CODE_ENABLE_TELEMETRY=1")
	reqs := apiRequests(t, person)
	n := len(s.Model.MainRequests())
	if len(reqs) < n {
		t.Fatalf("the person's endpoint got %d of Claude Code's model requests; the scripted model answered %d", len(reqs), n)
	}
	var in, out int64
	var cost float64
	for _, r := range reqs {
		in, out, cost = in+r.input, out+r.output, cost+r.cost
	}
	if in != int64(n*agenttest.MessagesInputTokens) || out != int64(n*agenttest.MessagesOutputTokens) {
		t.Errorf("Claude Code reported %d in, %d out; the scripted model's usage adds up to %d and %d", in, out, n*agenttest.MessagesInputTokens, n*agenttest.MessagesOutputTokens)
	}
	var metrics []string
	for _, m := range person.MetricNames() {
		if strings.HasPrefix(m, "claude_code.") {
			metrics = append(metrics, m)
		}
	}
	if len(metrics) == 0 {
		t.Errorf("no claude_code metric reached the person's endpoint: %v", person.MetricNames())
	}
	rows := s.runsJSON(t)
	if len(rows) != 1 {
		t.Fatalf("runs: %v", rows)
	}
	tok, _ := rows[0]["tokens"].(map[string]any)
	got, _ := tok["cost_usd"].(float64)
	if tok["input"] != float64(in) || tok["output"] != float64(out) || tok["requests"] != float64(len(reqs)) || math.Abs(got-cost) > 1e-9 {
		t.Errorf("runs --json tokens %v; Claude Code reported %d requests, %d in, %d out, costing %g", tok, len(reqs), in, out, cost)
	}
	// The report draws the same requests over time: one point each, their
	// running totals.
	rep := s.Run(t, s.lb, "report", "--json")
	var page struct {
		Summary struct {
			Agents []struct {
				Spending []struct {
					Tokens  int64   `json:"tokens"`
					CostUSD float64 `json:"cost_usd"`
				} `json:"spending"`
			} `json:"agents"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(rep.Stdout), &page); err != nil || len(page.Summary.Agents) != 1 {
		t.Fatalf("report --json: %v\n%s", err, rep.Stdout)
	}
	spent := page.Summary.Agents[0].Spending
	var runTok int64
	var runCost float64
	for i, q := range reqs {
		runTok, runCost = runTok+q.input+q.output, runCost+q.cost
		if i >= len(spent) || spent[i].Tokens != runTok || math.Abs(spent[i].CostUSD-runCost) > 1e-9 {
			t.Errorf("the report's spending %+v; after Claude Code's request %d: %d tokens, $%g", spent, i+1, runTok, runCost)
			break
		}
	}
	html := filepath.Join(t.TempDir(), "report.html")
	if r := s.Run(t, s.lb, "report", "--html", html); r.ExitCode != 0 {
		t.Fatalf("report --html: %d %s", r.ExitCode, r.Stderr)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "Tokens over time") {
		t.Errorf("the HTML report draws no tokens over time (%v)", err)
	}
	for _, sp := range person.Spans() {
		if c, ok := sp.Attrs["laserbrain.usage.cost_usd"].(float64); sp.Attrs["gen_ai.operation.name"] == "invoke_agent" && (!ok || math.Abs(c-cost) > 1e-9) {
			t.Errorf("the run span's cost: %v; Claude Code reported %g", sp.Attrs["laserbrain.usage.cost_usd"], cost)
		}
	}
}

// Without the person's own telemetry turned on for Claude Code, nothing of
// Claude Code's reaches their endpoint, and the run still records what
// Claude Code reported to the run's receiver: its cost.
func TestClaudeTelemetryNotForwardedUnasked(t *testing.T) {
	person := otlptest.Start(t)
	s, _ := telemetryRun(t, person.URL)
	for _, l := range person.Logs() {
		t.Fatalf("the person's endpoint got a log record of Claude Code's they did not turn on: %s", l.Body)
	}
	rows := s.runsJSON(t)
	tok, _ := rows[0]["tokens"].(map[string]any)
	if _, ok := tok["cost_usd"].(float64); !ok || tok["requests"] != float64(len(s.Model.MainRequests())) {
		t.Errorf("runs --json tokens %v: no cost, or not the %d requests the model answered", tok, len(s.Model.MainRequests()))
	}
}

var costFigures = regexp.MustCompile(`over (\d+) model requests at \$([0-9.]+) \(the client's own figure\)`)

// --max-cost stops the run within one tool call of crossing it, by the
// cost Claude Code itself reported (as the person's own collector got it,
// forwarded): the calls made before the crossing ran, the call at it (or
// the next one, when Claude Code's report came late) was refused with the
// figures, no later call ran, and laserbrain run exits 4.
func TestClaudeMaxCost(t *testing.T) {
	otelBeside(t)
	person := otlptest.Start(t)
	const budget = 0.0005
	s := newSupervised(t,
		agenttest.Bash("toolu_1", "touch m1"), agenttest.Bash("toolu_2", "touch m2"),
		agenttest.Bash("toolu_3", "touch m3"), agenttest.Bash("toolu_4", "touch m4"),
		agenttest.Bash("toolu_5", "touch m5"), agenttest.Bash("toolu_6", "touch m6"),
		agenttest.Say("Stopped."), agenttest.Say("Really stopped."))
	s.Env = append(s.Env, "CLAUDE_CODE_ENABLE_TELEMETRY=1", "OTEL_EXPORTER_OTLP_ENDPOINT="+person.URL)
	args := []string{"run", "--agent", "spender", "--max-cost", "0.0005", "--grace", "30s", "--", s.Claude}
	r := s.Run(t, s.lb, append(args, agenttest.ClaudeArgs("work on the task", "Bash")...)...)
	reqs := apiRequests(t, person)
	cross, sum := 0, 0.0 // the request whose cost crossed the budget (1-based)
	for i, q := range reqs {
		if !q.costed {
			t.Fatalf("Claude Code reported no cost for request %d: %+v", i+1, q)
		}
		if sum += q.cost; sum > budget && cross == 0 {
			cross = i + 1
		}
	}
	if cross == 0 || cross > 4 {
		t.Fatalf("Claude Code's reported costs %+v cross %g at request %d; the test needs a crossing by the fourth", reqs, budget, cross)
	}
	for i := 1; i < cross; i++ {
		if _, err := os.Stat(filepath.Join(s.Dir, fmt.Sprintf("m%d", i))); err != nil {
			t.Errorf("m%d: a call before the budget was crossed did not run", i)
		}
	}
	for i := cross + 1; i <= 6; i++ {
		if _, err := os.Stat(filepath.Join(s.Dir, fmt.Sprintf("m%d", i))); err == nil {
			t.Errorf("m%d exists: a call ran past --max-cost (crossed at request %d)", i, cross)
		}
	}
	var refusal string
	for _, id := range []string{fmt.Sprintf("toolu_%d", cross), fmt.Sprintf("toolu_%d", cross+1)} {
		if tr, ok := s.Model.ToolResult(id); ok && tr.IsError && refusal == "" {
			refusal = tr.Text
		}
	}
	t.Logf("the model was shown: %s", refusal)
	m := costFigures.FindStringSubmatch(refusal)
	if !strings.Contains(refusal, "--max-cost $0.0005 reached: ") || m == nil {
		t.Fatalf("the refusal the model was shown: %q; want the limit and the figures", refusal)
	}
	k, _ := strconv.Atoi(m[1])
	said, _ := strconv.ParseFloat(m[2], 64)
	want := 0.0
	for _, q := range reqs[:min(k, len(reqs))] {
		want += q.cost
	}
	if k < cross || math.Abs(said-want) > 1e-6 {
		t.Errorf("the refusal says $%s over %d requests; Claude Code reported $%g over those (crossing at request %d)", m[2], k, want, cross)
	}
	if r.ExitCode != 4 || !strings.Contains(r.Stderr, "stopped: --max-cost $0.0005 reached: ") {
		t.Errorf("laserbrain run exited %d; want 4 with the stop in the summary:\n%s", r.ExitCode, r.Stderr)
	}
}
