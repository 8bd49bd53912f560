package main

// laserbrain run's runaway limits with the real Claude Code CLI against the
// scripted model: the tool calls are counted by our pre-tool-use hook as
// Claude Code runs it, the checks by our MCP server's check_state.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
)

// --max-tool-calls 3: three Bash calls run, the fourth is refused before it
// runs with the reason for the model, the agent ends its turn, and
// laserbrain run exits 4 saying which limit stopped it.
func TestClaudeRunMaxToolCalls(t *testing.T) {
	s := newSupervised(t,
		agenttest.Bash("toolu_1", "echo 1 >> calls.log"),
		agenttest.Bash("toolu_2", "echo 2 >> calls.log"),
		agenttest.Bash("toolu_3", "echo 3 >> calls.log"),
		agenttest.Bash("toolu_4", "echo 4 >> calls.log"),
		agenttest.Say("Stopping: the run's tool-call limit was reached."))
	// A long grace: the agent ends its turn on its own, however slow the
	// machine (a shorter one would stop it with SIGTERM: exit 4 all the same).
	r := s.runClaude(t, "runaway", []string{"--max-tool-calls", "3", "--grace", "2m"}, "Bash", allMCP)
	if r.ExitCode != 4 {
		t.Fatalf("laserbrain run exit %d, want 4\nstderr: %s", r.ExitCode, r.Stderr)
	}
	b, _ := os.ReadFile(filepath.Join(s.Dir, "calls.log"))
	if got := strings.Fields(string(b)); strings.Join(got, " ") != "1 2 3" {
		t.Fatalf("calls that ran: %q, want 1 2 3 (the fourth refused before it ran)", got)
	}
	for _, id := range []string{"toolu_1", "toolu_2", "toolu_3"} {
		if tr := s.toolResult(t, id); tr.IsError {
			t.Fatalf("%s was refused: %s", id, tr.Text)
		}
	}
	tr := s.toolResult(t, "toolu_4")
	if !tr.IsError || !strings.Contains(tr.Text, "--max-tool-calls 3 reached: tool call 4 (Bash) was refused") ||
		!strings.Contains(tr.Text, "end your turn now") {
		t.Fatalf("the fourth call's result the model was shown: %+v", tr)
	}
	if !strings.Contains(r.Stderr, "stopped: --max-tool-calls 3 reached: tool call 4 (Bash) was refused; the agent ended its turn (its own exit 0)") {
		t.Fatalf("the summary does not name the limit:\n%s", r.Stderr)
	}
	rows := s.runsJSON(t)
	if len(rows) != 1 || rows[0]["tool_calls_asked"] != 4.0 || !strings.HasPrefix(rows[0]["stopped"].(string), "--max-tool-calls 3 reached") {
		t.Fatalf("the run does not record the stop: %v", rows)
	}
}

// --max-checks-off-ground 2: check_state through our MCP server drifts twice
// in a row; the next tool call is refused, and the run exits 4.
func TestClaudeRunChecksOffGround(t *testing.T) {
	s := newSupervised(t,
		check("toolu_g", "write a JSON parser in Python", 6),
		check("toolu_d1", "redesign the company logo in purple", 5),
		check("toolu_d2", "paint the office walls green", 5),
		agenttest.Bash("toolu_after", "touch after-drift"),
		agenttest.Say("Stopping."))
	r := s.runClaude(t, "drifter", []string{"--max-checks-off-ground", "2", "--grace", "2m"}, "Bash", allMCP)
	for _, id := range []string{"toolu_d1", "toolu_d2"} {
		if v := s.checkResult(t, id); v["drifting"] != true {
			t.Fatalf("check %s was meant to drift: %v", id, v)
		}
	}
	if r.ExitCode != 4 {
		t.Fatalf("laserbrain run exit %d, want 4\nstderr: %s", r.ExitCode, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "after-drift")); err == nil {
		t.Fatal("the call after the limit ran")
	}
	if tr := s.toolResult(t, "toolu_after"); !tr.IsError || !strings.Contains(tr.Text, "--max-checks-off-ground 2 reached: 2 checks in a row drifted") {
		t.Fatalf("the call after the limit: %+v", tr)
	}
	if !strings.Contains(r.Stderr, "stopped: --max-checks-off-ground 2 reached") {
		t.Fatalf("the summary does not name the limit:\n%s", r.Stderr)
	}
}
