package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/agenttest"
)

// supervisedHalts are the halts one supervise --json round put.
func supervisedHalts(t *testing.T, r agenttest.Result) []struct{ Agent, Reason string } {
	t.Helper()
	if r.ExitCode != 0 {
		t.Fatalf("supervise: exit %d\n%s\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	var round struct {
		Halts []struct{ Agent, Reason string } `json:"halts"`
	}
	if err := json.Unmarshal([]byte(firstLine(r.Stdout)), &round); err != nil {
		t.Fatalf("supervise --json: %v\n%s", err, r.Stdout)
	}
	return round.Halts
}

var fleetSpent = regexp.MustCompile(`the fleet's --max-tokens 10 reached: its agents spent (\d+) tokens`)

// supervise --max-tokens holds the fleet to a budget: while the real
// Claude Code works under laserbrain run (holding in a shell command), a
// round under a budget it has not spent halts nobody; a round under one it
// has spent halts it with the figures — the scripted model's usage so far —
// and its next tool call is refused.
func TestClaudeFleetBudget(t *testing.T) {
	otelBeside(t)
	hold := "touch ready; timeout 180 sh -c 'until test -e go; do sleep 0.1; done'; echo released"
	s := newSupervised(t,
		agenttest.Bash("toolu_hold", hold),
		agenttest.Bash("toolu_after", "touch after"),
		agenttest.Say("Stopped."), agenttest.Say("Really stopped."))
	args := append([]string{"run", "--agent", "spender", "--", s.Claude}, agenttest.ClaudeArgs("work on the task", "Bash")...)
	run := s.Start(t, s.lb, args...)
	ready := waitForFile(filepath.Join(s.Dir, "ready"), 3*time.Minute)
	var roomy, tight agenttest.Result
	if ready {
		roomy = s.Run(t, s.lb, "supervise", "--once", "--json", "--repo", s.Dir, "--max-tokens", "100000")
		tight = s.Run(t, s.lb, "supervise", "--once", "--json", "--repo", s.Dir, "--max-tokens", "10")
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rr := run.Wait(t)
	if !ready {
		t.Fatalf("the agent never held: exit %d\n%s", rr.ExitCode, rr.Stderr)
	}
	if h := supervisedHalts(t, roomy); len(h) != 0 {
		t.Errorf("a budget not spent halted %+v", h)
	}
	halts := supervisedHalts(t, tight)
	if len(halts) != 1 || !strings.HasPrefix(halts[0].Agent, "spender:") {
		t.Fatalf("a spent budget halted %+v; want the one agent", halts)
	}
	m := fleetSpent.FindStringSubmatch(halts[0].Reason)
	per := agenttest.MessagesInputTokens + agenttest.MessagesOutputTokens
	if m == nil {
		t.Fatalf("the halt's reason: %q; want the budget and the figures", halts[0].Reason)
	}
	if n, _ := strconv.Atoi(m[1]); n < per || n%per != 0 || n > len(s.Model.MainRequests())*per {
		t.Errorf("the fleet spent %d tokens by the halt; the scripted model answers %d a request", n, per)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "after")); err == nil {
		t.Error("the call after the halt ran")
	}
	if tr, ok := s.Model.ToolResult("toolu_after"); !ok || !tr.IsError || !strings.Contains(tr.Text, "--max-tokens 10 reached") {
		t.Errorf("the call after the halt: %+v; want it refused with the budget", tr)
	}
}

// The project policy's budget for an agent holds its run as --max-tokens
// does (its own entry, not "*"'s): the real Claude Code is stopped before
// a fourth tool call with the figures. A command whose tokens laserbrain
// cannot read runs on, the budget said not held.
func TestClaudePolicyBudget(t *testing.T) {
	per := agenttest.MessagesInputTokens + agenttest.MessagesOutputTokens
	limit := 3*per - 1
	s := newSupervised(t,
		agenttest.Bash("toolu_1", "touch m1"), agenttest.Bash("toolu_2", "touch m2"),
		agenttest.Bash("toolu_3", "touch m3"), agenttest.Bash("toolu_4", "touch m4"),
		agenttest.Say("Stopped."), agenttest.Say("Really stopped."))
	if out, err := exec.Command("git", "init", "-q", s.Dir).CombinedOutput(); err != nil { // the policy is the repository's
		t.Fatalf("git init: %v: %s", err, out)
	}
	policy := `{"version": 1, "budgets": {"spender": {"max_tokens": ` + strconv.Itoa(limit) + `}, "*": {"max_tokens": 1}}}`
	if err := os.MkdirAll(filepath.Join(s.Dir, ".laserbrain"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, ".laserbrain", "policy.json"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--agent", "spender", "--grace", "30s", "--", s.Claude}
	r := s.Run(t, s.lb, append(args, agenttest.ClaudeArgs("work on the task", "Bash")...)...)
	for _, m := range []string{"m1", "m2"} {
		if _, err := os.Stat(filepath.Join(s.Dir, m)); err != nil {
			t.Errorf("%s: a call under the policy's budget did not run", m)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "m4")); err == nil {
		t.Error("m4 exists: a fourth tool call ran past the policy's budget")
	}
	reached := "--max-tokens " + strconv.Itoa(limit) + " reached: "
	if r.ExitCode != 4 || !strings.Contains(r.Stderr, "stopped: "+reached) {
		t.Errorf("laserbrain run exited %d; want 4 with the policy's budget in the summary:\n%s", r.ExitCode, r.Stderr)
	}
	other := s.Run(t, s.lb, "run", "--agent", "plain", "--", "true")
	if other.ExitCode != 0 || !strings.Contains(other.Stderr, "the project policy's max_tokens for plain is not held") {
		t.Errorf("a command whose tokens are not read, under a budget: exit %d\n%s", other.ExitCode, other.Stderr)
	}
}
