package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/laserkit/laserkit/supercode/client"
	"github.com/laserkit/laserkit/supercode/loop/verdict"
)

func connectWith(t *testing.T, opts Options) *mcp.ClientSession {
	t.Helper()
	sup, _ := testSupervisor(t, nil)
	srv, err := NewWithOptions(sup, opts)
	if err != nil {
		t.Fatal(err)
	}
	return connectServer(t, srv)
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	return names
}

// verdict and escalate exist only for a loop session: escalate for an
// agent, both for a judge.
func TestLoopToolsOnlyForLoopSessions(t *testing.T) {
	plain := toolNames(t, connectWith(t, Options{}))
	agent := toolNames(t, connectWith(t, Options{Loop: &LoopCall{Dir: t.TempDir(), Role: RoleAgent}}))
	judge := toolNames(t, connectWith(t, Options{Loop: &LoopCall{Dir: t.TempDir(), Role: RoleJudge}}))
	if slices.Contains(plain, "verdict") || slices.Contains(plain, "escalate") {
		t.Errorf("a plain server offers loop tools: %v", plain)
	}
	if !slices.Contains(agent, "escalate") || slices.Contains(agent, "verdict") {
		t.Errorf("an agent session: %v", agent)
	}
	if !slices.Contains(judge, "escalate") || !slices.Contains(judge, "verdict") || !slices.Contains(judge, "check_state") {
		t.Errorf("a judge session: %v", judge)
	}
	if _, err := NewWithOptions(nil, Options{Loop: &LoopCall{Dir: "x", Role: "boss"}}); err == nil {
		t.Error("an unknown role was accepted")
	}
}

// A malformed verdict is a tool error with the reason (the bounce), the
// second ends the judgment, and a valid one is written to the call
// directory for the loop.
func TestVerdictTool(t *testing.T) {
	dir := t.TempDir()
	cs := connectWith(t, Options{Loop: &LoopCall{Dir: dir, Role: RoleJudge}})
	out, isErr := call(t, cs, "verdict", map[string]any{"sufficient": false, "summary": "not yet", "findings": []any{}})
	if !isErr || !strings.Contains(out["error"].(string), "needs at least one blocker or required finding") ||
		!strings.Contains(out["error"].(string), "call verdict again") {
		t.Fatalf("first malformed verdict: %v", out)
	}
	out, isErr = call(t, cs, "verdict", map[string]any{"sufficient": "no", "summary": "x", "findings": []any{}})
	if !isErr || !strings.Contains(out["error"].(string), "ends this judgment as a malfunction") {
		t.Fatalf("second malformed verdict: %v", out)
	}
	c, err := verdict.Read(dir)
	if err != nil || len(c.Malformed) != 2 || c.Verdict != nil {
		t.Fatalf("call dir after two malformed: %+v %v", c, err)
	}

	dir2 := t.TempDir()
	cs2 := connectWith(t, Options{Loop: &LoopCall{Dir: dir2, Role: RoleJudge}})
	v := map[string]any{"sufficient": false, "summary": "The parser is missing.",
		"findings": []any{map[string]any{"severity": "blocker", "where": "parse.go", "what": "Add the parser", "why": "plan step 1"}}}
	out, isErr = call(t, cs2, "verdict", v)
	if isErr || out["ok"] != true || out["findings"] != 1.0 {
		t.Fatalf("valid verdict: %v", out)
	}
	c, err = verdict.Read(dir2)
	if err != nil || c.Verdict == nil || c.Verdict.Findings[0].What != "Add the parser" {
		t.Fatalf("call dir: %+v %v", c, err)
	}
	out, isErr = call(t, cs2, "verdict", v)
	if !isErr || !strings.Contains(out["error"].(string), "already recorded") {
		t.Fatalf("a second verdict: %v", out)
	}
}

func TestEscalateTool(t *testing.T) {
	dir := t.TempDir()
	cs := connectWith(t, Options{Loop: &LoopCall{Dir: dir, Role: RoleAgent}})
	if out, isErr := call(t, cs, "escalate", map[string]any{"reason": ""}); !isErr || !strings.Contains(out["error"].(string), "needs a reason") {
		t.Fatalf("escalate without a reason: %v", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "escalate.json")); err == nil {
		t.Fatal("an empty escalation was recorded")
	}
	if out, isErr := call(t, cs, "escalate", map[string]any{"reason": "the test database is down"}); isErr {
		t.Fatalf("escalate: %v", out)
	}
	c, err := verdict.Read(dir)
	if err != nil || c.Escalated != "the test database is down" {
		t.Fatalf("call dir: %+v %v", c, err)
	}
}

// The client seam recognises laserbrain's own tools under every client's
// MCP naming by their names (client.OwnToolNames): the list is exactly the
// tools this server offers, loop tools included.
func TestOwnToolNamesAreTheServers(t *testing.T) {
	judge := toolNames(t, connectWith(t, Options{Loop: &LoopCall{Dir: t.TempDir(), Role: RoleJudge}}))
	own := slices.Clone(client.OwnToolNames)
	sort.Strings(own)
	if strings.Join(judge, " ") != strings.Join(own, " ") {
		t.Errorf("the server offers %v; client.OwnToolNames is %v", judge, own)
	}
	if Name != client.ServerName {
		t.Errorf("server name %q, the seam's %q", Name, client.ServerName)
	}
}
