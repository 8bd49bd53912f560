package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/laserkit/laserkit/internal/agenttest"
)

// subTaskNode finds the id sub_task answered in what the client sent the
// model (the tool result's JSON, escaped inside the request's).
var subTaskNode = regexp.MustCompile(`node\\*"\s*:\s*\\*"([0-9A-Za-z_.:-]+/1)\\*"`)

// The real Claude Code CLI under laserbrain run decomposes its task over
// our MCP server: check_state grounds the task (the tree's root), sub_task
// opens a sub-task, check_sub_task checks it under the id sub_task gave,
// and tree_report reads the whole tree: the model receives the report the
// reference's tree_report writes for the same tree.
func TestClaudeSubTaskTreeOverMCP(t *testing.T) {
	cc := agenttest.ClaudeCode
	lb := laserbrainBinary(t)
	var mu sync.Mutex
	var node string
	check := map[string]any{"goal": "write the tokenizer", "progress": "advancing", "distance": 2}
	checkSub := cc.MCP("toolu_check_sub", "laserbrain", "check_sub_task", check)
	var s *agenttest.Session
	checkSub.Before = func() {
		var bodies strings.Builder
		for _, r := range s.Model.MainRequests() {
			bodies.Write(r.Body)
		}
		if m := subTaskNode.FindStringSubmatch(bodies.String()); m != nil {
			mu.Lock()
			node = m[1]
			mu.Unlock()
			check["node"] = m[1]
		}
	}
	s = agenttest.NewAgent(t, cc,
		cc.MCP("toolu_check", "laserbrain", "check_state", map[string]any{"goal": "build the parser", "progress": "advancing", "distance": 8}),
		cc.MCP("toolu_sub", "laserbrain", "sub_task", map[string]any{"goal": "write the tokenizer", "distance": 4}),
		checkSub,
		cc.MCP("toolu_report", "laserbrain", "tree_report", map[string]any{}),
		agenttest.Say("Done."))
	s.Env = append(s.Env, "LASERBRAIN_HOME="+s.Home+"/laserbrain")
	r := s.PromptVia(t, lb, []string{"run", "--agent", "decomposer", "--"}, "build the parser")
	if r.ExitCode != 0 || s.Model.Played() != 5 {
		t.Fatalf("claude played %d of 5 turns (exit %d)\n%s\n%s", s.Model.Played(), r.ExitCode, clipOut(r.Stdout), clipOut(r.Stderr))
	}
	mu.Lock()
	id := node
	mu.Unlock()
	if id == "" {
		t.Fatalf("sub_task answered no sub-task id: %q", s.Model.ResultAfter(t, "toolu_sub").Text)
	}
	if tr := s.Model.ResultAfter(t, "toolu_check_sub"); tr.IsError || !strings.Contains(tr.Text, `"reason"`) || strings.Contains(tr.Text, "no sub-task") {
		t.Fatalf("check_sub_task on %s answered %q", id, tr.Text)
	}
	// The same operations as the reference's docstring example in
	// vectors/tree.json: its report is the one the model must read.
	var vec struct {
		Cases []struct {
			Out struct{ Report string } `json:"out"`
			Why string                  `json:"why"`
		} `json:"cases"`
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "vectors", "tree.json"))
	if err != nil || json.Unmarshal(data, &vec) != nil || len(vec.Cases) < 2 || !strings.Contains(vec.Cases[1].Why, "docstring example") {
		t.Fatalf("vectors/tree.json: %v", err)
	}
	var got struct{ Report string }
	text := s.Model.ResultAfter(t, "toolu_report").Text
	if err := json.Unmarshal([]byte(text), &got); err != nil || got.Report != vec.Cases[1].Out.Report {
		t.Errorf("tree_report answered\n%s\nthe reference's report of the same tree is\n%s", text, vec.Cases[1].Out.Report)
	}
}
