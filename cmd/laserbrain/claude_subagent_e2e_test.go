package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// A Claude Code subagent (the Agent tool) is gated like its parent: its
// scripted force push is denied, the marker absent, our reason in its next
// request. Its calls come with the parent's session id and agent_id /
// agent_type, so they are recorded on the parent's run as that subagent —
// no run of its own — and supervise sees one agent, never a collision
// between a parent and its subagent.
func TestClaudeSubagentGatedOnTheParentsRun(t *testing.T) {
	s := newSupervised(t,
		agenttest.CallID("toolu_agent", "Agent", map[string]any{"description": "push it", "prompt": "push the branch",
			"subagent_type": "general-purpose", "run_in_background": false}),
		agenttest.Bash("toolu_sub", "git push --force origin main; touch sub-marker"),
		agenttest.Say("the push was refused"),
		agenttest.Bash("toolu_parent", "ls"),
		agenttest.Say("finished"))
	s.runClaude(t, "parent", nil, "Bash", "Agent")
	if _, err := os.Stat(filepath.Join(s.Dir, "sub-marker")); err == nil {
		t.Fatal("sub-marker exists: the subagent's force push ran")
	}
	if tr := s.toolResult(t, "toolu_sub"); !tr.IsError || !strings.Contains(tr.Text, "laserbrain operator gate") {
		t.Fatalf("the subagent was shown is_error=%v %q; want our denial", tr.IsError, tr.Text)
	}
	if tr, ok := s.Model.ToolResult("toolu_parent"); !ok || tr.IsError {
		t.Fatalf("the parent's ls: shown=%v %+v; want it run and its result shown\nthe model was asked:\n%s\nhook errors: %s",
			ok, tr, s.Model.Trace(), hookErrorsIn(s.lbHome))
	}
	rows := s.runsJSON(t)
	if len(rows) != 1 || rows[0]["agent"] != "parent" || len(rows[0]["sessions"].([]any)) != 1 {
		t.Fatalf("runs: %v; want the parent's one run with its one session", rows)
	}
	st, err := fleet.OpenLocal(filepath.Join(s.lbHome, "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	evs, err := st.Events(context.Background(), rows[0]["run"].(string))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]fleet.RunEvent{}
	for _, e := range evs {
		by[e.ID] = e
	}
	if e, ok := by["gate:toolu_sub"]; !ok || e.Subagent != "general-purpose" || !e.OK.Failed() {
		t.Fatalf("the subagent's denial on the run: %+v (events %v)", e, evs)
	}
	if e, ok := by["tool:toolu_parent"]; !ok || e.Subagent != "" {
		t.Fatalf("the parent's own call on the run: %+v\nevents: %+v\nthe model was asked:\n%s\nhook errors: %s",
			e, evs, s.Model.Trace(), hookErrorsIn(s.lbHome))
	}
	r := s.Run(t, s.lb, "supervise", "--once", "--json")
	var round struct {
		Agents     []json.RawMessage `json:"agents"`
		Collisions []json.RawMessage `json:"collisions"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &round); err != nil {
		t.Fatalf("supervise: %v\n%s%s", err, r.Stdout, r.Stderr)
	}
	if len(round.Agents) != 1 || len(round.Collisions) != 0 {
		t.Fatalf("supervise sees %d agents and %d collisions, want one agent and none:\n%s", len(round.Agents), len(round.Collisions), r.Stdout)
	}
}
