package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/link"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/report"
)

// TestModulateRoleWithoutTeam: a role without a team is unstyled, as
// laserbrain.Modulate and the reference's mcp.py read it — every drift
// returns, team and role null — not an error.
func TestModulateRoleWithoutTeam(t *testing.T) {
	sup, _ := testSupervisor(t, map[string]string{agentrun.EnvRun: "run-m", agentrun.EnvFleet: "f"})
	cs := connect(t, sup)
	call(t, cs, "modulate", map[string]any{"goal": "write a JSON parser in Python", "distance": 6, "role": "checker"})
	v, isErr := call(t, cs, "modulate", map[string]any{"goal": "add an LRU cache", "distance": 5, "role": "checker"})
	m, _ := v["modulation"].(map[string]any)
	if isErr || v["reason"] != "goal-drift" || m == nil || m["return"] != true || m["basis"] != "unstyled — every drift returns" ||
		m["team"] != nil || m["role"] != nil || m["advice"] != v["advice"] {
		t.Fatalf("modulate with a role and no team = %v", v)
	}
}

// TestLinkTools: link_write writes one record as the caller into the link
// the environment names; link_read reads it back, filtered; the file is
// the reference's format (read back by the link package); mistakes are
// tool errors.
func TestLinkTools(t *testing.T) {
	log := filepath.Join(t.TempDir(), "link.jsonl")
	t.Setenv("LASERBRAIN_LINK_LOG", log)
	sup, _ := testSupervisor(t, map[string]string{agentrun.EnvRun: "run-l", agentrun.EnvAgent: "builder", agentrun.EnvFleet: "f"})
	cs := connect(t, sup)
	w, isErr := call(t, cs, "link_write", map[string]any{"text": "parser done, handing over the benchmark", "kind": "handoff", "goal": "ship the parser",
		"payload": map[string]any{"files": []string{"parser.go"}, "ratio": 1.5}})
	if isErr || w["agent"] != "builder" || w["kind"] != "handoff" || w["goal"] != "ship the parser" {
		t.Fatalf("link_write = %v", w)
	}
	call(t, cs, "link_write", map[string]any{"text": "a note"})
	recs, err := (&link.Link{Path: log}).Records()
	if err != nil || len(recs) != 2 || recs[0].Agent != "builder" || string(recs[0].Payload) != `{"files": ["parser.go"], "ratio": 1.5}` || recs[1].Kind != "note" {
		t.Fatalf("the link file = %+v, %v", recs, err)
	}
	r, isErr := call(t, cs, "link_read", map[string]any{"kind": "handoff"})
	got, _ := r["records"].([]any)
	if isErr || len(got) != 1 || got[0].(map[string]any)["text"] != "parser done, handing over the benchmark" || r["log"] != log {
		t.Fatalf("link_read kind=handoff = %v", r)
	}
	if r, _ := call(t, cs, "link_read", map[string]any{"agent": "someone-else"}); len(r["records"].([]any)) != 0 {
		t.Fatalf("link_read of another agent = %v", r)
	}
	if r, _ := call(t, cs, "link_read", map[string]any{"limit": 1}); len(r["records"].([]any)) != 1 || r["records"].([]any)[0].(map[string]any)["text"] != "a note" {
		t.Fatalf("link_read limit 1 = %v", r)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"link_write", map[string]any{"text": "  "}, "needs a text"},
		{"link_write", map[string]any{"text": "x", "kind": 3}, "kind must be a string"},
		{"link_read", map[string]any{"limit": 0}, "limit must be a whole number"},
	} {
		out, isErr := call(t, cs, c.tool, c.args)
		if msg, _ := out["error"].(string); !isErr || !strings.Contains(msg, c.want) {
			t.Errorf("%s %v = %v; want an error with %q", c.tool, c.args, out, c.want)
		}
	}
}

// TestSupervisionTool: an agent reads the supervisor's report for its own
// repository: the other agent on its ground, who would yield, and its own
// row — read-only: nothing is halted, nothing journaled.
func TestSupervisionTool(t *testing.T) {
	ctx := context.Background()
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "parser.go"), []byte("package parser"), 0o644); err != nil {
		t.Fatal(err)
	}
	sup, _ := testSupervisor(t, map[string]string{agentrun.EnvRun: "run-a", agentrun.EnvAgent: "alice", agentrun.EnvFleet: "f", "CLAUDE_PROJECT_DIR": repo})
	st, _ := sup.Fleet()
	for _, r := range []fleet.Run{{ID: "run-a", Agent: "alice", Fleet: "f", Dir: repo}, {ID: "run-b", Agent: "bob", Fleet: "f", Dir: repo}} {
		r.Created = time.Now()
		if err := st.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	check := func(run, goal string, d int) {
		if _, err := sup.Check(ctx, run, agentrun.CheckInput{StepInput: laserbrain.StepInput{Goal: goal, Progress: "advancing", Distance: laserbrain.Dist(d)}}); err != nil {
			t.Fatal(err)
		}
	}
	check("run-a", "refactor the parser module", 6)
	check("run-a", "refactor the parser module", 5)
	check("run-b", "the parser module refactor", 6)
	if _, err := st.AppendEvent(ctx, "run-b", fleet.RunEvent{Kind: fleet.KindTool, Name: "Edit", OK: laserbrain.OKTrue, Text: filepath.Join(repo, "parser.go")}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, sup)
	out, isErr := call(t, cs, "supervision", nil)
	if isErr {
		t.Fatalf("supervision = %v", out)
	}
	report := out["report"].(map[string]any)
	row, _ := out["row"].(map[string]any)
	route := report["route"].([]any)
	if out["you"] != "alice:run-a" || row == nil || row["steps"] != 2.0 || len(report["collisions"].([]any)) != 1 || len(route) != 1 ||
		route[0].(map[string]any)["yield"] != "bob:run-b" || len(report["halts"].([]any)) != 0 {
		t.Fatalf("supervision = %v", out)
	}
	if any, _ := st.AnyHaltInForce(ctx); any {
		t.Fatal("a read-only report halted an agent")
	}
	if recs, _ := st.JournalRecords(ctx, "f", 0); len(recs) != 0 {
		t.Fatalf("a read-only report journaled %d record(s)", len(recs))
	}
}

// TestSupervisionToolSharesTheReportsCollisions: the supervision tool, the
// fleet report and laserbrain supervise go through one collision model.
// On a repository with three sessions on one subject — two through the
// same lens, one through another — and the caller's run, the tool lists
// exactly the collisions the report lists as current: the two same-lens
// sessions (the other lens splits the work), on their subject, the lenses
// beside it.
func TestSupervisionToolSharesTheReportsCollisions(t *testing.T) {
	ctx := context.Background()
	repo := t.TempDir()
	t.Setenv("PONDER_OCA", "off")
	eng := ponder.New(repo, nil)
	eng.Now = func() time.Time { return time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC) }
	for _, lens := range []string{"security", "security", "performance"} {
		if _, err := eng.Start(ponder.StartOptions{Subject: "the checkout flow", Lens: lens, Passes: 4}); err != nil {
			t.Fatal(err)
		}
	}
	sup, home := testSupervisor(t, map[string]string{agentrun.EnvRun: "run-a", agentrun.EnvAgent: "alice", agentrun.EnvFleet: "f", "CLAUDE_PROJECT_DIR": repo})
	st, _ := sup.Fleet()
	if err := st.CreateRun(ctx, fleet.Run{ID: "run-a", Agent: "alice", Fleet: "f", Dir: repo, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := sup.Check(ctx, "run-a", agentrun.CheckInput{StepInput: laserbrain.StepInput{Goal: "speed up the build", Progress: "advancing", Distance: laserbrain.Dist(4)}}); err != nil {
		t.Fatal(err)
	}
	out, isErr := call(t, connect(t, sup), "supervision", nil)
	if isErr {
		t.Fatalf("supervision = %v", out)
	}
	var tool []string
	for _, c := range out["report"].(map[string]any)["collisions"].([]any) {
		m := c.(map[string]any)
		tool = append(tool, fmt.Sprint(m["agents"], m["grounds"], m["lenses"]))
	}
	runs, err := localstore.Open(localstore.Paths{Home: home, Config: filepath.Join(home, "config")})
	if err != nil {
		t.Fatal(err)
	}
	f, err := report.Load(ctx, report.Options{Repo: repo, Runs: runs, Fleet: st})
	if err != nil {
		t.Fatal(err)
	}
	var rep []string
	for _, c := range f.Collisions {
		if !c.Over {
			rep = append(rep, fmt.Sprint([]any{c.Agents[0], c.Agents[1]}, []any{c.Grounds[0], c.Grounds[1]}, []any{c.Lenses[0], c.Lenses[1]}))
		}
	}
	want := "[ponder:security-2026-08-24 ponder:security-2026-08-24-2] [the checkout flow the checkout flow] [security security]"
	if len(tool) != 1 || tool[0] != want || strings.Join(rep, "|") != strings.Join(tool, "|") {
		t.Fatalf("the tool lists %v, the report %v; want both [%s]", tool, rep, want)
	}
}
