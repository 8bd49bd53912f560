package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
)

// clientTokensRun runs c under laserbrain run on a script of three
// responses (two calls at once, one call, an answer), each reporting
// input, output and cached input tokens, and returns the session and the
// run's tokens as laserbrain runs --json lists them.
func clientTokensRun(t *testing.T, c *agenttest.Client, env ...string) (*agenttest.Session, map[string]any) {
	t.Helper()
	otelBeside(t)
	lb := laserbrainBinary(t)
	s := agenttest.NewAgent(t, c,
		agenttest.Calls(c.Shell("call_a", "echo a").Tools[0], c.Shell("call_b", "echo b").Tools[0]),
		c.Shell("call_c", "echo c"),
		agenttest.Say("Done."))
	s.Model.Usage = &agenttest.Usage{Input: 7, Output: 5, CacheRead: 3}
	lbHome := filepath.Join(s.Home, "laserbrain")
	s.Env = append(append(s.Env, "LASERBRAIN_HOME="+lbHome), env...)
	if c == agenttest.GeminiCLI {
		s.Install(t, lb) // as TestMessagesReachEveryClient says why
	}
	r := s.PromptVia(t, lb, []string{"run", "--agent", "counted", "--"}, "work on the task")
	if r.ExitCode != 0 || s.Model.Played() != 3 {
		t.Fatalf("%s played %d of 3 turns: exit %d\n%s\nhook errors: %s", c.Name, s.Model.Played(), r.ExitCode, clipOut(r.Stderr), hookErrorsIn(lbHome))
	}
	lr := s.Run(t, lb, "runs", "--json")
	var rows []map[string]any
	if lr.ExitCode != 0 || json.Unmarshal([]byte(lr.Stdout), &rows) != nil || len(rows) != 1 {
		t.Fatalf("laserbrain runs --json: exit %d\n%s\n%s", lr.ExitCode, lr.Stdout, lr.Stderr)
	}
	tok, _ := rows[0]["tokens"].(map[string]any)
	return s, tok
}

// wantSent fails the test unless tok (a run's tokens in runs --json) are
// what the scripted model said it used, over all its answers.
func wantSent(t *testing.T, s *agenttest.Session, tok map[string]any) {
	t.Helper()
	t.Logf("the run's tokens: %v", tok)
	sent, n := s.Model.Sent(), 0
	for _, r := range s.Model.Requests() {
		if r.Usage != (agenttest.Usage{}) {
			n++
		}
	}
	want := map[string]any{"input": float64(sent.Input), "output": float64(sent.Output), "cache_read": float64(sent.CacheRead),
		"cache_write": 0.0, "requests": float64(n)}
	if fmt.Sprint(tok) != fmt.Sprint(want) {
		t.Errorf("the run's tokens %v; the scripted model's %d answers reported %v", tok, n, want)
	}
}

// Codex and Gemini CLI, pointed at the run's receiver, report each model
// request through their own OpenTelemetry; the run's tokens are the sum
// of the usage the scripted model reported (the cached tokens apart from
// the input), and no cost (neither client reports one).
func TestClientTokensReported(t *testing.T) {
	for _, c := range []*agenttest.Client{agenttest.Codex, agenttest.GeminiCLI} {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			s, tok := clientTokensRun(t, c)
			wantSent(t, s, tok)
		})
	}
}

// With the receiver off (LASERBRAIN_OTEL=off), Codex's tokens are read
// from its own records instead — its session's rollout — and are the
// same sum.
func TestCodexTokensFromRollout(t *testing.T) {
	s, tok := clientTokensRun(t, agenttest.Codex, "LASERBRAIN_OTEL=off")
	wantSent(t, s, tok)
}

// --max-tokens holds Codex too: its rollout records each response's usage
// before Codex asks about the response's calls, so the call of the
// response that crossed the budget is refused, with the figures, and the
// run stops (exit 4) before any later call runs.
func TestCodexMaxTokens(t *testing.T) {
	otelBeside(t)
	lb := laserbrainBinary(t)
	c := agenttest.Codex
	s := agenttest.NewAgent(t, c, c.Shell("call_1", "touch m1"), c.Shell("call_2", "touch m2"), c.Shell("call_3", "touch m3"),
		c.Shell("call_4", "touch m4"), agenttest.Say("Stopped."), agenttest.Say("Really stopped."))
	u := agenttest.Usage{Input: 7, Output: 5, CacheRead: 3}
	s.Model.Usage = &u
	lbHome := filepath.Join(s.Home, "laserbrain")
	s.Env = append(s.Env, "LASERBRAIN_HOME="+lbHome)
	limit := 3*u.Total() - 1
	r := s.PromptVia(t, lb, []string{"run", "--agent", "spender", "--max-tokens", strconv.FormatInt(limit, 10), "--grace", "30s", "--"}, "work on the task")
	for _, m := range []string{"m1", "m2"} {
		if _, err := os.Stat(filepath.Join(s.Dir, m)); err != nil {
			t.Errorf("%s: the call under the budget did not run (exit %d)\n%s\nhook errors: %s", m, r.ExitCode, clipOut(r.Stderr), hookErrorsIn(lbHome))
		}
	}
	for _, m := range []string{"m3", "m4"} {
		if _, err := os.Stat(filepath.Join(s.Dir, m)); err == nil {
			t.Errorf("%s exists: a call ran past --max-tokens (crossed by the third response)", m)
		}
	}
	reached := "--max-tokens " + strconv.FormatInt(limit, 10) + " reached: " + strconv.FormatInt(3*u.Total(), 10) + " tokens"
	tr, _ := s.Model.ToolResult("call_3")
	t.Logf("the model was shown: %s", tr.Text)
	if !strings.Contains(tr.Text, reached) || !strings.Contains(tr.Text, "tool call 3 ") {
		t.Errorf("the refusal the model was shown for the third call: %q; want the limit and the figures (%s)", tr.Text, reached)
	}
	if r.ExitCode != 4 || !strings.Contains(r.Stderr, "stopped: --max-tokens") {
		t.Errorf("laserbrain run exited %d; want 4 with the stop in the summary:\n%s", r.ExitCode, r.Stderr)
	}
}

// With the receiver off, Gemini CLI's tokens are read from its own
// records — its session's chat, which holds the main loop's responses
// (not the side requests it makes without tools): their sum.
func TestGeminiTokensFromChat(t *testing.T) {
	s, tok := clientTokensRun(t, agenttest.GeminiCLI, "LASERBRAIN_OTEL=off")
	var main agenttest.Usage
	n := 0
	for _, r := range s.Model.Requests() {
		if r.Main {
			main.Input, main.Output, main.CacheRead, n = main.Input+r.Usage.Input, main.Output+r.Usage.Output, main.CacheRead+r.Usage.CacheRead, n+1
		}
	}
	want := map[string]any{"input": float64(main.Input), "output": float64(main.Output), "cache_read": float64(main.CacheRead),
		"cache_write": 0.0, "requests": float64(n)}
	if fmt.Sprint(tok) != fmt.Sprint(want) {
		t.Errorf("the run's tokens %v; the scripted model's %d main-loop answers reported %v", tok, n, want)
	}
}
