package supervise

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/fleet"
)

func f64(v float64) *float64 { return &v }

// TestPassStep: the mapping, case by case, derived by hand from its
// definition (ponder/SPEC.md §10).
func TestPassStep(t *testing.T) {
	pass1 := ponder.PassFacts{Pass: 1, Graded: 4, Counted: 4}
	busy := ponder.PassFacts{Pass: 2, Graded: 4, Counted: 4, Novelty: f64(0.2), Churn: f64(0.1), Thrash: f64(0)}
	quiet := ponder.PassFacts{Pass: 3, Graded: 4, Counted: 4, Novelty: f64(0), Churn: f64(0), Thrash: f64(0), Quiet: true}
	gap := ponder.PassFacts{Pass: 2, Graded: 1, Counted: 4, Novelty: f64(0), Churn: f64(0), Thrash: f64(0)}
	thrash := ponder.PassFacts{Pass: 3, Graded: 4, Counted: 4, Novelty: f64(0), Churn: f64(0.5), Thrash: f64(1)}
	empty := ponder.PassFacts{Pass: 2, Novelty: f64(0), Churn: f64(0), Thrash: f64(0)}
	cases := []struct {
		name     string
		passes   []ponder.PassFacts
		progress string
		distance int
	}{
		{"pass 1 is the survey: unsettled 1", []ponder.PassFacts{pass1}, "advancing", 10},           // 2 + ⌈8⌉
		{"novelty 0.2 + churn 0.1", []ponder.PassFacts{pass1, busy}, "advancing", 5},                // 2 + ⌈2.4⌉
		{"coverage 1/4: gap 0.75", []ponder.PassFacts{pass1, gap}, "advancing", 8},                  // 2 + ⌈6⌉
		{"one quiet pass", []ponder.PassFacts{pass1, busy, quiet}, "advancing", 1},                  //
		{"two quiet passes: Rule 6", []ponder.PassFacts{pass1, busy, quiet, quiet}, "advancing", 0}, //
		{"thrash 1 > 0.25", []ponder.PassFacts{pass1, busy, thrash}, "circling", 6},                 // 2 + ⌈4⌉
		{"nothing counted: gap 1", []ponder.PassFacts{pass1, empty}, "advancing", 10},               // 2 + ⌈8⌉
		{"quiet after a thrashing pass", []ponder.PassFacts{pass1, thrash, quiet}, "advancing", 1},  //
	}
	for _, c := range cases {
		p, d := PassStep(c.passes, len(c.passes)-1)
		if p != c.progress || d != c.distance {
			t.Errorf("%s: %s d%d; want %s d%d", c.name, p, d, c.progress, c.distance)
		}
	}
}

// repo is a repository directory with some files and a ponder engine on it.
type repo struct {
	t    *testing.T
	dir  string
	eng  *ponder.Engine
	st   *fleet.Local
	fid  string
	sup  *Supervisor
	opts Options
}

func newRepo(t *testing.T, files ...string) *repo {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := fleet.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &repo{t: t, dir: dir, eng: ponder.New(dir, nil), st: st, fid: "fleet-" + filepath.Base(dir)}
	r.opts = Options{Repo: dir, FleetID: r.fid, Fleet: st}
	return r
}

func (r *repo) must(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}

func voices() *ponder.DeliberationInput {
	a := func(s string) ponder.VoiceArg { c := 0.8; return ponder.VoiceArg{Argument: &s, Confidence: &c} }
	return &ponder.DeliberationInput{Voices: ponder.Voices{Skeptic: a("x"), Builder: a("y"), Dreamer: a("z"), Empath: a("w")}}
}

// session starts a session on units and runs passes: pass k's deltas and
// grades, judged and continued (the last one stopped when stop is set).
func (r *repo) session(subject string, units []string, passes []func(e *ponder.Engine, slug string), stop bool) string {
	r.t.Helper()
	st, err := r.eng.Start(ponder.StartOptions{Subject: subject, Passes: 4})
	r.must(err)
	_, err = r.eng.Units(st.Slug, ponder.UnitsOptions{From: []byte(strings.Join(units, "\n")), FromName: "-"})
	r.must(err)
	for k, pass := range passes {
		if k > 0 {
			_, err = r.eng.Predict(st.Slug, 0.1, nil)
			r.must(err)
		}
		_, err = r.eng.Deliberate(st.Slug, voices(), false)
		r.must(err)
		if pass != nil {
			pass(r.eng, st.Slug)
		}
		_, err = r.eng.Judge(st.Slug)
		r.must(err)
		d := "continue"
		if stop && k == len(passes)-1 {
			d = "stop"
		}
		_, err = r.eng.Decide(st.Slug, d)
		r.must(err)
	}
	return st.Slug
}

func delta(t *testing.T, lines ...string) func(e *ponder.Engine, slug string) {
	return func(e *ponder.Engine, slug string) {
		if _, err := e.Delta(slug, []byte(strings.Join(lines, "\n"))); err != nil {
			t.Fatal(err)
		}
	}
}

func grade(t *testing.T, units ...string) func(e *ponder.Engine, slug string) {
	return func(e *ponder.Engine, slug string) {
		if _, err := e.Grade(slug, units, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func both(fs ...func(e *ponder.Engine, slug string)) func(e *ponder.Engine, slug string) {
	return func(e *ponder.Engine, slug string) {
		for _, f := range fs {
			f(e, slug)
		}
	}
}

// checkingRun registers run r1 of agent claude in the repository's fleet,
// its steps in runs, and returns what takes one more check on goal (the
// run's check count kept with it).
func (r *repo) checkingRun(runs laserbrain.Store) (step func(goal string)) {
	r.t.Helper()
	ctx := context.Background()
	r.must(r.st.CreateRun(ctx, fleet.Run{ID: "r1", Agent: "claude", Fleet: r.fid, Dir: r.dir, Created: time.Now(), Task: "r1", Tasks: 1}))
	checks := 0
	return func(goal string) {
		h, err := runs.OpenRun(ctx, "r1")
		r.must(err)
		_, err = h.Run().Step(laserbrain.StepInput{Goal: goal, Progress: "advancing", Distance: laserbrain.Dist(5)})
		r.must(err)
		r.must(h.Save(ctx))
		h.Close()
		checks++
		_, err = r.st.UpdateRun(ctx, "r1", func(x *fleet.Run) error { x.Checks = checks; return nil })
		r.must(err)
	}
}

func (r *repo) round() *Round {
	r.t.Helper()
	if r.sup == nil {
		s, err := Open(context.Background(), r.opts)
		r.must(err)
		r.sup = s
	}
	rd, err := r.sup.Round(context.Background())
	r.must(err)
	return rd
}

func agentRow(t *testing.T, rd *Round, name string) AgentRow {
	t.Helper()
	for _, a := range rd.Agents {
		if a.Agent == name {
			return a
		}
	}
	t.Fatalf("no agent %s in round %d: %+v", name, rd.Round, rd.Agents)
	return AgentRow{}
}

// TestSessionsRead: a session converging by Rule 6 reads advancing down to
// distance 0 (and is finished); a thrashing one reads circling; a stuck one
// — coverage stuck at half, pass after pass — reads stalled.
func TestSessionsRead(t *testing.T) {
	r := newRepo(t, "a.go", "b.go", "c.go", "d.go")
	units := []string{"a.go", "b.go", "c.go", "d.go"}
	add := func(unit, text string) string {
		return fmt.Sprintf(`{"voice":"dreamer","op":"add","unitId":%q,"severity":"must","confidence":0.9,"text":%q}`, unit, text)
	}
	converging := r.session("converging audit", units, []func(*ponder.Engine, string){
		both(delta(t, add("u0001", "a leaks"), add("u0002", "b is slow")), grade(t, "u0003", "u0004")),
		delta(t, `{"voice":"skeptic","op":"delete","findingId":"f0001","reason":"falsified"}`),
		nil, nil,
	}, true)
	thrashing := r.session("thrashing audit", units, []func(*ponder.Engine, string){
		both(delta(t, add("u0001", "a leaks"), add("u0002", "b is slow")), grade(t, "u0003", "u0004")),
		delta(t, `{"voice":"builder","op":"edit","findingId":"f0001","text":"a leaks memory"}`),
		delta(t, `{"voice":"builder","op":"edit","findingId":"f0001","text":"a leaks"}`),
	}, false)
	stuck := r.session("stuck audit", units, []func(*ponder.Engine, string){grade(t, "u0001", "u0002"), nil, nil, nil, nil, nil}, false)
	rd := r.round()

	c := agentRow(t, rd, fleet.PonderAgent(converging))
	if c.Steps != 5 || *c.Verdict != "advancing" || *c.Distance != 0 || c.Drifting || c.Status != StatusFinished || c.Progress != "advancing" {
		t.Errorf("converging session: %+v (verdict %v, distance %v)", c, *c.Verdict, *c.Distance)
	}
	th := agentRow(t, rd, fleet.PonderAgent(thrashing))
	if *th.Verdict != "self-report:circling" || th.Progress != "circling" || th.Status != StatusActive {
		t.Errorf("thrashing session: %+v (verdict %v)", th, *th.Verdict)
	}
	s := agentRow(t, rd, fleet.PonderAgent(stuck))
	if *s.Verdict != "stalled" || *s.Distance != 6 || s.Steps != 7 {
		t.Errorf("stuck session: %+v (verdict %v, distance %v)", s, *s.Verdict, *s.Distance)
	}
	// Footprints are the sessions' units; all three share them, but none
	// shares a ground, so no collision is reported.
	if c.Files != 4 || len(rd.Collisions) != 0 {
		t.Errorf("files %d, collisions %+v", c.Files, rd.Collisions)
	}
	// The judge's verdicts are check events: the converging session's
	// "rule6" check failed three times, then passed, so it is not
	// unfalsified; nothing else is caught either.
	if len(c.Catches) != 0 || len(th.Catches) != 0 {
		t.Errorf("catches: %v %v", c.Catches, th.Catches)
	}
	// A second round with nothing new takes no new step.
	rd2 := r.round()
	if agentRow(t, rd2, fleet.PonderAgent(stuck)).Steps != 7 {
		t.Errorf("a quiet round took steps")
	}
}

// TestCollidingSessions: two sessions on the same subject in different
// words collide, with their shared files as evidence; the third does not;
// the one with fewer decided passes yields and is halted, once, journaled.
func TestCollidingSessions(t *testing.T) {
	r := newRepo(t, "parser/lexer.go", "parser/parse.go", "parser/ast.go", "store/db.go", "store/cache.go")
	parser := []string{"parser/lexer.go", "parser/parse.go", "parser/ast.go"}
	a := r.session("the parser architecture", parser, []func(*ponder.Engine, string){grade(t, "u0001", "u0002", "u0003"), nil}, false)
	b := r.session("architecture of the parser", append([]string{"store/db.go"}, parser[:2]...), []func(*ponder.Engine, string){grade(t, "u0001", "u0002", "u0003")}, false)
	c := r.session("storage error handling", []string{"store/db.go", "store/cache.go"}, []func(*ponder.Engine, string){grade(t, "u0001", "u0002")}, false)
	rd := r.round()
	A, B, C := fleet.PonderAgent(a), fleet.PonderAgent(b), fleet.PonderAgent(c)
	if len(rd.Collisions) != 1 {
		t.Fatalf("collisions = %+v", rd.Collisions)
	}
	col := rd.Collisions[0]
	pair := []string{col.Agents[0], col.Agents[1]}
	slices.Sort(pair)
	want := []string{A, B}
	slices.Sort(want)
	if !slices.Equal(pair, want) || col.Overlap != 1 || strings.Join(col.SharedFiles, " ") != "parser/lexer.go parser/parse.go" || col.FileOverlap != 0.5 {
		t.Fatalf("collision = %+v; want %v, overlap 1, shared parser/lexer.go and parser/parse.go (2 of 4)", col, want)
	}
	// a has more steps (two decided passes against one): b yields.
	if len(rd.Route) != 1 || rd.Route[0].Keep != A || rd.Route[0].Yield != B {
		t.Fatalf("route = %+v", rd.Route)
	}
	if len(rd.Halts) != 1 || rd.Halts[0].Agent != B {
		t.Fatalf("halts = %+v", rd.Halts)
	}
	if h, ok, _ := r.st.ActiveHalt(context.Background(), r.fid, B); !ok || !strings.Contains(h.Reason, "shares a ground with "+A) {
		t.Fatalf("the halt is not in the store: %+v", h)
	}
	if agentRow(t, rd, B).Status != StatusHalted || agentRow(t, rd, C).Status != StatusActive {
		t.Fatalf("statuses: %+v", rd.Agents)
	}
	rd = r.round()
	if len(rd.Halts) != 0 {
		t.Fatalf("the next round halted again: %+v", rd.Halts)
	}
	// A person's release outranks the route: the same collision does not
	// halt the agent again, and the release is journaled.
	if _, err := Release(context.Background(), r.st, r.fid, b, "ana", "they split the work", time.Now()); err != nil {
		t.Fatal(err)
	}
	rd = r.round()
	if len(rd.Halts) != 0 || agentRow(t, rd, B).Status != StatusActive {
		t.Fatalf("halted again after a release: %+v", rd.Halts)
	}
	recs, _ := r.st.JournalRecords(context.Background(), r.fid, 0)
	kinds := map[string]int{}
	for _, rec := range recs {
		kinds[rec.Kind]++
	}
	head, _ := r.st.JournalHead(context.Background(), r.fid)
	if _, p := fleet.VerifyJournal(recs, head); p != nil || kinds[fleet.JournalHalt] != 1 || kinds[fleet.JournalRelease] != 1 {
		t.Fatalf("journal: %v, %v", kinds, p)
	}
}

// TestNoBasisEscalates: two sessions tied on every count are not routed;
// the question goes to a person once, with the JSON the command reads, and
// the person's answer naming one halts it.
func TestNoBasisEscalates(t *testing.T) {
	r := newRepo(t, "a.go", "b.go")
	a := r.session("the parser architecture", []string{"a.go"}, []func(*ponder.Engine, string){grade(t, "u0001")}, false)
	b := r.session("architecture of the parser", []string{"b.go"}, []func(*ponder.Engine, string){grade(t, "u0001")}, false)
	var asked []Escalation
	r.opts.OnEscalate = func(ctx context.Context, e Escalation) Resolution {
		asked = append(asked, e)
		zero := 0
		return Resolution{Exit: &zero, Decision: fleet.PonderAgent(b)}
	}
	rd := r.round()
	if len(rd.Route) != 1 || rd.Route[0].Keep != "" || !strings.HasPrefix(rd.Route[0].Why, "no basis to choose") {
		t.Fatalf("route = %+v", rd.Route)
	}
	if len(asked) != 1 || asked[0].Kind != EscalateCollision || asked[0].Route == nil || len(rd.Escalations) != 1 || rd.Escalations[0].Halted != fleet.PonderAgent(b) {
		t.Fatalf("asked %+v, escalations %+v", asked, rd.Escalations)
	}
	if agentRow(t, rd, fleet.PonderAgent(b)).Status != StatusHalted || agentRow(t, rd, fleet.PonderAgent(a)).Status != StatusActive {
		t.Fatalf("agents: %+v", rd.Agents)
	}
	r.round()
	if len(asked) != 1 {
		t.Fatalf("asked again: %d", len(asked))
	}
}

// TestResumeAfterCrash: a supervisor that died after journaling a question
// and before its answer asks it again (once, marked redelivered) when the
// next one opens, and numbers its rounds on from the journal.
func TestResumeAfterCrash(t *testing.T) {
	r := newRepo(t, "a.go", "b.go")
	r.session("the parser architecture", []string{"a.go"}, []func(*ponder.Engine, string){grade(t, "u0001")}, false)
	r.session("architecture of the parser", []string{"b.go"}, []func(*ponder.Engine, string){grade(t, "u0001")}, false)
	crash := fmt.Errorf("killed")
	r.opts.OnEscalate = func(ctx context.Context, e Escalation) Resolution { panic(crash) }
	func() {
		defer func() { _ = recover() }()
		r.round()
	}()
	var asked []Escalation
	r.opts.OnEscalate = func(ctx context.Context, e Escalation) Resolution {
		asked = append(asked, e)
		zero := 0
		return Resolution{Exit: &zero}
	}
	r.sup = nil
	rd := r.round()
	if rd.Round != 2 || len(asked) != 1 || !asked[0].Redelivered || len(rd.Escalations) != 1 || *rd.Escalations[0].Exit != 0 {
		t.Fatalf("round %d, asked %+v, escalations %+v", rd.Round, asked, rd.Escalations)
	}
	r.sup = nil
	rd = r.round()
	if len(asked) != 1 || rd.Round != 3 {
		t.Fatalf("a third supervisor asked again: %d (round %d)", len(asked), rd.Round)
	}
	recs, _ := r.st.JournalRecords(context.Background(), r.fid, 0)
	head, _ := r.st.JournalHead(context.Background(), r.fid)
	if _, p := fleet.VerifyJournal(recs, head); p != nil {
		t.Fatal(p)
	}
	kinds := map[string]int{}
	for _, rec := range recs {
		kinds[rec.Kind]++
		if rec.Kind == fleet.JournalAnswer {
			var a struct {
				Exit *int `json:"exit"`
			}
			if err := json.Unmarshal(rec.Data, &a); err != nil {
				t.Fatal(err)
			}
			if a.Exit == nil || *a.Exit != 0 {
				t.Fatalf("the answer's exit status was not journaled: %s", rec.Raw)
			}
		}
	}
	// A supervisor journals its start with its first record: the third,
	// which found nothing new to journal, journaled nothing.
	if kinds[fleet.JournalEscalation] != 2 || kinds[fleet.JournalAnswer] != 1 || kinds[fleet.JournalStart] != 2 {
		t.Fatalf("journal kinds = %v", kinds)
	}
}

// TestAgentRuns: agent runs of the fleet appear beside the sessions with
// their checks as steps and the files their tools wrote or named as their
// footprint; a run colliding with a session is reported with the shared
// file.
func TestAgentRuns(t *testing.T) {
	r := newRepo(t, "parser/lexer.go", "parser/parse.go")
	r.session("the parser architecture", []string{"parser/lexer.go", "parser/parse.go"}, []func(*ponder.Engine, string){grade(t, "u0001", "u0002")}, false)
	ctx := context.Background()
	runs := laserbrain.NewMemStore()
	r.opts.Runs = runs
	run := fleet.Run{ID: "r1", Agent: "claude", Fleet: r.fid, Dir: r.dir, Created: time.Now(), Task: "r1", Tasks: 1, Checks: 2}
	r.must(r.st.CreateRun(ctx, run))
	h, err := runs.OpenRun(ctx, "r1")
	r.must(err)
	for _, g := range []string{"review the parser architecture", "review the parser architecture"} {
		_, err := h.Run().Step(laserbrain.StepInput{Goal: g, Progress: "advancing", Distance: laserbrain.Dist(5)})
		r.must(err)
	}
	r.must(h.Save(ctx))
	h.Close()
	if _, err := r.st.AppendEvent(ctx, "r1", fleet.RunEvent{Kind: fleet.KindTool, Name: "Edit", OK: laserbrain.OKTrue, Text: filepath.Join(r.dir, "parser/parse.go")}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.AppendEvent(ctx, "r1", fleet.RunEvent{Kind: fleet.KindTool, Name: "Bash", OK: laserbrain.OKTrue, Text: "go vet parser/lexer.go > /tmp/vet.txt"}); err != nil {
		t.Fatal(err)
	}
	rd := r.round()
	row := agentRow(t, rd, "claude:r1")
	if row.Kind != KindRun || row.Steps != 2 || row.Files != 2 || row.Ground != "review the parser architecture" {
		t.Fatalf("run row = %+v", row)
	}
	if len(rd.Collisions) != 1 || strings.Join(rd.Collisions[0].SharedFiles, " ") != "parser/lexer.go parser/parse.go" {
		t.Fatalf("collisions = %+v", rd.Collisions)
	}
	// The run exits: it is finished, and collides with nobody any more
	// (nor is routed); the session goes on alone.
	if _, err := r.st.UpdateRun(ctx, "r1", func(x *fleet.Run) error { x.Ended = time.Now(); return nil }); err != nil {
		t.Fatal(err)
	}
	rd = r.round()
	if row := agentRow(t, rd, "claude:r1"); row.Status != StatusFinished || len(rd.Collisions) != 0 || len(rd.Route) != 0 || len(rd.Halts) != 0 {
		t.Fatalf("after the run ended: %+v, collisions %+v, route %+v", row, rd.Collisions, rd.Route)
	}
}

// TestDriftEscalation: an agent drifting three checks in a row goes to a
// person once; it is delivered its own advice until the person answers,
// and then the answer instead.
func TestDriftEscalation(t *testing.T) {
	r := newRepo(t)
	runs := laserbrain.NewMemStore()
	r.opts.Runs = runs
	var asked []Escalation
	r.opts.OnEscalate = func(ctx context.Context, e Escalation) Resolution {
		asked = append(asked, e)
		zero := 0
		return Resolution{Exit: &zero, Decision: "stop and ask the user what the kitchen has to do with the parser"}
	}
	step := r.checkingRun(runs)
	step("write the parser")
	step("paint the kitchen walls")
	rd := r.round()
	row := agentRow(t, rd, "claude:r1")
	if !row.Drifting || *row.Verdict != "goal-drift" || !strings.HasPrefix(row.Advice, "Your goal no longer matches") || len(asked) != 0 {
		t.Fatalf("after one drifting check: %+v, asked %d", row, len(asked))
	}
	step("paint the kitchen walls")
	step("paint the kitchen walls")
	rd = r.round()
	if len(asked) != 1 || asked[0].Kind != EscalateDrift || asked[0].Verdict == nil || asked[0].Verdict.Streak != 3 || asked[0].Verdict.Ground != "write the parser" {
		t.Fatalf("asked = %+v", asked)
	}
	if row := agentRow(t, rd, "claude:r1"); row.Advice != "stop and ask the user what the kitchen has to do with the parser" || row.Status != StatusActive {
		t.Fatalf("after the answer: %+v", row)
	}
	step("paint the kitchen walls")
	r.round()
	if len(asked) != 1 {
		t.Fatalf("the same streak was asked about again: %d", len(asked))
	}
}

// TestDamagedLedger: a session whose ledger ponder refuses is reported
// damaged, with ponder's own message, and counts once as a failed check.
func TestDamagedLedger(t *testing.T) {
	r := newRepo(t, "a.go")
	slug := r.session("the lexer", []string{"a.go"}, []func(*ponder.Engine, string){grade(t, "u0001")}, false)
	ledger := filepath.Join(r.dir, ".ponder", slug, "ledger.jsonl")
	data, _ := os.ReadFile(ledger)
	if err := os.WriteFile(ledger, []byte(strings.Replace(string(data), `"u0001"`, `"u0009"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	rd := r.round()
	row := agentRow(t, rd, fleet.PonderAgent(slug))
	if row.Status != StatusDamaged || !strings.Contains(row.Error, "edited") {
		t.Fatalf("row = %+v", row)
	}
	v, _ := r.sup.sc.View(fleet.PonderAgent(slug))
	if len(v.Events) != 1 || v.Events[0].Name != "ledger" || v.Events[0].OK != laserbrain.OKFalse {
		t.Fatalf("events = %+v", v.Events)
	}
	if err := os.WriteFile(ledger, append(data, []byte("\n")...), 0o644); err != nil { // another change, still refused: not counted twice
		t.Fatal(err)
	}
	r.round()
	if v, _ := r.sup.sc.View(fleet.PonderAgent(slug)); len(v.Events) != 1 {
		t.Fatalf("the damage was counted again: %+v", v.Events)
	}
}

// TestUndeliveredAskedAgain: only exit 0 answers a question. A handler
// that exits 127 (a mistyped path) or 1, or cannot run at all, leaves it
// unanswered: the round says so, the question goes again next round (and
// to the next supervisor), marked redelivered, and what the failed command
// printed decides nothing; exit 0 ends it.
func TestUndeliveredAskedAgain(t *testing.T) {
	r := newRepo(t, "a.go", "b.go")
	r.session("the parser architecture", []string{"a.go"}, []func(*ponder.Engine, string){grade(t, "u0001")}, false)
	b := r.session("architecture of the parser", []string{"b.go"}, []func(*ponder.Engine, string){grade(t, "u0001")}, false)
	var asked []Escalation
	answers := []Resolution{{Exit: ptr(127), Decision: fleet.PonderAgent(b)}, {Exit: ptr(1)}, {Error: "killed after 1m0s"}, {Exit: ptr(0)}}
	r.opts.OnEscalate = func(ctx context.Context, e Escalation) Resolution {
		asked = append(asked, e)
		return answers[len(asked)-1]
	}
	for i, want := range []bool{true, true, true, false} {
		if i == 2 {
			r.sup = nil // a new supervisor finds it unanswered in the journal
		}
		rd := r.round()
		if len(asked) != i+1 || len(rd.Escalations) != 1 || rd.Escalations[0].Undelivered != want || asked[i].ID != asked[0].ID || asked[i].Redelivered != (i > 0) {
			t.Fatalf("round %d: asked %d times, escalations %+v", i+1, len(asked), rd.Escalations)
		}
		if rd.Escalations[0].Halted != "" || agentRow(t, rd, fleet.PonderAgent(b)).Status == StatusHalted {
			t.Fatalf("round %d: the output of a command that failed halted %s", i+1, fleet.PonderAgent(b))
		}
		if got := r.sup.Undelivered(); got != map[bool]int{true: 1, false: 0}[want] {
			t.Fatalf("round %d: %d undelivered", i+1, got)
		}
	}
	if rd := r.round(); len(asked) != 4 || len(rd.Escalations) != 0 {
		t.Fatalf("asked after exit 0: %d, %+v", len(asked), rd.Escalations)
	}
}

func ptr(n int) *int { return &n }
