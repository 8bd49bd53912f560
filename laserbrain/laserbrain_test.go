package laserbrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The cycle detector: periods 2..6 fire once the trail is long enough (the
// need rule), the smallest period is the one reported, and a trail of one
// distinct value never fires.
func TestPeriod(t *testing.T) {
	rep := func(pattern string, n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, string(pattern[i%len(pattern)]))
		}
		return out
	}
	cases := []struct {
		trail []string
		want  int
	}{
		{rep("ab", 5), 0},  // need = max(6, 4) = 6
		{rep("ab", 6), 2},  // A/B fires at step 6
		{rep("abc", 6), 3}, // three goals cycling fire at step 6
		{rep("abcd", 7), 0},
		{rep("abcd", 8), 4}, // sin/cos/−sin/−cos at step 8
		{rep("abcde", 9), 0},
		{rep("abcde", 10), 5},
		{rep("abcdef", 11), 0},
		{rep("abcdef", 12), 6},
		{rep("abcdefg", 14), 0}, // period 7 is beyond the detector
		{rep("a", 20), 0},       // a constant trail never fires
		{rep("ab", 8), 2},       // [a,b]×4 is period 2, not 4
		{append([]string{"x", "y", "z"}, rep("ab", 6)...), 2},
		{append(rep("ab", 6), "c"), 0},
	}
	for _, c := range cases {
		if got := period(c.trail); got != c.want {
			t.Errorf("period(%v) = %d, want %d", c.trail, got, c.want)
		}
	}
}

// Context ids, as the Python reference computes them.
func TestContextID(t *testing.T) {
	for goal, want := range map[string]string{
		"build the parser":       "ctx_1sax889",
		"building a parser":      "ctx_1sax889",
		"ship the sky billboard": "ctx_2qbvsr",
	} {
		if got, ok := ContextID(goal); !ok || got != want {
			t.Errorf("ContextID(%q) = %q, %v; want %q", goal, got, ok, want)
		}
	}
	if _, ok := ContextID("to the"); ok {
		t.Error("a goal without tokens has a context id")
	}
}

// A distance is int(float(x)) clamped to 0..10, anything unreadable 5, as
// the Python reference reads it; and Python's float() syntax for strings.
func TestDistanceFromJSON(t *testing.T) {
	for raw, want := range map[string]int{
		`"7.9"`: 7, `"1e1"`: 10, `true`: 1, `false`: 0, `"abc"`: 5, `12`: 10, `-3`: 0,
		`7.9`: 7, `-0.5`: 0, `1e400`: 5, `"inf"`: 5, `"nan"`: 5, `"-inf"`: 5, `"1e400"`: 5,
		`" 7 "`: 7, `"+3"`: 3, `"1_0"`: 10, `"_1"`: 5, `"1__0"`: 5, `"1_"`: 5, `".5"`: 0, `"5."`: 5,
		`"."`: 5, `"e5"`: 5, `"0x10"`: 5, `"٣"`: 3, `"𝟗"`: 9, `""`: 5, `[1]`: 5, `{}`: 5,
		`"\u001c8\u001f"`: 8, // Python strips the information separators
	} {
		d := DistanceFromJSON(json.RawMessage(raw))
		if !d.Known || d.Value != want {
			t.Errorf("DistanceFromJSON(%s) = %+v, want %d", raw, d, want)
		}
	}
	for _, raw := range []string{``, `null`, ` null `} {
		if d := DistanceFromJSON(json.RawMessage(raw)); d.Known {
			t.Errorf("DistanceFromJSON(%q) = %+v, want unknown", raw, d)
		}
	}
	if _, ok := DistanceFromString("x"); ok {
		t.Error(`DistanceFromString("x") reported a number`)
	}
}

// Laserscores, as the Python reference writes them.
func TestLaserscore(t *testing.T) {
	cases := []struct {
		goal, progress string
		d              Distance
		parent, want   string
	}{
		{"building billboards", adv, Dist(3), "", "⟨billboard|build⟩ advancing d3"},
		{"build a billboard", adv, Dist(3), "", "⟨billboard|build⟩ advancing d3"},
		{"make laserscore first class", adv, Dist(7), "", "⟨clas|first|laserscore|make⟩ advancing d7"},
		{"RUNNING runner runs run", adv, Dist(6), "deployment deploys deployed", "⟨run|runn|runs⟩ advancing d6 ⊂ ⟨deploy⟩"},
		{"ship it", adv, Dist(5), "   ", "⟨ship⟩ advancing d5"},
		{"to the", stuck, NoDistance, "", "⟨⟩ stuck d?"},
	}
	for _, c := range cases {
		if got, ok := Laserscore(c.goal, c.progress, c.d, c.parent); !ok || got != c.want {
			t.Errorf("Laserscore(%q) = %q, %v; want %q", c.goal, got, ok, c.want)
		}
	}
	for _, c := range [][2]string{{"", adv}, {"  ", adv}, {"ship", "Advancing"}, {"ship", ""}} {
		if got, ok := Laserscore(c[0], c[1], Dist(5), ""); ok {
			t.Errorf("Laserscore(%q, %q) = %q, want none", c[0], c[1], got)
		}
	}
}

// Signatures are Python's json.dumps(args, sort_keys=True), cut to 400.
func TestSignature(t *testing.T) {
	args := map[string]any{"z": []any{true, nil, 1.5, json.Number("2"), json.Number("1e16")}, "command": "ls é 😀 \"q\"\n"}
	want := `Bash|{"command": "ls \u00e9 \ud83d\ude00 \"q\"\n", "z": [true, null, 1.5, 2, 1e+16]}`
	if got := Signature("Bash", args); got != want {
		t.Errorf("Signature = %s\nwant        %s", got, want)
	}
	long := Signature("Write", map[string]any{"content": strings.Repeat("x", 1000)})
	if len(long) != len("Write|")+400 {
		t.Errorf("long signature has %d characters after the tool, want 400", len(long)-len("Write|"))
	}
}

// inferBrute reads the rule for observed progress literally.
func inferBrute(events []WindowEntry) string {
	if len(events) > 6 {
		events = events[len(events)-6:]
	}
	if len(events) == 0 {
		return "advancing"
	}
	count := map[string]int{}
	for _, e := range events {
		count[e.Sig]++
	}
	if count[events[len(events)-1].Sig] >= 3 {
		return "circling"
	}
	trailing := 0
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].OK {
			break
		}
		trailing++
	}
	if trailing >= 2 {
		return "stuck"
	}
	return "advancing"
}

// The upstream observed-progress property: 400 random traces, the
// incremental Observer against the rule read literally.
func TestObservedProgress(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tools := []string{"Bash", "Read", "Edit"}
	for trace := 0; trace < 400; trace++ {
		var o Observer
		var all []WindowEntry
		for i, n := 0, rng.IntN(15); i < n; i++ {
			ev := ToolCall(tools[rng.IntN(3)], map[string]any{"n": json.Number(fmt.Sprint(rng.IntN(2)))}, rng.IntN(3) > 0)
			o.Record(ev)
			all = append(all, WindowEntry{Sig: ev.Signature(), OK: !ev.OK.Failed()})
			if got, want := o.Progress(), inferBrute(all); got != want {
				t.Fatalf("trace %d after %d calls: %s, want %s", trace, i+1, got, want)
			}
		}
	}
	// The named cases.
	same := WindowEntry{Sig: "Bash|{}", OK: true}
	fail := WindowEntry{Sig: "Bash|{\"x\": 1}", OK: false}
	for _, c := range []struct {
		w    []WindowEntry
		want string
	}{
		{nil, "advancing"},
		{[]WindowEntry{same, same, same}, "circling"},
		{[]WindowEntry{same, fail, fail}, "stuck"},
		{[]WindowEntry{fail, fail, same}, "advancing"},
		{[]WindowEntry{same, same, same, {Sig: "a", OK: true}, {Sig: "b", OK: true}, {Sig: "c", OK: true}, {Sig: "d", OK: true}}, "advancing"}, // the three repeats left the window
	} {
		if got, _ := InferProgress(c.w); got != c.want {
			t.Errorf("InferProgress(%v) = %s, want %s", c.w, got, c.want)
		}
	}
}

// Anchoring with events handed in: corroborated iff one succeeded;
// and the stall execution veto over the W most recent stored checks.
func TestSawAnchoringAndVeto(t *testing.T) {
	r := NewRun(RunOptions{})
	ok, bad := ToolCall("Bash", nil, true), ToolCall("Bash", nil, false)
	h := in("migrate the billing tables", adv, Dist(4))
	want := []struct {
		saw      []Event
		anchored float64
		reason   string
	}{
		{[]Event{ok}, 1, "grounded"},
		{[]Event{bad, ok}, 1, "advancing"},
		{[]Event{ok}, 1, "advancing"},
		{[]Event{ok}, 1, "advancing"},
		{[]Event{ok}, 1, "advancing"},    // stall by distance; checks 1-4 all backed → veto
		{[]Event{bad}, 0.5, "advancing"}, // not backed itself, but 2-5 were
		{nil, 0.5, "stalled"},            // 3-6: check 6 was not backed
	}
	for i, w := range want {
		r.Saw(w.saw...)
		v, _ := r.Step(h)
		if v.Anchored != w.anchored || v.Reason != w.reason {
			t.Errorf("step %d: anchored %v %s, want %v %s", i+1, v.Anchored, v.Reason, w.anchored, w.reason)
		}
	}
	if got := r.Corroboration(); got != 0.714 { // 5 of 7 checks
		t.Errorf("corroboration %v, want 0.714", got)
	}
	// The texts, from the reference's format strings (step 5 vetoed, step 7
	// stalled; distances all 4).
	r = NewRun(RunOptions{})
	var vs []CheckResult
	for _, w := range want {
		r.Saw(w.saw...)
		v, _ := r.Step(h)
		vs = append(vs, v)
	}
	if v := vs[4]; v.Advice != "Distance is flat, but every check in the window is backed by observed work — this reads as execution, not a stall. (Φ=0.00)" ||
		v.Why != "distance 4 no better than 4 from 4 steps ago, but 4 of 4 recent checks were corroborated, so the flat distance is execution rather than a stall" {
		t.Errorf("veto texts: %q / %q", v.Advice, v.Why)
	}
	if v := vs[6]; v.Advice != "Distance isn't falling. If it holds, return." || v.Why != "distance 4 is no better than 4 from 4 steps ago (recent: [4, 4, 4, 4, 4])" {
		t.Errorf("stall texts: %q / %q", v.Advice, v.Why)
	}
}

// Anchoring from the machine's counters: dark until they pass their
// value at the run's start; corroborated iff ok advanced since the last check.
func TestCounterAnchoring(t *testing.T) {
	store := NewMemStore()
	ctx := context.Background()
	if err := store.RecordToolEvent(ctx, ToolCall("Read", nil, true)); err != nil { // before the run: part of the base
		t.Fatal(err)
	}
	hd, _ := store.OpenRun(ctx, "ev")
	r := hd.Run()
	g := in("write the docs", adv, Dist(5))
	steps := []struct {
		before []bool // tool calls recorded before this check (ok flags)
		want   float64
	}{
		{nil, 0.5},           // dark: ok+fail equals the base
		{[]bool{false}, 0.5}, // evidence seen, but only a failure
		{[]bool{true}, 1},
		{nil, 0.5}, // nothing new
	}
	for i, s := range steps {
		for _, okFlag := range s.before {
			if err := store.RecordToolEvent(ctx, ToolCall("Bash", nil, okFlag)); err != nil {
				t.Fatal(err)
			}
		}
		v, _ := r.Step(g)
		if v.Anchored != s.want {
			t.Errorf("check %d: anchored %v, want %v", i+1, v.Anchored, s.want)
		}
	}
	if m := r.s.Evidence; !m.SawAny || m.Corroborated != 1 || m.Checks != 4 {
		t.Errorf("evidence marks %+v, want saw_any, 1 corroborated of 4", m)
	}
}

// The whole-run judgment's rules that need evidence, a budget or earlier
// runs.
func TestPhronesisEvidenceBudgetAndPriorRuns(t *testing.T) {
	// Rule 4 unbacked: work seen (failures only), 5 checks, distance closed.
	r := NewRun(RunOptions{})
	for d := 9; d >= 5; d-- {
		r.Saw(ToolCall("Bash", nil, false))
		if _, err := r.Step(in("port the parser", adv, Dist(d))); err != nil {
			t.Fatal(err)
		}
	}
	if j := r.Phronesis(); j.Verdict != JudgmentUnbacked || j.Control.Decision != ControlVerify {
		t.Errorf("unbacked: got %s / %s, want unbacked / verify", j.Verdict, j.Control.Decision)
	}
	// Rule 1 over-budget, and control stop when the budget is spent.
	r = NewRun(RunOptions{MaxChecks: 3})
	for d := 9; d >= 7; d-- {
		if _, err := r.Step(in("port the parser", adv, Dist(d))); err != nil {
			t.Fatal(err)
		}
	}
	if j := r.Phronesis(); j.Verdict != JudgmentOverBudget || j.Control.Decision != ControlStop ||
		j.Because != "3 checks against a budget of 3. This is a count, not an assessment of the work." ||
		j.Control.Because != "3 checks against a budget of 3. A count, not an assessment." {
		t.Errorf("budget: got %s / %s (%q, %q), want over-budget / stop", j.Verdict, j.Control.Decision, j.Because, j.Control.Because)
	}
	// The budget counts the checks on the current ground: after a reground
	// two checks are not three, and reads.checks says two.
	r = NewRun(RunOptions{MaxChecks: 3})
	if _, err := r.Step(in("port the parser", adv, Dist(9))); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Step(in("port the parser", adv, Dist(8))); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Step(StepInput{Goal: "write the release notes", Progress: adv, Distance: Dist(6), UserTurn: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Step(in("write the release notes", adv, Dist(5))); err != nil {
		t.Fatal(err)
	}
	if j := r.Phronesis(); j.Verdict == JudgmentOverBudget || j.Control.Decision == ControlStop || j.Control.Reads.Checks != 2 {
		t.Errorf("after a reground: %s / %s, reads.checks %d; want no budget stop and 2 checks", j.Verdict, j.Control.Decision, j.Control.Reads.Checks)
	}
	// narrow names every flat distance, beyond the stall window's five.
	r = NewRun(RunOptions{})
	for k, d := range []int{6, 7, 7, 7, 7, 7, 7, 8} {
		if _, err := r.Step(StepInput{Goal: "port the parser", Progress: adv, Distance: Dist(d), ParentGoal: fmt.Sprint("p", k)}); err != nil {
			t.Fatal(err)
		}
	}
	if j := r.Phronesis(); j.Verdict != JudgmentNarrow || j.Because != "Distance has sat at 7, 7, 7, 7, 7, 7, 8 for 7 checks without falling, and 8 is still far from done." {
		t.Errorf("narrow: %s %q", j.Verdict, j.Because)
	}
	// Rule 3: two earlier runs on the same task, this one judged and not
	// closing → abandon; a third earlier run → control stop.
	shared := NewMemContexts()
	for i := 0; i < 3; i++ {
		prior := NewRun(RunOptions{Contexts: shared})
		if _, err := prior.Step(in("port the parser", adv, Dist(5))); err != nil {
			t.Fatal(err)
		}
		r := NewRun(RunOptions{Contexts: shared})
		for k := 0; k < 3; k++ {
			if _, err := r.Step(StepInput{Goal: "port the parser", Progress: adv, Distance: Dist(5), ParentGoal: fmt.Sprint("p", k)}); err != nil {
				t.Fatal(err)
			}
		}
		j := r.Phronesis()
		priorRuns := 2*i + 1 // each round adds a prior run and a judged run
		wantVerdict, wantControl := JudgmentContinue, ControlProceed
		if priorRuns >= 2 {
			wantVerdict = JudgmentAbandon
		}
		if priorRuns >= 3 {
			wantControl = ControlStop
		}
		if j.Scores.Recurrence != priorRuns || j.Verdict != wantVerdict || j.Control.Decision != wantControl {
			t.Errorf("round %d: prior runs %d, %s / %s; want %d, %s / %s", i, j.Scores.Recurrence, j.Verdict, j.Control.Decision, priorRuns, wantVerdict, wantControl)
		}
	}
	// Rule 5's counsel is hard only with corroboration.
	soft := wrongProblemRun(false).Phronesis()
	hard := wrongProblemRun(true).Phronesis()
	if soft.Verdict != JudgmentWrongProblem || hard.Verdict != JudgmentWrongProblem || soft.Counsel == hard.Counsel ||
		!strings.Contains(hard.Counsel, "not solving what you set out to solve") || !strings.Contains(soft.Counsel, "Check the ground before acting") {
		t.Errorf("wrong-problem counsel: soft %q, hard %q", soft.Counsel, hard.Counsel)
	}
}

func wrongProblemRun(corroborated bool) *Run {
	r := NewRun(RunOptions{})
	for _, g := range []string{"fix the contrast gate", "rewrite the about page", "tune the footer colours", "rename css variables"} {
		r.Saw(ToolCall("Edit", nil, corroborated))
		if _, err := r.Step(in(g, adv, Dist(6))); err != nil {
			panic(err)
		}
	}
	return r
}

// A context entry keeps counts, the best distance (none counted as 5) and
// the 20 most recent run ids.
func TestContextEntry(t *testing.T) {
	var e ContextEntry
	for i := 0; i < 25; i++ {
		e.Apply(ContextStep{ID: "ctx_x", Tokens: []string{"x"}, Distance: NoDistance, Reason: "advancing", Run: fmt.Sprint("r", i), Laserscore: "⟨x⟩ advancing d?"})
	}
	e.Apply(ContextStep{ID: "ctx_x", Distance: Dist(3), Reason: "grounded", Run: "r24"})
	if e.Checks != 26 || e.BestDistance != 3 || e.SessionCount != 25 || len(e.Sessions) != 20 || e.Sessions[0] != "r5" ||
		e.Sessions[19] != "r24" || e.Outcomes["advancing"] != 25 || e.Spellings["⟨x⟩ advancing d?"] != 25 {
		t.Errorf("entry %+v", e)
	}
}

// A run saved and reloaded between every step says what an uninterrupted
// run says (upstream seq 9, the sin/cos cycle, checked against the vector).
func TestRunSurvivesStore(t *testing.T) {
	store := NewMemStore()
	ctx := context.Background()
	goals := []string{"differentiate sin", "differentiate cos", "differentiate negative sin", "differentiate negative cos"}
	dists := []int{5, 3, 4, 2}
	want := []string{"grounded", "advancing", "advancing", "goal-drift", "advancing", "advancing", "stalled", "oscillating"}
	for i := 0; i < 8; i++ {
		h, err := store.OpenRun(ctx, "sincos")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.OpenRun(ctx, "sincos"); err == nil {
			t.Fatal("a run was opened twice")
		}
		v, _ := h.Run().Step(in(goals[i%4], adv, Dist(dists[i%4])))
		if v.Reason != want[i] {
			t.Fatalf("step %d: %s, want %s", i+1, v.Reason, want[i])
		}
		if err := h.Save(ctx); err != nil {
			t.Fatal(err)
		}
		h.Close()
	}
	r, err := store.ReadRun(ctx, "sincos")
	if err != nil || len(r.Steps()) != 8 {
		t.Fatalf("ReadRun: %v, %d steps", err, len(r.Steps()))
	}
	if d, reason, ok := r.LastVerdict(); !ok || !d || reason != "oscillating" {
		t.Errorf("LastVerdict = %v %q %v", d, reason, ok)
	}
	if _, err := store.ReadRun(ctx, "nope"); !errors.Is(err, ErrNoRun) {
		t.Errorf("ReadRun(nope) = %v, want ErrNoRun", err)
	}
	if _, _, ok := NewRun(RunOptions{}).LastVerdict(); ok {
		t.Error("LastVerdict before any check reports ok")
	}
	if j := NewRun(RunOptions{}).Judgment(); j != JudgmentUngrounded {
		t.Errorf("Judgment of an empty run = %q", j)
	}
}

// Ceiling claims that are not in vectors/ceiling.json: the hits.
func TestMarkHits(t *testing.T) {
	c := Mark("That’s why it failed", "", "grep found nothing")
	want := []Claim{{"cause", "that’s why"}, {"observation", "grep found"}}
	if fmt.Sprint(c.Hits) != fmt.Sprint(want) || *c.Grounded != 0.5 {
		t.Errorf("hits %v grounded %v, want %v 0.5", c.Hits, *c.Grounded, want)
	}
}

// Modulation, from the grammar's depths and presets.
func TestModulate(t *testing.T) {
	v := func(reason string) CheckResult { return CheckResult{Reason: reason, Advice: "advice of " + reason} }
	cases := []struct {
		reason, team, role string
		ret                bool
		advice             string
	}{
		{"advancing", "deep-search", "explorer", false, "advice of advancing"}, // not a drift mode: the verdict's own advice
		{"excursion", "", "", false, "advice of excursion"},
		{"stalled", "", "", true, "advice of stalled"},            // unstyled: every drift returns
		{"stalled", "", "checker", true, "advice of stalled"},     // a role with no team is unstyled too
		{"stalled", "deep-search", "", true, "advice of stalled"}, // a team with no role: unstyled
		{"stalled", "deep-search", "explorer", false, "explorer (recurse: deep) tolerates stalled — recursing on."},
		{"goal-drift", "deep-search", "explorer", true, "advice of goal-drift"},
		// The checker's text is the one the reference acts on (its package's
		// presets, as its modulate answers in the mcp vectors), not its
		// grammar copy's, which opens "The exploration has drifted. ".
		{"stalled", "deep-search", "checker", true, "Restate the goal and verify the last step against it."},
		{"oscillating", "iterative-refinement", "drafter", true, "advice of oscillating"}, // the grammar's balanced depth has it
		{"goal-drift", "iterative-refinement", "critic", false, "critic (recurse: balanced) tolerates goal-drift — recursing on."},
		{"ungrammatical", "iterative-refinement", "critic", true, "You are agreeing, not improving. Name one concrete flaw and change it."},
		{"self-report:stuck", "adversarial-deliberation", "advocate-b", false, "advocate-b (recurse: deep) tolerates self-report:stuck — recursing on."},
	}
	for _, c := range cases {
		m, err := Modulate(v(c.reason), c.team, c.role)
		if err != nil || m.Return != c.ret || m.Advice != c.advice {
			t.Errorf("Modulate(%s, %s, %s) = %+v, %v; want return %v advice %q", c.reason, c.team, c.role, m, err, c.ret, c.advice)
		}
	}
	// The basis and who decided, as the reference reports them.
	for _, c := range []struct {
		reason, team, role, basis, gotTeam, gotRole string
	}{
		{"advancing", "deep-search", "explorer", "advancing is not a drift mode", "deep-search", "explorer"},
		{"stalled", "", "checker", "unstyled — every drift returns", "", ""},
		{"stalled", "deep-search", "", "unstyled — every drift returns", "deep-search", ""},
		{"stalled", "deep-search", "checker", "checker recurses tight", "deep-search", "checker"},
	} {
		m, _ := Modulate(v(c.reason), c.team, c.role)
		if m.Basis != c.basis || m.Team != c.gotTeam || m.Role != c.gotRole {
			t.Errorf("Modulate(%s, %q, %q) = %+v; want basis %q team %q role %q", c.reason, c.team, c.role, m, c.basis, c.gotTeam, c.gotRole)
		}
	}
	if b, _ := json.Marshal(Modulation{Return: true, Advice: "a", Basis: "b"}); string(b) != `{"return":true,"advice":"a","basis":"b","team":null,"role":null}` {
		t.Errorf("JSON %s", b)
	}
	// Unknown names are errors whatever the verdict, listing the valid ones.
	if _, err := Modulate(v("advancing"), "nope", "x"); err == nil || err.Error() != "no preset named 'nope' (presets: adversarial-deliberation, deep-search, iterative-refinement)" {
		t.Errorf("unknown team: %v", err)
	}
	if _, err := Modulate(v("grounded"), "deep-search", "critic"); err == nil || err.Error() != "deep-search has no role 'critic' (roles: explorer, checker)" {
		t.Errorf("unknown role: %v", err)
	}
	if d := Depths(); len(d["tight"]) != 9 || len(d["deep"]) != 3 {
		t.Errorf("depths %v", d)
	}
}

// Explore readings, derived by hand.
func TestExplorer(t *testing.T) {
	var x Explorer
	r := x.Ground("map the auth flow") // {auth, flow, map}
	if r.Reading != ExploreOpened || r.Novelty != 1 || r.Temperature != nil || r.Trailscore != "⟨auth|flow|map⟩ ×1" {
		t.Fatalf("first ground: %+v", r)
	}
	x.Step()
	x.Step()
	r = x.Ground("map the billing flow") // {billing→bill, flow, map}: novelty 1/3, staying 2/4
	if r.Reading != ExploreSearching || r.Novelty != 0.33 || r.Staying != 0.5 || r.Commitment != 3 || r.Revisit != 0 {
		t.Fatalf("second ground: %+v", r)
	}
	r = x.Ground("map the auth flow") // back: staying 0.5 < 0.6, revisit 1.0 with ground 1
	if r.Reading != ExploreRevisiting || r.Revisit != 1 || r.Novelty != 0 || r.Commitment != 1 {
		t.Fatalf("third ground: %+v", r)
	}
	r = x.Ground("trace the token refresh") // all new; W=4 grounds: temperature (1+1/3+0+1)/4
	if r.Temperature == nil || *r.Temperature != 0.58 {
		t.Fatalf("fourth ground: %+v", r)
	}
	r = x.Ground("audit session cookies") // grounds 1-4 before it: 3,1,1,1 steps → not all < 2
	if r.Reading == ExploreThrashing {
		t.Fatalf("fifth ground: %+v", r)
	}
	r = x.Ground("check csrf headers") // grounds 2-5: 1 step each → thrashing
	if r.Reading != ExploreThrashing {
		t.Fatalf("sixth ground: %+v", r)
	}

	// The advice is the reference's, per reading.
	var a Explorer
	if r := a.Ground("map the auth flow"); r.Advice != "First ground. Everything from here is measured against the path, not against this." {
		t.Errorf("opened advice %q", r.Advice)
	}
	if r := a.Ground("map the billing flow"); r.Advice != "New ground, 33% of it unvisited. The path is still opening." {
		t.Errorf("searching advice %q", r.Advice)
	}
	if r := a.Ground("map the auth flow"); r.Advice != "This ground overlaps one you already left (100%). You have been here. Either finish it or say why it is different." {
		t.Errorf("revisiting advice %q", r.Advice)
	}

	// Decided on the exact overlap: 25/42 = 0.595… reports as 0.60 but is
	// below revisit_min 0.6, so it is not a revisit.
	shared, more := "", ""
	for i := 0; i < 25; i++ {
		shared += fmt.Sprintf(" s%d", i)
	}
	for i := 0; i < 9; i++ {
		more += fmt.Sprintf(" m%d", i)
	}
	var e Explorer
	e.Ground(shared + " u1 u2 u3 u4 u5 u6 u7 u8") // 33 tokens
	e.Ground("paint the shed")
	if r := e.Ground(shared + more); r.Revisit != 0.6 || r.Reading == ExploreRevisiting {
		t.Errorf("revisit 25/42: %+v — rounded before comparing", r)
	}
	// Stopword-only grounds share nothing: not staying, not revisiting.
	var q Explorer
	q.Ground("the")
	q.Ground("a")
	if r := q.Ground("of"); r.Reading == ExploreRevisiting || r.Staying != 0 || r.Revisit != 0 {
		t.Errorf("empty grounds: %+v", r)
	}

	var s Explorer
	for _, g := range []string{"fix the login", "fix the login page", "fix the login page", "fix the login page", "fix the login page"} {
		r = s.Ground(g)
		s.Step()
		s.Step()
	}
	// Novelties 1, 1/3, 0, 0, 0 → the last four are not all ≤ 0.15 until the
	// fifth ground, whose window is 1/3, 0, 0, 0 → narrowing (0 < 1/3)...
	if r.Reading != ExploreNarrowing {
		t.Fatalf("fifth repeat: %+v", r)
	}
	r = s.Ground("fix the login page") // window 0,0,0,0 → settled
	if r.Reading != ExploreSettled || *r.Temperature != 0 {
		t.Fatalf("sixth repeat: %+v", r)
	}
}

// A delta merged at once gives what its steps give one by one (with fewer
// than maxSessions runs, the documented exact case), on top of any entry.
func TestContextDeltaMatchesSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for trial := 0; trial < 200; trial++ {
		var start ContextEntry
		for i := 0; i < rng.IntN(3); i++ {
			start.Apply(ContextStep{ID: "ctx_a", Tokens: []string{"a"}, At: base, Distance: Dist(7), Reason: "grounded", Run: fmt.Sprint("old", i)})
		}
		one, all := start.Clone(), start.Clone()
		var d ContextDelta
		var order []string // the runs by last occurrence, worked out plainly
		cut := rng.IntN(30)
		for i, n := 0, 1+rng.IntN(30); i < n; i++ {
			if i == cut { // a delta read back (as a store reads one) goes on the same
				data, _ := json.Marshal(&d)
				d = ContextDelta{}
				if err := json.Unmarshal(data, &d); err != nil {
					t.Fatal(err)
				}
			}
			s := ContextStep{ID: "ctx_a", Tokens: []string{"a"}, At: base.Add(time.Duration(i) * time.Second),
				Distance: Dist(rng.IntN(11)), Reason: []string{"advancing", "stalled", "goal-drift"}[rng.IntN(3)],
				Run: fmt.Sprint("r", rng.IntN(6)), Laserscore: fmt.Sprint("⟨a⟩ advancing d", rng.IntN(3))}
			if rng.IntN(4) == 0 {
				s.Distance, s.Laserscore = NoDistance, ""
			}
			one.Apply(s)
			d.Add(s)
			order = append(slices.DeleteFunc(order, func(r string) bool { return r == s.Run }), s.Run)
		}
		if !slices.Equal(d.Runs, order) {
			t.Fatalf("trial %d: the delta's runs %v, want %v", trial, d.Runs, order)
		}
		all.Merge(&d)
		if a, b := fmt.Sprintf("%+v", one), fmt.Sprintf("%+v", all); a != b {
			t.Fatalf("trial %d:\nsteps %s\ndelta %s", trial, a, b)
		}
	}
}
