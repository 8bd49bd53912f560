package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	ht "github.com/laserkit/laserkit/internal/htmlreport/htmltest"
	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/localstore"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/ponder/oca"
)

// fixture reads the recorded fleet in testdata/fleet.json.
func fixture(t testing.TB) *Fleet {
	t.Helper()
	data, err := os.ReadFile("testdata/fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	var f Fleet
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

// longAgent is an agent with n checks whose Φ walks a known curve, a
// goal-drift every 97th check.
func longAgent(name string, n int, start time.Time) Agent {
	a := Agent{Name: name, Run: name, Kind: "run", Ground: "tune the " + name + " cache", Created: start}
	for i := 1; i <= n; i++ {
		s := Step{N: i, Task: 1, At: start.Add(time.Duration(i) * time.Second), Reason: "advancing", Phi: math.Round(50*(0.2+0.15*math.Sin(float64(i)/40))) / 100}
		if i == 1 {
			s.Reason = "grounded"
		}
		if i%97 == 0 {
			s.Reason, s.Drifting, s.Phi = "goal-drift", true, 0.61
		}
		a.Steps = append(a.Steps, s)
	}
	return a
}

func page(t *testing.T, f *Fleet) *ht.Node {
	t.Helper()
	root, err := ht.Parse(Render(f))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestFleetPageFromFixture(t *testing.T) {
	f := fixture(t)
	f.Agents = append(f.Agents, longAgent("a4", 1500, f.Generated))
	root := page(t, f)

	for _, id := range []string{"overview", "drift", "collisions", "gate", "changes", "supervisor", "ponder", "sources"} {
		if root.ByID(id) == nil {
			t.Errorf("no section %q", id)
		}
	}
	stat := func(label string) string {
		n := root.Find(ht.Attr("data-stat", label))
		if n == nil {
			t.Fatalf("no %s stat", label)
		}
		return n.Find(ht.Class("v")).Text()
	}
	// a1 ends advancing, a2 stalled (held), a3 goal-drift (drifting), a4
	// ends on check 1500 (advancing): one agent drifting now.
	if stat("drifting now") != "1" || stat("agents") != "4" || stat("collisions") != "1" || stat("gate denials") != "3" || stat("journal") != "broken" {
		t.Errorf("stats: drifting %s agents %s collisions %s denials %s journal %s", stat("drifting now"), stat("agents"), stat("collisions"), stat("gate denials"), stat("journal"))
	}

	// Every agent has its Φ timeline, each check's mark where its Φ says.
	for _, a := range f.Agents {
		fig := root.ByID("phi-" + a.Name)
		if fig == nil {
			t.Fatalf("no timeline for %s", a.Name)
		}
		svg := fig.Child("svg")
		xa, ya, err := ht.Axes(svg)
		if err != nil {
			t.Fatal(err)
		}
		if th := svg.Find(ht.Class("threshold")); th == nil || th.Attr["data-y"] != "0.15" || !near(th.Float("y1"), ya.At(0.15)) {
			t.Errorf("%s: no self-report floor at 0.15", a.Name)
		}
		if b := svg.Find(ht.Class("band")); b == nil || b.Attr["data-from"] != "0.35" || b.Attr["data-to"] != "1" {
			t.Errorf("%s: no goal-drift zone from 0.35", a.Name)
		}
		byN := map[string]Step{}
		for _, s := range a.Steps {
			byN[strconv.Itoa(s.N)] = s
		}
		marks := svg.All(ht.Class("mark"))
		for _, m := range marks {
			s, ok := byN[m.Attr["data-x"]]
			if !ok {
				t.Fatalf("%s: a mark on check %s that does not exist", a.Name, m.Attr["data-x"])
			}
			want := verdictClass(s.Reason)
			if s.Drifting {
				want += "!"
			}
			x, y, _ := m.Translate()
			if m.Attr["data-mark"] != want || !near(x, xa.At(float64(s.N))) || !near(y, ya.At(s.Phi)) {
				t.Errorf("%s check %d (%s, Φ %v): mark %s at (%v,%v), want (%v,%v)", a.Name, s.N, s.Reason, s.Phi, m.Attr["data-mark"], x, y, xa.At(float64(s.N)), ya.At(s.Phi))
			}
		}
		if a.Name == "a1" {
			// grounded, self-report, goal-drift: the advancing checks are
			// the line alone.
			if len(marks) != 3 || marks[2].Attr["data-mark"] != "goal-drift!" || marks[2].Attr["data-shape"] != "square" {
				t.Errorf("a1 marks: %d", len(marks))
			}
			tb := ht.ReadTable(fig.Find(ht.Tag("table")))
			if len(tb.Rows) != 6 || tb.Rows[4][1] != "0.56" || tb.Rows[4][2] != "goal-drift, interrupting" {
				t.Errorf("a1 table %v", tb.Rows)
			}
		}
		if a.Name == "a4" {
			if fig.Find(ht.Attr("data-downsampled", "true")) == nil || svg.Find(ht.Class("dsnote")) == nil {
				t.Error("a4's 1,500 checks are not said to be downsampled")
			}
			drifts := 0
			for _, m := range marks {
				if m.Attr["data-mark"] == "goal-drift!" {
					drifts++
				}
			}
			// 15 goal-drifts (every 97th of 1,500), at most one per bucket
			// of 12–13 checks: none may be lost.
			if drifts != 1500/97 {
				t.Errorf("a4 shows %d goal-drifts, want %d", drifts, 1500/97)
			}
		}
	}
	// The drifting agent is drawn first.
	if figs := root.ByID("drift").All(ht.Attr("data-plot", "timeline")); len(figs) == 0 || figs[0].Attr["id"] != "phi-a3" {
		t.Error("the agent drifting now is not first")
	}

	// The collision: an edge from the yielding a2 to a1, solid (halted),
	// as thick as the overlap, with the file evidence in the table.
	rel := root.ByID("collision-graph")
	e := rel.Find(ht.Class("edge-group"))
	if e == nil || e.Attr["data-from"] != "a2" || e.Attr["data-to"] != "a1" || e.Attr["data-weight"] != "0.8" || e.Find(ht.Class("arrow")) == nil {
		t.Fatalf("collision edge %v", e)
	}
	if e.Find(ht.Class("edge")).Attr["stroke-dasharray"] != "" || e.Find(ht.Class("edge-label")).Text() != "0.8 · halted" {
		t.Error("a halted collision is not drawn solid with its label")
	}
	for _, n := range rel.All(ht.Class("node")) {
		if n.Attr["data-node"] == "a2" && n.Find(ht.Class("mark")).Attr["data-shape"] != "cross" {
			t.Error("the halted agent is not drawn as a cross")
		}
	}
	ct := ht.ReadTable(rel.Find(ht.Tag("table")))
	if len(ct.Rows) != 1 || ct.Rows[0][ct.Col("first seen")] != "2026-08-24 15:10:00Z" || ct.Rows[0][ct.Col("shared files")] != "2" ||
		ct.Rows[0][ct.Col("file evidence")] != "src/parser.py, tests/test_parser.py" || !strings.HasPrefix(ct.Rows[0][ct.Col("outcome")], "halted a2 (a1 keeps the ground)") {
		t.Errorf("collision table %v", ct.Rows)
	}

	// The gate: each label's bar counts what the fixture holds, tallied
	// here independently.
	want := map[string]map[string]int{}
	for _, g := range f.Gate {
		ls := g.Labels
		if len(ls) == 0 {
			ls = []string{"(no label recorded) " + g.Tool}
		}
		for _, l := range ls {
			if want[l] == nil {
				want[l] = map[string]int{}
			}
			want[l][g.Decision.String()]++
		}
	}
	bars := root.ByID("gate-labels").All(ht.Class("bar"))
	if len(bars) != len(want) {
		t.Fatalf("%d gate bars, want %d", len(bars), len(want))
	}
	for _, b := range bars {
		got := map[string]int{}
		for _, s := range b.All(ht.Class("seg")) {
			got[s.Attr["data-stack"]], _ = strconv.Atoi(s.Attr["data-value"])
		}
		if fmt.Sprint(got) != fmt.Sprint(want[b.Attr["data-category"]]) {
			t.Errorf("gate bar %s: %v, want %v", b.Attr["data-category"], got, want[b.Attr["data-category"]])
		}
	}

	// The journal's verdict is written, not only coloured.
	sup := root.ByID("supervisor")
	if n := sup.Find(ht.Attr("data-note", "warning")); n == nil || !strings.Contains(n.Text(), "record 7 of 12") {
		t.Error("the broken journal is not reported with its first bad record")
	}
	// ponder's session is drawn by ponder/report inside the fleet page.
	if root.ByID("ponder-api-2026-08-24-convergence") == nil || root.ByID("ponder-api-2026-08-24-forecast") == nil {
		t.Error("the ponder session's plots are missing")
	}
	// Sources say what is pending.
	st := ht.ReadTable(root.ByID("sources").Find(ht.Tag("table")))
	if len(st.Rows) != 2 || st.Rows[1][1] != "not available yet" {
		t.Errorf("sources %v", st.Rows)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 0.11 }

// steps runs states through a real laserbrain run.
func steps(t testing.TB, r *laserbrain.Run, states ...laserbrain.StepInput) {
	t.Helper()
	for _, s := range states {
		if _, err := r.Step(s); err != nil {
			t.Fatal(err)
		}
	}
}

func st(goal, progress string, d int) laserbrain.StepInput {
	return laserbrain.StepInput{Goal: goal, Progress: progress, Distance: laserbrain.Dist(d)}
}

func TestAgentFromRunsKeepsTheInstrumentsVerdicts(t *testing.T) {
	clock := time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Minute); return clock }
	t1 := laserbrain.NewRun(laserbrain.RunOptions{ID: "r", Now: now})
	steps(t, t1, st("write a JSON parser in Python", "advancing", 8), st("write a JSON parser in Python", "advancing", 7),
		st("restyle the landing page", "advancing", 7))
	t2 := laserbrain.NewRun(laserbrain.RunOptions{ID: "r.2", Now: now})
	steps(t, t2, st("document the deploy scripts", "advancing", 3))
	a := AgentFromRuns("a1", "r", []*laserbrain.Run{t1, t2})
	if len(a.Steps) != 4 || a.Ground != "document the deploy scripts" || a.Created != a.Steps[0].At {
		t.Fatalf("agent %+v", a)
	}
	hist := append(t1.Steps(), t2.Steps()...)
	for i, s := range a.Steps {
		h := hist[i]
		if s.N != i+1 || s.Reason != h.Reason || s.Phi != h.Phi || s.Drifting != h.Drifting || !s.At.Equal(h.At) || s.Goal != h.Goal {
			t.Errorf("step %d: %+v, history %+v", i+1, s, h)
		}
	}
	if a.Steps[2].Reason != "goal-drift" || !a.Steps[2].Drifting || a.Steps[3].Task != 2 || a.Steps[3].Reason != "grounded" {
		t.Errorf("steps %+v", a.Steps)
	}
}

func TestFindCollisionsAndOutcomes(t *testing.T) {
	base := time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC)
	mk := func(name, ground string, at time.Time, files ...string) Agent {
		return Agent{Name: name, Ground: ground, Footprint: files, Steps: []Step{{N: 1, At: at, Reason: "grounded"}, {N: 2, At: at.Add(time.Hour), Reason: "advancing"}}}
	}
	agents := []Agent{
		mk("a", "write a JSON parser in Python", base, "README.md", "src/parser.py"),
		mk("b", "write a fast JSON parser in Python", base.Add(10*time.Minute), "src/parser.py", "src/z.py"),
		mk("c", "document the deploy scripts", base, "src/parser.py"),
	}
	cols := FindCollisions(agents)
	// {write, json, parser, python} against {write, fast, json, parser,
	// python}: 4 shared of 5, 0.8 ≥ collision_min 0.6; c shares nothing.
	if len(cols) != 1 || cols[0].Agents != [2]string{"a", "b"} || cols[0].Overlap != 0.8 {
		t.Fatalf("collisions %+v", cols)
	}
	if !cols[0].FirstSeen.Equal(base.Add(10*time.Minute)) || strings.Join(cols[0].SharedFiles, ",") != "src/parser.py" {
		t.Errorf("first seen %v, shared %v", cols[0].FirstSeen, cols[0].SharedFiles)
	}
	// A halt from before the collision is not its outcome; an escalation
	// of the pair is.
	Outcomes(cols, []Halt{{Agent: "b", At: base}}, []Escalation{{Who: "b+a", Why: "no basis to choose", At: base.Add(time.Hour)}})
	if cols[0].Outcome.Kind != "escalated" {
		t.Errorf("outcome %+v", cols[0].Outcome)
	}
	Outcomes(cols, []Halt{{Agent: "b", At: base.Add(20 * time.Minute), Reason: "yield"}}, nil)
	if o := cols[0].Outcome; o.Kind != "halted" || o.Yield != "b" || o.Keep != "a" {
		t.Errorf("outcome %+v", o)
	}
}

func TestGrammarThresholds(t *testing.T) {
	th, err := GrammarThresholds()
	if err != nil {
		t.Fatal(err)
	}
	// grammar 1.21.0: self_report_min 0.15, goal_min 0.3, w_goal 0.5,
	// collision_min 0.6, weights summing to 1.
	if th.SelfReportFloor != 0.15 || th.GoalMin != 0.3 || math.Abs(th.GoalDriftPhi-0.35) > 1e-12 || th.CollisionMin != 0.6 || th.PhiMax != 1 {
		t.Errorf("%+v", th)
	}
}

func TestLoadOneRunFromTheStore(t *testing.T) {
	dir := t.TempDir()
	s, err := localstore.Open(localstore.Paths{Home: dir, Config: dir})
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.OpenRun(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	steps(t, h.Run(), st("ship the sky billboard", "advancing", 5), st("rewrite the about page", "advancing", 4))
	if err := h.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.Close()
	f, err := Load(context.Background(), Options{Run: "r1", Runs: s})
	if err != nil {
		t.Fatal(err)
	}
	if f.Scope != "run" || len(f.Agents) != 1 || len(f.Agents[0].Steps) != 2 || f.Agents[0].Steps[1].Reason != "goal-drift" || f.Journal.State != JournalUnavailable {
		t.Fatalf("%+v", f)
	}
	if _, err := Load(context.Background(), Options{Run: "nope", Runs: s}); !errors.Is(err, laserbrain.ErrNoRun) {
		t.Errorf("a missing run: %v", err)
	}
}

func TestLoadFleetReadsPonderSessions(t *testing.T) {
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := ponder.New(repo, oca.New(oca.Config{Getenv: func(string) string { return "off" }}))
	res, err := e.Start(ponder.StartOptions{Subject: "the parser architecture", Passes: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Units(res.Slug, ponder.UnitsOptions{Scan: "."}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LASERBRAIN_FLEET", "fleet-x")
	f, err := Load(context.Background(), Options{Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	if f.Scope != "fleet" || f.ID != "fleet-x" || len(f.Sessions) != 1 || f.Sessions[0].Subject != "the parser architecture" {
		t.Fatalf("%+v", f)
	}
	var ie *InputError
	if _, err := Load(context.Background(), Options{Repo: filepath.Join(repo, "missing")}); !errors.As(err, &ie) {
		t.Errorf("a missing directory: %v", err)
	}
}
