package supercode

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/laserbrain/link"
)

// Expected values here are derived by hand from the reference's rules
// (supercode.py, catches.py, laserbrain-sdk 0.53.0); the
// vectors package checks the same code against 150 reference scenarios.

const adv, stuck = laserbrain.ProgressAdvancing, laserbrain.ProgressStuck

func st(goal, progress string, d int) laserbrain.StepInput {
	return laserbrain.StepInput{Goal: goal, Progress: progress, Distance: laserbrain.Dist(d)}
}

func newSC(t testing.TB) *Supercode {
	t.Helper()
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func observe(t testing.TB, s *Supercode, name string, in laserbrain.StepInput) laserbrain.CheckResult {
	t.Helper()
	v, err := s.Observe(name, in)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Each agent is measured against its own first goal, not the supervisor's
// or another agent's; its collision ground is its first non-empty goal.
func TestEachAgentOnItsOwnGround(t *testing.T) {
	s := newSC(t)
	if v := observe(t, s, "a", st("write a JSON parser", adv, 5)); v.Reason != "grounded" {
		t.Fatalf("a: %s", v.Reason)
	}
	if v := observe(t, s, "b", st("", adv, 5)); v.Reason != "ungrammatical" {
		t.Fatalf("b empty goal: %s", v.Reason)
	}
	if v := observe(t, s, "b", st("benchmark the cache", adv, 5)); v.Reason != "grounded" {
		t.Fatalf("b: %s — measured against someone else's ground", v.Reason)
	}
	// b's parser goal is drift for b (overlap 0 with its cache ground).
	if v := observe(t, s, "b", st("write a JSON parser", adv, 5)); v.Reason != "goal-drift" || !v.Drifting {
		t.Fatalf("b on a's job: %s", v.Reason)
	}
	if vb, _ := s.View("b"); vb.Ground != "benchmark the cache" || vb.Steps != 3 || vb.Run.GroundGoal() != "benchmark the cache" {
		t.Errorf("b view: ground %q, steps %d", vb.Ground, vb.Steps)
	}
	if got := s.Agents(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("agents %v", got)
	}
}

// Findings: only agents drifting or with a catch; an agent seen only
// through events has no reason and no Φ.
func TestFindings(t *testing.T) {
	s := newSC(t)
	observe(t, s, "calm", st("ship the sky billboard", adv, 5))
	observe(t, s, "lost", st("ship the sky billboard", adv, 5))
	observe(t, s, "lost", st("paint the shed", adv, 5))
	s.Saw("quiet", laserbrain.CheckEvent("tests", true))
	got := s.Findings()
	if len(got) != 2 || got[0].Agent != "lost" || got[1].Agent != "quiet" {
		t.Fatalf("findings %+v", got)
	}
	lost, quiet := got[0], got[1]
	if *lost.Reason != "goal-drift" || *lost.Phi != 0.5 || !lost.Drifting || lost.Steps != 2 || len(lost.Catches) != 0 {
		t.Errorf("lost: %+v", lost)
	}
	if quiet.Reason != nil || quiet.Phi != nil || quiet.Steps != 0 || !slices.Equal(quiet.Catches, []string{"unfalsified"}) {
		t.Errorf("quiet: %+v", quiet)
	}
}

// Collisions compare grounds, not current goals: two agents passing
// through the same goal are not a collision; two on one ground are, even
// after both move on.
func TestCollisionsOnGrounds(t *testing.T) {
	s := newSC(t)
	observe(t, s, "a", st("write a JSON parser in Python", adv, 5))
	observe(t, s, "b", st("benchmark the cache", adv, 5))
	observe(t, s, "b", st("write a JSON parser in Python", adv, 5)) // b drifts onto a's goal
	if c := s.Collisions(); len(c) != 0 {
		t.Fatalf("current goals collided: %+v", c)
	}
	observe(t, s, "c", st("write the JSON parser in Python", adv, 5))
	observe(t, s, "c", st("paint the shed", adv, 5))
	c := s.Collisions()
	if len(c) != 1 || c[0].Agents != [2]string{"a", "c"} || c[0].Overlap != 1 || c[0].Grounds[1] != "write the JSON parser in Python" {
		t.Fatalf("collisions %+v", c)
	}
}

// TestSubjectAndLens: agents with a subject (ponder sessions) collide on
// it, the lens compared apart: a lens does not dilute the subject (their
// whole grounds overlap 0.5, under the 0.6 minimum), two different lenses
// on one subject split the work, two alike collide, and an ended agent
// collides with nobody.
func TestSubjectAndLens(t *testing.T) {
	s := newSC(t)
	session := func(name, subject, lens string) {
		observe(t, s, name, laserbrain.StepInput{Goal: strings.TrimSpace(subject + " " + lens), Progress: adv})
		s.SetSubject(name, subject, lens)
	}
	pairs := func() []string {
		var out []string
		for _, c := range s.Collisions() {
			out = append(out, c.Agents[0]+"+"+c.Agents[1]+"@"+c.Grounds[0])
		}
		slices.Sort(out)
		return out
	}
	session("a", "the parser", "architecture")
	session("b", "the parser", "")
	if got := pairs(); !slices.Equal(got, []string{"a+b@the parser"}) {
		t.Fatalf("a lens diluted the subject: %v", got)
	}
	session("c", "the parser", "security")
	session("d", "the parser", "security")
	want := []string{"a+b@the parser", "b+c@the parser", "b+d@the parser", "c+d@the parser"}
	if got := pairs(); !slices.Equal(got, want) {
		t.Fatalf("collisions %v, want %v (architecture and security split the work)", got, want)
	}
	s.SetEnded("b", true)
	if got := pairs(); !slices.Equal(got, []string{"c+d@the parser"}) {
		t.Fatalf("after b ended: %v", got)
	}
}

// TestCollideIsTheSupervisorsModel: Collide gives what a Supercode fed the
// same agents gives — the one model every reader uses — and: a session is
// compared by its subject (lens apart, lenses that differ split the work),
// a run driving a session collides only as that session (SameAs), an ended
// agent and one with no ground yet collide with nobody.
func TestCollideIsTheSupervisorsModel(t *testing.T) {
	subject := func(s string) *string { return &s }
	gs := []Ground{
		{Agent: "ponder:sec", Ground: "the checkout flow security", Subject: subject("the checkout flow"), Lens: "security"},
		{Agent: "ponder:sec2", Ground: "the checkout flow security", Subject: subject("the checkout flow"), Lens: "security"},
		{Agent: "ponder:perf", Ground: "the checkout flow perf", Subject: subject("the checkout flow"), Lens: "perf"},
		{Agent: "ponder:plain", Ground: "the checkout flow", Subject: subject("the checkout flow")},
		{Agent: "claude:r1", Ground: "audit the checkout flow", SameAs: "ponder:plain"},
		{Agent: "claude:r2", Ground: "audit the checkout flow"},
		{Agent: "ponder:done", Ground: "the checkout flow", Subject: subject("the checkout flow"), Ended: true},
		{Agent: "ponder:new", Subject: subject("the checkout flow")},
	}
	pairs := func(cols []laserbrain.Collision) []string {
		var out []string
		for _, c := range cols {
			out = append(out, c.Agents[0]+"+"+c.Agents[1]+"@"+c.Grounds[0])
		}
		slices.Sort(out)
		return out
	}
	got := pairs(Collide(gs))
	want := []string{
		// r1 drives plain, which collides for both; r2 is on the subject
		// ("audit the checkout flow" against "the checkout flow": 2/3).
		"claude:r2+ponder:perf@audit the checkout flow", "claude:r2+ponder:plain@audit the checkout flow",
		"claude:r2+ponder:sec2@audit the checkout flow", "claude:r2+ponder:sec@audit the checkout flow",
		// perf splits the work with both security sessions; plain (no lens)
		// collides with each lens.
		"ponder:perf+ponder:plain@the checkout flow",
		"ponder:plain+ponder:sec2@the checkout flow", "ponder:plain+ponder:sec@the checkout flow",
		"ponder:sec+ponder:sec2@the checkout flow",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Collide:\n got %v\nwant %v", got, want)
	}
	// The Supercode fed the same agents answers the same.
	s := newSC(t)
	for _, g := range gs {
		if g.Ground != "" {
			observe(t, s, g.Agent, laserbrain.StepInput{Goal: g.Ground, Progress: adv})
		}
		if g.Subject != nil {
			s.SetSubject(g.Agent, *g.Subject, g.Lens)
		}
		if g.SameAs != "" {
			s.SetSameAs(g.Agent, g.SameAs)
		}
		s.SetEnded(g.Agent, g.Ended)
	}
	if sc := pairs(s.Collisions()); !slices.Equal(sc, want) {
		t.Fatalf("Supercode.Collisions:\n got %v\nwant %v", sc, want)
	}
}

// Fleet catches in both directions.
func TestFleetCatchesAccuseAndExonerate(t *testing.T) {
	// Accuse: one tool gives two agents the identical result.
	s := newSC(t)
	s.Saw("a", laserbrain.ToolEvent("pytest", "3 passed"))
	s.Saw("b", laserbrain.ToolEvent("pytest", "3 passed"))
	s.Saw("b", laserbrain.ToolEvent("grep", "hit"))
	s.Saw("c", laserbrain.ToolEvent("grep", "miss"))
	got := s.FleetCatches()
	if len(got) != 1 || got[0].Signature != FleetBlind || got[0].Subject != "pytest" || !slices.Equal(got[0].Agents, []string{"a", "b"}) ||
		got[0].Detail != "'pytest' returned an identical result to 2 agents doing different work — it is not reading its input" {
		t.Fatalf("blind fleet: %+v", got)
	}

	// Exonerate: a is flagged unrun for its claim about the parser; b ran it.
	s = newSC(t)
	s.Saw("a", laserbrain.ClaimEvent("parser", "two of eight hold"))
	if f := s.Findings(); len(f) != 1 || !slices.Equal(f[0].Catches, []string{"unrun"}) {
		t.Fatalf("per-agent unrun: %+v", f)
	}
	if got := s.FleetCatches(); len(got) != 0 {
		t.Fatalf("nobody ran it, nothing to clear: %+v", got)
	}
	s.Saw("b", laserbrain.ToolEvent("parser", "8 passed"))
	got = s.FleetCatches()
	if len(got) != 1 || got[0].Signature != FleetUnrunCleared || got[0].Subject != "parser" || !slices.Equal(got[0].Agents, []string{"a", "b"}) ||
		got[0].Detail != "'a' was flagged for claiming 'parser' without running it, but b did — the claim is backed and the per-agent catch is a false positive" {
		t.Fatalf("unrun cleared: %+v", got)
	}

	// thin_evidence: a check green across agents. Each of them has then
	// already fired unfalsified alone, which suppresses it — in the
	// reference as here.
	s = newSC(t)
	for _, a := range []string{"a", "b", "c"} {
		s.Saw(a, laserbrain.CheckEvent("lint", true))
	}
	if got := s.FleetCatches(); len(got) != 0 {
		t.Fatalf("thin evidence fired past a per-agent unfalsified: %+v", got)
	}
}

// Route: catches first, then steps, then Φ; a tie is no recommendation.
func TestRoute(t *testing.T) {
	g := "write a JSON parser in Python"
	s := newSC(t)
	observe(t, s, "a", st(g, adv, 5))
	observe(t, s, "b", st(g, adv, 5))
	r := s.Route()
	if len(r) != 1 || r[0].Keep != "" || r[0].Yield != "" || r[0].Why != NoBasis || r[0].Ground != g || r[0].Overlap != 1 {
		t.Fatalf("tie: %+v", r)
	}
	// More steps wins.
	observe(t, s, "b", st(g, adv, 4))
	if r := s.Route(); r[0].Keep != "b" || r[0].Yield != "a" || r[0].Why != "b has 0 catch(es) over 2 step(s); a has 0 over 1" {
		t.Fatalf("steps: %+v", r)
	}
	// Equal steps, lower Φ wins: a's Φ 0.0 against b's 0.03.
	observe(t, s, "a", st(g, adv, 5))
	if r := s.Route(); r[0].Keep != "a" || r[0].Yield != "b" {
		t.Fatalf("phi: %+v", r)
	}
	// A catch outweighs everything after it.
	s.Saw("a", laserbrain.ClaimEvent("parser", "it works"))
	if r := s.Route(); r[0].Keep != "b" || r[0].Why != "b has 0 catch(es) over 2 step(s); a has 1 over 2" {
		t.Fatalf("catches: %+v", r)
	}
}

// The supervisor's own check is grounded at construction (goal, d0), so it
// can disagree with itself; its distance is the number of drifting agents.
func TestSelfCheck(t *testing.T) {
	s := newSC(t)
	if v, _ := s.SelfCheck(); v.Reason != "advancing" || v.Phi != 0 || *v.Laserscore != "⟨agent|every|ground|its|keep|own⟩ advancing d0" {
		t.Fatalf("first self-check: %+v (a lazily grounded self would say grounded)", v)
	}
	observe(t, s, "a", st("ship it", adv, 5))
	observe(t, s, "a", st("paint the shed", adv, 5))
	observe(t, s, "b", st("ship it", adv, 5))
	observe(t, s, "b", st("paint the shed", adv, 5))
	// Both drifting: stuck, distance 2 → Φ = 0.3·0.2 + 0.2 = 0.26.
	if v, _ := s.SelfCheck(); v.Reason != "self-report:stuck" || v.Phi != 0.26 || *v.Laserscore != "⟨agent|every|ground|its|keep|own⟩ stuck d2" {
		t.Fatalf("self-check with every agent drifting: %+v", v)
	}
}

// Report, in the reference's words; an agent seen only through events
// gets Φ "-" where the reference raises.
func TestReport(t *testing.T) {
	s := newSC(t)
	got, _ := s.Report()
	if got != "supercode · 0 agent(s) · 0 finding(s)\n  self: advancing Φ=0.00\n  every agent on its own ground" {
		t.Fatalf("empty report:\n%s", got)
	}
	g := "write a JSON parser in Python"
	observe(t, s, "builder", st(g, adv, 5))
	observe(t, s, "tester", st("write the JSON parser in Python", adv, 5))
	got, _ = s.Report()
	want := "supercode · 2 agent(s) · 0 finding(s)\n  self: advancing Φ=0.00\n  every agent on its own ground — and two of them share it\n  builder + tester  same job (overlap 1.00)"
	if got != want {
		t.Fatalf("shared ground:\n%s\nwant\n%s", got, want)
	}
	observe(t, s, "tester", st("paint the shed", stuck, 5))
	s.Saw("watcher", laserbrain.CheckEvent("tests", true))
	s.Saw("builder", laserbrain.ToolEvent("pytest", "ok"), laserbrain.ClaimEvent("pytest", "passes"))
	s.Saw("watcher", laserbrain.ToolEvent("pytest", "ok"))
	got, _ = s.Report()
	// tester: self-report:stuck (Φ 0.5+0.2 = 0.70, prev not drift → warns,
	// not drifting) — so the findings are builder? no catch (it ran pytest);
	// watcher (unfalsified, no verdict); the self check: 0 of 3 drifting.
	want = "supercode · 3 agent(s) · 1 finding(s)\n  self: advancing Φ=0.00\n  builder + tester  same job (overlap 1.00)\n" +
		"  blind_fleet  pytest · builder, watcher\n" +
		"  watcher      -                Φ=- step 0 · unfalsified"
	if got != want {
		t.Fatalf("report:\n%s\nwant\n%s", got, want)
	}
}

// Publish writes the yield recommendation and the findings into the link,
// keyed as the reference keys them.
func TestPublish(t *testing.T) {
	s := newSC(t)
	g := "write a JSON parser in Python"
	observe(t, s, "builder", st(g, adv, 5))
	observe(t, s, "tester", st(g, adv, 5))
	observe(t, s, "tester", st(g, adv, 4))
	s.Saw("builder", laserbrain.CheckEvent("tests", true))
	l := &link.Link{Path: filepath.Join(t.TempDir(), "link.jsonl")}
	recs, err := s.Publish(l, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Text != "builder and tester share a ground (overlap 1.00) — suggest builder yields" ||
		recs[1].Text != "builder: grounded · unfalsified" || recs[0].Agent != "supercode" || recs[0].Kind != "supervision" || *recs[0].Goal != DefaultGoal {
		t.Fatalf("published %+v", recs)
	}
	back, _ := l.Records()
	if len(back) != 2 || string(back[0].Payload) != `{"agents": ["builder", "tester"], "overlap": 1.0, "ground": "write a JSON parser in Python", "keep": "tester", "yield_": "builder", "why": "tester has 0 catch(es) over 2 step(s); builder has 1 over 1"}` ||
		string(back[1].Payload) != `{"agent": "builder", "steps": 1, "reason": "grounded", "phi": 0.0, "drifting": false, "laserscore": "⟨json|pars|python|write⟩ advancing d5", "catches": ["unfalsified"]}` {
		t.Fatalf("payloads:\n%s\n%s", back[0].Payload, back[1].Payload)
	}
}

// script is a scripted agent: step n spells states[min(n, len-1)].
func script(states ...Spelled) Agent {
	return AgentFunc(func(c *Context) Spelled { return states[min(c.Steps, len(states)-1)] })
}

func sp(goal, progress string, d int) Spelled {
	return Spelled{Goal: goal, Progress: progress, Distance: laserbrain.Dist(d)}
}

// Manage never regrounds: however an agent drifts, escalates and is
// answered, its run stays on its first goal, and no verdict it gets is a
// reground — which a single step observed as a user turn would give.
func TestManageNeverRegrounds(t *testing.T) {
	s := newSC(t)
	wander := script(sp("fix the contrast gate", adv, 6), sp("rewrite the about page", adv, 6), sp("tune the footer colours", adv, 5), sp("rename css variables", adv, 4))
	var told []string // what the wanderer was handed each step
	agents := []ManagedAgent{
		{"wanderer", AgentFunc(func(c *Context) Spelled { told = append(told, c.Return); return wander.Step(c) })},
		{"steady", script(sp("benchmark the cache", adv, 6), sp("benchmark the cache", adv, 5))},
	}
	var reasons []string
	ctxs, err := s.Manage(context.Background(), agents, ManageOptions{MaxSteps: 6, EscalateAfter: 2,
		OnReturn:   func(a string, v laserbrain.CheckResult, c *Context) { reasons = append(reasons, v.Reason) },
		OnEscalate: func(e Escalation) string { return "rewrite the about page" }, // a person names a goal
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wanderer", "steady"} {
		v, _ := s.View(name)
		want := map[string]string{"wanderer": "fix the contrast gate", "steady": "benchmark the cache"}[name]
		if v.Run.GroundGoal() != want {
			t.Errorf("%s was regrounded: ground %q, want %q", name, v.Run.GroundGoal(), want)
		}
	}
	if slices.Contains(reasons, "reground") || len(reasons) != 5 {
		t.Errorf("drifting verdicts %v: want five, none a reground", reasons)
	}
	// The person's answer is delivered on the step after the escalation;
	// later drifts deliver the agent's own advice again (the decision stays
	// on record), and it is escalated once per streak.
	w := ctxs[0]
	if w.Name != "wanderer" || w.Decision != "rewrite the about page" || !strings.HasPrefix(w.Return, "Your goal no longer matches") || !w.Escalated || w.Streak != 5 || w.Steps != 6 {
		t.Errorf("wanderer context %+v", w)
	}
	if told[0] != "" || !strings.HasPrefix(told[2], "Your goal no longer matches") || told[3] != "rewrite the about page" || !strings.HasPrefix(told[4], "Your goal") {
		t.Errorf("the wanderer was told %q", told)
	}
	if c := ctxs[1]; c.Steps != 6 || c.Returns != 0 || c.Finished {
		t.Errorf("steady context %+v", c)
	}
}

// Manage halts the agent that should yield a shared ground and says why,
// without giving it a new goal; a tie is recorded on both, escalated once,
// and a person's answer halts the one named.
func TestManageHaltsAndEscalatesCollisions(t *testing.T) {
	g := "write a JSON parser in Python"
	s := newSC(t)
	s.Saw("b", laserbrain.ClaimEvent("parser", "it works")) // b's evidence is questioned
	ctxs, err := s.Manage(context.Background(), []ManagedAgent{
		{"a", script(sp(g, adv, 5), sp(g, adv, 4))},
		{"b", script(sp(g, adv, 5), sp(g, adv, 4))},
	}, ManageOptions{MaxSteps: 3})
	if err != nil {
		t.Fatal(err)
	}
	if b := ctxs[1]; !b.Halted || b.Steps != 1 || b.HaltedWhy != "shares a ground with a (overlap 1.00) — halted to stop duplicate work. Choosing what b does next is not supercode's call." {
		t.Errorf("b %+v", b)
	}
	if a := ctxs[0]; a.Halted || a.Steps != 3 {
		t.Errorf("a %+v", a)
	}

	s = newSC(t)
	var asked []string
	ctxs, _ = s.Manage(context.Background(), []ManagedAgent{
		{"a", script(sp(g, adv, 5))},
		{"b", script(sp(g, adv, 5))},
		{"c", script(sp(g, adv, 5))},
	}, ManageOptions{MaxSteps: 2, OnEscalate: func(e Escalation) string {
		asked = append(asked, e.Who)
		if e.Collision == nil || e.Collision.Why != NoBasis || e.Verdict != nil {
			t.Errorf("escalation %+v", e)
		}
		return "b"
	}})
	// Round 1: a+b, a+c, b+c all tie; a+b goes up and b is halted by the
	// person; a+c and b+c are recorded but not asked again (a and b are
	// marked escalated).
	if !slices.Equal(asked, []string{"a+b"}) {
		t.Errorf("asked %v", asked)
	}
	b := ctxs[1]
	if !b.Halted || b.HaltedWhy != "human decision: yield to a" || b.Steps != 1 || !b.CollisionEscalated {
		t.Errorf("b %+v", b)
	}
	a := ctxs[0]
	if len(a.CollisionUnresolved) != 2 || a.CollisionUnresolved[0] != (Unresolved{"b", 1, NoBasis}) || a.CollisionUnresolved[1].With != "c" {
		t.Errorf("a unresolved %+v (once per other agent, however many rounds)", a.CollisionUnresolved)
	}
}

type operatorWork struct{ Agent }

func (operatorWork) Routable() bool { return false }

// A fleet containing operator work is refused whole, before any agent
// takes a step.
func TestManageRefusesOperatorWork(t *testing.T) {
	s := newSC(t)
	steps := 0
	counting := AgentFunc(func(c *Context) Spelled { steps++; return sp("ship it", adv, 5) })
	_, err := s.Manage(context.Background(), []ManagedAgent{{"worker", counting}, {"deployer", operatorWork{counting}}, {"pusher", operatorWork{counting}}}, ManageOptions{})
	var refused *RoutingRefused
	if !errors.As(err, &refused) || !slices.Equal(refused.Agents, []string{"deployer", "pusher"}) ||
		err.Error() != "supercode may not route operator work: deployer, pusher. Allocation is a reading; an action is not (grammar 1.8.0, layers.operator.routing)." {
		t.Fatalf("err %v", err)
	}
	if steps != 0 || len(s.Agents()) != 0 {
		t.Errorf("%d steps taken before the refusal", steps)
	}
	if _, err := s.Manage(context.Background(), []ManagedAgent{{"x", counting}, {"x", counting}}, ManageOptions{}); err == nil {
		t.Error("a name given twice was accepted")
	}
}

// Manage stops at a finished agent (done, or distance 0) and when the
// context is cancelled.
func TestManageFinishesAndCancels(t *testing.T) {
	s := newSC(t)
	ctxs, _ := s.Manage(context.Background(), []ManagedAgent{
		{"done", script(sp("ship it", adv, 3), Spelled{Goal: "ship it", Progress: adv, Distance: laserbrain.NoDistance, Done: true})},
		{"zero", script(sp("port the parser", adv, 2), sp("port the parser", adv, 0))},
	}, ManageOptions{})
	if !ctxs[0].Finished || ctxs[0].Steps != 2 || !ctxs[1].Finished || ctxs[1].Steps != 2 {
		t.Errorf("contexts %+v %+v", ctxs[0], ctxs[1])
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := s.Manage(ctx, []ManagedAgent{{"loop", AgentFunc(func(c *Context) Spelled {
		if n++; n == 3 {
			cancel()
		}
		return sp("keep going", adv, 5)
	})}}, ManageOptions{MaxSteps: 100})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Errorf("cancel: %v after %d steps", err, n)
	}
}

// Saw and Observe from many goroutines: nothing lost (make test-race runs
// it under the race detector).
func TestConcurrentUse(t *testing.T) {
	s := newSC(t)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		name := string(rune('a' + i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				_, _ = s.Observe(name, st("ship the "+name, adv, 5))
				s.Saw(name, laserbrain.CheckEvent("t", true))
				s.Findings()
				s.Route()
			}
		}()
	}
	wg.Wait()
	for _, name := range s.Agents() {
		if v, _ := s.View(name); v.Steps != 50 || len(v.Events) != 50 {
			t.Errorf("%s: %d steps, %d events", name, v.Steps, len(v.Events))
		}
	}
	if !strings.HasPrefix(mustReport(t, s), "supercode · 8 agent(s) · 8 finding(s)") {
		t.Error(mustReport(t, s))
	}
}

func mustReport(t *testing.T, s *Supercode) string {
	r, err := s.Report()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// With CorroborateSaw, observed events back the agent's checks.
func TestCorroborateSaw(t *testing.T) {
	for _, on := range []bool{false, true} {
		s, _ := New(Options{CorroborateSaw: on})
		observe(t, s, "a", st("ship it", adv, 5))
		s.Saw("a", laserbrain.ToolEvent("build", "ok"))
		v := observe(t, s, "a", st("ship it", adv, 4))
		if want := map[bool]float64{false: 0.5, true: 1}[on]; v.Anchored != want {
			t.Errorf("CorroborateSaw %v: anchored %v, want %v", on, v.Anchored, want)
		}
	}
}
