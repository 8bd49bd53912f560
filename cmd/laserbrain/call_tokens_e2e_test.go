package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/internal/otlptest"
)

// callTokens are a run's call_tokens in runs --json, by call id.
func callTokens(t *testing.T, runsJSON string) map[string]map[string]any {
	t.Helper()
	var rows []struct {
		CallTokens []map[string]any `json:"call_tokens"`
	}
	if err := json.Unmarshal([]byte(runsJSON), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("runs --json: %v\n%s", err, runsJSON)
	}
	out := map[string]map[string]any{}
	for _, c := range rows[0].CallTokens {
		id, _ := c["call"].(string)
		out[id] = c
	}
	return out
}

// wantCall fails the test unless call cost what the scripted response
// that asked for it said it used, shared by shared calls.
func wantCall(t *testing.T, calls map[string]map[string]any, call string, u agenttest.Usage, shared int) {
	t.Helper()
	c, ok := calls[call]
	if !ok {
		t.Errorf("no tokens for %s; call_tokens: %v", call, calls)
		return
	}
	if c["input"] != float64(u.Input) || c["output"] != float64(u.Output) || c["cache_read"] != float64(u.CacheRead) ||
		c["shared"] != float64(shared) || c["tool"] == "" || c["tool"] == nil {
		t.Errorf("%s cost %v; the response that asked for it reported %+v, shared by %d calls", call, c, u, shared)
	}
}

// Each tool call's tokens are those of the model response that asked for
// it, as the client's own records link them — Codex's rollout, Claude
// Code's transcript — and the scripted responses each report a usage of
// their own, so a call given another response's tokens is caught. Two
// calls asked for at once share their response. runs --json and the
// report show them.
func TestCallTokens(t *testing.T) {
	first, second := agenttest.Usage{Input: 7, Output: 5, CacheRead: 3}, agenttest.Usage{Input: 11, Output: 13, CacheRead: 2}
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		otelBeside(t)
		lb := laserbrainBinary(t)
		rcv := otlptest.Start(t)
		c := agenttest.Codex
		both := agenttest.Calls(c.Shell("call_a", "echo a").Tools[0], c.Shell("call_b", "echo b").Tools[0])
		both.Usage = &first
		one := c.Shell("call_c", "echo c")
		one.Usage = &second
		s := agenttest.NewAgent(t, c, both, one, agenttest.Say("Done."))
		lbHome := filepath.Join(s.Home, "laserbrain")
		s.Env = append(s.Env, "LASERBRAIN_HOME="+lbHome, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+rcv.TracesURL)
		if r := s.PromptVia(t, lb, []string{"run", "--agent", "coster", "--"}, "work"); r.ExitCode != 0 || s.Model.Played() != 3 {
			t.Fatalf("codex played %d of 3 turns: exit %d\n%s", s.Model.Played(), r.ExitCode, clipOut(r.Stderr))
		}
		calls := callTokens(t, s.Run(t, lb, "runs", "--json").Stdout)
		wantCall(t, calls, "call_a", first, 2)
		wantCall(t, calls, "call_b", first, 2)
		wantCall(t, calls, "call_c", second, 1)
		// The call's span carries them too.
		spans := 0
		for _, sp := range rcv.Spans() {
			if sp.Attrs["gen_ai.tool.call.id"] == "call_c" {
				spans++
				if sp.Attrs["gen_ai.usage.input_tokens"] != second.Input || sp.Attrs["gen_ai.usage.output_tokens"] != second.Output ||
					sp.Attrs["gen_ai.usage.cache_read.input_tokens"] != second.CacheRead {
					t.Errorf("call_c's span: %v; its response reported %+v", sp.Attrs, second)
				}
			}
		}
		if spans != 1 {
			t.Errorf("%d spans of call_c, want 1", spans)
		}
		html := filepath.Join(t.TempDir(), "report.html")
		if r := s.Run(t, lb, "report", "--html", html); r.ExitCode != 0 {
			t.Fatalf("report --html: %d %s", r.ExitCode, r.Stderr)
		}
		if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "Tokens per tool call") || !strings.Contains(string(b), "call_c") {
			t.Errorf("the report shows no tokens per tool call (%v)", err)
		}
	})
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		one, two := agenttest.Bash("toolu_1", "echo one"), agenttest.Bash("toolu_2", "echo two")
		one.Usage, two.Usage = &first, &second
		s := newSupervised(t, one, two, agenttest.Say("Done."))
		if r := s.runClaude(t, "coster", nil, "Bash"); r.ExitCode != 0 {
			t.Fatalf("laserbrain run exited %d: %s", r.ExitCode, r.Stderr)
		}
		calls := callTokens(t, s.Run(t, s.lb, "runs", "--json").Stdout)
		wantCall(t, calls, "toolu_1", first, 1)
		wantCall(t, calls, "toolu_2", second, 1)
	})
}
