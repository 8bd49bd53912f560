package report

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
)

// TestReportReadsAsTheSupervisor: two ponder sessions on the parser and two
// agent runs on one JSON parser, each pair on one job; the real supervisor
// takes a round (and halts the yielding one of each pair). The fleet report
// read afterwards is held to that round, the oracle: every agent of the
// round under the same name (ponder:<slug>, <agent>:<run id>) with as many
// checks, each ponder session with the same last verdict and Φ, the same
// collisions with the same shared files (a file only a shell command named
// included), and each halt attached to its collision and its agent.
func TestReportReadsAsTheSupervisor(t *testing.T) {
	ctx := context.Background()
	t.Setenv("LASERBRAIN_FLEET", "f-report")
	repo, home := t.TempDir(), t.TempDir()
	for _, f := range []string{"parser/lexer.go", "parser/parse.go", "parser/ast.go", "store/db.go"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, f), []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Two sessions on one subject in other words: A decided two passes, B one.
	eng := ponder.New(repo, nil)
	session := func(subject, units string, passes int) {
		st, err := eng.Start(ponder.StartOptions{Subject: subject, Passes: 4})
		must(err)
		_, err = eng.Units(st.Slug, ponder.UnitsOptions{From: []byte(units), FromName: "-"})
		must(err)
		for k := range passes {
			if k > 0 {
				_, err = eng.Predict(st.Slug, 0.1, nil)
				must(err)
			}
			arg := func(s string) ponder.VoiceArg { c := 0.8; return ponder.VoiceArg{Argument: &s, Confidence: &c} }
			_, err = eng.Deliberate(st.Slug, &ponder.DeliberationInput{Voices: ponder.Voices{Skeptic: arg("a"), Builder: arg("b"), Dreamer: arg("c"), Empath: arg("d")}}, false)
			must(err)
			if k == 0 {
				_, err = eng.Grade(st.Slug, []string{"u0001", "u0002"}, nil)
				must(err)
			}
			_, err = eng.Judge(st.Slug)
			must(err)
			_, err = eng.Decide(st.Slug, "continue")
			must(err)
		}
	}
	session("the parser architecture", "parser/lexer.go\nparser/parse.go\n", 2)
	session("architecture of the parser", "parser/parse.go\nstore/db.go\n", 1)

	// Two agent runs on one parser: a1 writes parse.go and reads lexer.go
	// with a shell command, a2 writes lexer.go.
	fl, err := fleet.OpenLocal(filepath.Join(home, "fleet"))
	must(err)
	runs, err := localstore.Open(localstore.Paths{Home: home, Config: home})
	must(err)
	defer runs.Close()
	agent := func(name, ground string, checks int, tool, text string) {
		env := map[string]string{agentrun.EnvRun: "run-" + name, agentrun.EnvAgent: name, agentrun.EnvFleet: os.Getenv("LASERBRAIN_FLEET")}
		sup := &agentrun.Tracker{Getenv: func(k string) string { return env[k] },
			Stores: agentrun.StoreFuncs{Fleet: func() (fleet.Store, error) { return fl, nil }, Runs: func() (laserbrain.Store, error) { return runs, nil }}.Open}
		_, err := sup.Open(ctx, sup.Caller("", repo))
		must(err)
		for i := range checks {
			_, err := sup.Check(ctx, "run-"+name, agentrun.CheckInput{StepInput: laserbrain.StepInput{Goal: ground, Progress: "advancing", Distance: laserbrain.Dist(8 - i)}})
			must(err)
		}
		ok := true
		_, _, err = sup.Observe(ctx, "run-"+name, fleet.RunEvent{ID: name + tool, At: time.Now(), Kind: fleet.KindTool, Name: tool, OK: laserbrain.OKOf(ok), Text: text},
			laserbrain.Event{Kind: laserbrain.EventTool, Name: tool, OK: laserbrain.OKTrue, Result: "ok"})
		must(err)
	}
	agent("a1", "write a JSON parser in Python", 3, "Bash", "cat parser/lexer.go")
	agent("a2", "write a fast JSON parser in Python", 2, "Write", filepath.Join(repo, "parser", "lexer.go"))

	sup, err := supervise.Open(ctx, supervise.Options{Repo: repo, Fleet: fl, Runs: runs, EscalateAfter: -1})
	must(err)
	rd, err := sup.Round(ctx)
	must(err)
	if len(rd.Agents) != 4 || len(rd.Collisions) != 2 || len(rd.Halts) != 2 {
		t.Fatalf("the supervisor's round: %d agents, %d collisions, %d halts; want 4, 2, 2", len(rd.Agents), len(rd.Collisions), len(rd.Halts))
	}

	f, err := Load(ctx, Options{Repo: repo, Fleet: fl, Runs: runs})
	must(err)
	byName := map[string]*Agent{}
	for i := range f.Agents {
		byName[f.Agents[i].Name] = &f.Agents[i]
	}
	if len(f.Agents) != len(rd.Agents) {
		t.Errorf("the report has %d agents, the supervisor %d", len(f.Agents), len(rd.Agents))
	}
	for _, row := range rd.Agents {
		a := byName[row.Agent]
		if a == nil {
			t.Errorf("the report has no agent %s", row.Agent)
			continue
		}
		if len(a.Steps) != row.Steps || a.Kind != row.Kind || a.Ground != row.Ground {
			t.Errorf("%s: %d checks, kind %s, ground %q; the supervisor: %d, %s, %q", row.Agent, len(a.Steps), a.Kind, a.Ground, row.Steps, row.Kind, row.Ground)
		}
		if row.Kind == supervise.KindPonder && (a.Last().Reason != *row.Verdict || a.Last().Phi != *row.Phi) {
			t.Errorf("%s: last %s Φ %v; the supervisor: %s Φ %v", row.Agent, a.Last().Reason, a.Last().Phi, *row.Verdict, *row.Phi)
		}
	}
	// The page names each agent once: a run's id is in its name already.
	if page := string(Render(f)); !strings.Contains(page, "a1:run-a1") || strings.Contains(page, "run run-a1") {
		t.Errorf("the page does not name a1:run-a1 once")
	}
	pairs := func(names [2]string) string {
		s := names[:]
		s = slices.Clone(s)
		slices.Sort(s)
		return strings.Join(s, " + ")
	}
	want := map[string]supervise.CollisionRow{}
	for _, c := range rd.Collisions {
		want[pairs(c.Agents)] = c
	}
	if len(f.Collisions) != len(rd.Collisions) {
		t.Errorf("the report has %d collisions, the supervisor %d", len(f.Collisions), len(rd.Collisions))
	}
	for _, c := range f.Collisions {
		w, ok := want[pairs(c.Agents)]
		if !ok {
			t.Errorf("collision %s is not the supervisor's", pairs(c.Agents))
			continue
		}
		if strings.Join(c.SharedFiles, ",") != strings.Join(w.SharedFiles, ",") {
			t.Errorf("collision %s: shared files %v, the supervisor's %v", pairs(c.Agents), c.SharedFiles, w.SharedFiles)
		}
	}
	for _, h := range rd.Halts {
		found := false
		for _, c := range f.Collisions {
			if c.Agents[0] == h.Agent || c.Agents[1] == h.Agent {
				found = true
				if c.Outcome.Kind != "halted" || c.Outcome.Yield != h.Agent {
					t.Errorf("collision %s: outcome %+v, the supervisor halted %s", pairs(c.Agents), c.Outcome, h.Agent)
				}
			}
		}
		if !found {
			t.Errorf("the halted %s is in no collision of the report", h.Agent)
		}
		if a := byName[h.Agent]; a == nil || a.Halt == nil || a.Halt.Reason != h.Reason {
			t.Errorf("agent %s does not show its halt", h.Agent)
		}
	}
}
