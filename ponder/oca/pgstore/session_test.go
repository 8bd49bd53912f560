package pgstore_test

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/ponder/oca"
	"github.com/laserkit/laserkit/ponder/oca/pgstore"
	"github.com/laserkit/laserkit/ponder/oca/pgstore/pgtest"
)

func f(v float64) *float64 { return &v }
func str(s string) *string { return &s }

func openStore(t *testing.T, dsn string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.OpenStore(testCtx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

var uiSession = oca.Session{Slug: "ui-2026-08-24", Subject: "the UI", Lens: "ui", Project: "laserkit", Passes: 4}

func voice(arg string, conf float64) oca.Voice { return oca.Voice{Argument: &arg, Confidence: &conf} }

// deliberate opens the pass's row with the empath silent on odd passes.
func deliberate(t *testing.T, s *pgstore.Store, se oca.Session, pass int) oca.DeliberationResult {
	t.Helper()
	r := oca.DeliberationRecord{Session: se, Pass: pass, Stakes: "high",
		Skeptic: voice("nothing is falsified", 0.7), Builder: voice("pin the button width", 0.6),
		Dreamer: voice("the empty state is unaudited", 0.5)}
	if pass%2 == 0 {
		r.Empath = voice("severity of f0002 is overstated", 0.4)
	} else {
		r.Empath = oca.Voice{Argument: str("  ")} // blank: silent
	}
	return must[oca.DeliberationResult](t)(s.RecordDeliberation(testCtx(t), r))
}

// TestFullSession drives a four-pass session through every operation and
// reads all five tables back through the OCA bridge's read-back queries.
// Expected values are derived by hand in the comments.
func TestFullSession(t *testing.T) {
	t.Parallel()
	s := openStore(t, pgtest.NewOCADatabase(t))
	ctx := testCtx(t)
	se := uiSession

	if prior := must[[]oca.Episode](t)(s.PriorPondering(ctx, se.Subject)); len(prior) != 0 {
		t.Fatalf("fresh database has prior pondering %v", prior)
	}
	start := must[oca.StartResult](t)(s.RecordStart(ctx, se))
	if start.ID != start.EpisodeID || start.SessionRef != "ponder:ui-2026-08-24" {
		t.Errorf("start = %+v", start)
	}

	// Pass 1: survey. No churn, so no forecast.
	d1 := deliberate(t, s, se, 1)
	if d1.Voices != 3 {
		t.Errorf("pass 1 voices = %d, want 3 (empath blank)", d1.Voices)
	}
	if r := must[oca.ResolveResult](t)(s.ResolveDeliberation(ctx, se, d1.DeliberationID, "add 5")); !r.Resolved {
		t.Error("pass 1 deliberation not resolved")
	}
	p1 := must[oca.PassResult](t)(s.RecordPass(ctx, oca.PassRecord{Session: se, Pass: 1, Metrics: oca.PassMetrics{
		Coverage: 0.5, Voices: 3, DeltaVoices: 1, ConfidenceFloor: 2, Ops: oca.OpCounts{Add: 5}, Verdict: "blocked"}}))
	if p1.Lock != "held" || p1.CloseNote != "nothing-pending" || p1.OpenNote != "no-churn-signal" ||
		p1.ForecastChurn != nil || p1.HypothesisID != nil || p1.ClosedHypothesisID != nil {
		t.Errorf("pass 1 = %+v", p1)
	}

	// Pass 2: churn 0.3 against the agent's 0.25 → surprise 0.05; opens 0.6 × 0.3 = 0.18 for pass 3.
	d2 := deliberate(t, s, se, 2)
	must[oca.ResolveResult](t)(s.ResolveDeliberation(ctx, se, d2.DeliberationID, "edit 2, change 1"))
	p2 := must[oca.PassResult](t)(s.RecordPass(ctx, oca.PassRecord{Session: se, Pass: 2,
		Predict: &oca.Forecast{Churn: 0.25, Claim: "settling"},
		Metrics: oca.PassMetrics{Coverage: 1, Churn: f(0.3), Novelty: f(0), Thrash: f(0), Surprise: f(0.05),
			Voices: 4, DeltaVoices: 2, Ops: oca.OpCounts{Edit: 2, Change: 1}, Verdict: "continue"}}))
	if p2.CloseNote != "nothing-pending" || p2.OpenNote != "opened" || p2.HypothesisID == nil ||
		p2.ForecastChurn == nil || !near(*p2.ForecastChurn, 0.18) {
		t.Errorf("pass 2 = %+v", p2)
	}

	obs := must[oca.ObservationResult](t)(s.RecordObservation(ctx, oca.ObservationRecord{Session: se, Type: "thrash",
		Description: "f0002 flipped twice", Evidence: json.RawMessage(`{"b":[1,2],"a":"f0002"}`), Severity: 0.8,
		Intervention: str("pin f0002")}))
	open := must[[]oca.Observation](t)(s.OpenObservations(ctx, se))
	if len(open) != 1 || open[0].ID != obs.ObservationID || open[0].Severity != 0.8 || open[0].Type != "thrash" ||
		string(open[0].Evidence) != `{"a": "f0002", "b": [1, 2]}` {
		t.Errorf("open observations = %+v", open)
	}

	// Pass 3: churn 0.1. Closes 0.18: surprise 0.08 > 0.05 → refuted, confidence 0.5 moves
	// by −min(0.3, 0.5·0.4) = −0.2; opens 0.6 × 0.1 = 0.06 at 0.5 − 0.2 = 0.3.
	d3 := deliberate(t, s, se, 3)
	must[oca.ResolveResult](t)(s.ResolveDeliberation(ctx, se, d3.DeliberationID, "delete 1"))
	p3 := must[oca.PassResult](t)(s.RecordPass(ctx, oca.PassRecord{Session: se, Pass: 3,
		Predict: &oca.Forecast{Churn: 0.18, Claim: "decay"},
		Metrics: oca.PassMetrics{Coverage: 1, Churn: f(0.1), Novelty: f(0), Thrash: f(0), Surprise: f(0.08),
			Voices: 3, DeltaVoices: 1, Ops: oca.OpCounts{Delete: 1}, Verdict: "continue"}}))
	if p3.CloseNote != "closed" || p3.OpenNote != "opened" || p3.ClosedStatus == nil || *p3.ClosedStatus != "refuted" ||
		*p3.ClosedHypothesisID != *p2.HypothesisID || !near(*p3.ClosedSurprise, 0.08) {
		t.Errorf("pass 3 = %+v", p3)
	}

	// Pass 4: churn 0.05. Closes 0.06: surprise 0.01 ≤ 0.05 → confirmed, confidence 0.3 moves
	// by +min(0.2, 0.7·0.3) = +0.2; opens 0.6 × 0.05 = 0.03 at 0.5.
	d4 := deliberate(t, s, se, 4)
	must[oca.ResolveResult](t)(s.ResolveDeliberation(ctx, se, d4.DeliberationID, "no deltas"))
	p4 := must[oca.PassResult](t)(s.RecordPass(ctx, oca.PassRecord{Session: se, Pass: 4,
		Metrics: oca.PassMetrics{Coverage: 1, Churn: f(0.05), Novelty: f(0), Thrash: f(0), Surprise: nil,
			Voices: 4, Verdict: "stop"}}))
	if p4.CloseNote != "closed" || p4.OpenNote != "opened" || *p4.ClosedStatus != "confirmed" {
		t.Errorf("pass 4 = %+v", p4)
	}

	conv := must[oca.ConvergedResult](t)(s.RecordConverged(ctx, oca.ConvergedRecord{Session: se, Converged: true, Passes: 4,
		Outcome: json.RawMessage(`{"live": 4, "deleted": 1, "coverage": 1}`)}))
	if conv.ExpiredHypotheses != 1 {
		t.Errorf("converged expired %d forecasts, want 1 (the one for pass 5)", conv.ExpiredHypotheses)
	}
	must[oca.ApplyResult](t)(s.RecordApply(ctx, oca.ApplyRecord{Session: se, Outcome: json.RawMessage(`{"findings":4}`)}))

	// episodic_memory: the whole session, in order.
	tl := must[[]pgstore.TimelineRow](t)(s.Timeline(ctx, se.Slug))
	var types []string
	for _, r := range tl {
		types = append(types, r.EventType)
	}
	if want := []string{"ponder_start", "ponder_pass", "ponder_pass", "ponder_pass", "ponder_pass", "ponder_converged", "ponder_applied"}; !slices.Equal(types, want) {
		t.Fatalf("timeline = %q", types)
	}
	base := "[ui-2026-08-24] the UI :: lens=ui project=laserkit passes=4 mode=deliberate"
	want := []struct {
		content, prediction, outcome string
		surprise, importance         *float64
	}{
		{base, "", "", nil, f(0.7)},
		{base + " pass=1", "", `{"churn":null,"confidenceFloor":2,"coverage":0.5,"deltaVoices":1,"novelty":null,"ops":{"add":5,"change":0,"delete":0,"edit":0},"skeptic":false,"surprise":null,"thrash":null,"verdict":"blocked","voices":3}`, nil, f(0.5)},
		{base + " pass=2", `{"churn":0.25,"claim":"settling"}`, `{"churn":0.3,"confidenceFloor":0,"coverage":1,"deltaVoices":2,"novelty":0,"ops":{"add":0,"change":1,"delete":0,"edit":2},"skeptic":false,"surprise":0.05,"thrash":0,"verdict":"continue","voices":4}`, f(0.05), f(0.5)},
		{base + " pass=3", `{"churn":0.18,"claim":"decay"}`, `{"churn":0.1,"confidenceFloor":0,"coverage":1,"deltaVoices":1,"novelty":0,"ops":{"add":0,"change":0,"delete":1,"edit":0},"skeptic":false,"surprise":0.08,"thrash":0,"verdict":"continue","voices":3}`, f(0.08), f(0.5)},
		{base + " pass=4", "", `{"churn":0.05,"confidenceFloor":0,"coverage":1,"deltaVoices":0,"novelty":0,"ops":{"add":0,"change":0,"delete":0,"edit":0},"skeptic":false,"surprise":null,"thrash":0,"verdict":"stop","voices":4}`, nil, f(0.5)},
		{base, "", `{"coverage":1,"deleted":1,"live":4}`, nil, f(0.8)},
		{base, "", `{"findings":4}`, nil, f(0.75)},
	}
	for i, w := range want {
		r := tl[i]
		if r.Content != w.content || deref(r.Prediction) != w.prediction || deref(r.ActualOutcome) != w.outcome {
			t.Errorf("episode %d (%s):\n content %q\n predict %q\n outcome %q", i, r.EventType, r.Content, deref(r.Prediction), deref(r.ActualOutcome))
		}
		if !eqf(r.Surprise, w.surprise) || !eqf(r.Importance, w.importance) {
			t.Errorf("episode %d (%s): surprise %v importance %v, want %v %v", i, r.EventType, fp(r.Surprise), fp(r.Importance), fp(w.surprise), fp(w.importance))
		}
	}

	// hypotheses: the prediction ledger starts at pass 2 and ends expired.
	ledger := must[[]pgstore.LedgerRow](t)(s.Ledger(ctx, se.Slug))
	type lrow struct {
		made, about       int
		forecast, conf    float64
		status            string
		surprise, delta   *float64
		modelUpdatePrefix string
	}
	wantLedger := []lrow{
		{2, 3, 0.18, 0.5, "refuted", f(0.08), f(-0.2), "decay=0.6 forecast=0.18 actual=0.1 surprise="},
		{3, 4, 0.06, 0.3, "confirmed", f(0.01), f(0.2), "decay=0.6 forecast=0.06 actual=0.05 surprise="},
		{4, 5, 0.03, 0.5, "expired", nil, nil, ""},
	}
	if len(ledger) != len(wantLedger) {
		t.Fatalf("ledger has %d rows: %+v", len(ledger), ledger)
	}
	for i, w := range wantLedger {
		r := ledger[i]
		if *r.ForecastMadeInPass != w.made || *r.AboutPass != w.about || !near(*r.Forecast, w.forecast) ||
			!near(r.Confidence, w.conf) || *r.Status != w.status || !eqf(r.Surprise, w.surprise) ||
			!eqf(r.ConfidenceDelta, w.delta) || !modelUpdateOK(r.ModelUpdate, w.modelUpdatePrefix, w.surprise) {
			t.Errorf("ledger row %d = made %v about %v forecast %v conf %v %v surprise %v delta %v %q",
				i, *r.ForecastMadeInPass, *r.AboutPass, *r.Forecast, r.Confidence, deref(r.Status),
				fp(r.Surprise), fp(r.ConfidenceDelta), deref(r.ModelUpdate))
		}
	}
	conn := connect(t, s.Conn().Config().ConnString())
	var claim, prediction, testType, sourceType, actual string
	var testedNull bool
	if err := conn.QueryRow(ctx, `SELECT claim, prediction, test_type, source_type, actual_outcome, tested_at IS NULL
		FROM hypotheses WHERE id = $1`, *p2.HypothesisID).Scan(&claim, &prediction, &testType, &sourceType, &actual, &testedNull); err != nil {
		t.Fatal(err)
	}
	if claim != "ponder ui-2026-08-24: pass 3 churn ≈ 0.18" || prediction != "churn(pass 3) = 0.18 (0.6 × 0.3)" ||
		testType != "passive_observation" || sourceType != "inference" || actual != "0.1" || testedNull {
		t.Errorf("closed forecast: %q %q %q %q actual %q tested_at null %v", claim, prediction, testType, sourceType, actual, testedNull)
	}

	// Cross-session self-model: one held, one missed, mean surprise (0.08 + 0.01)/2 = 0.045.
	sm := must[[]pgstore.SelfModelRow](t)(s.SelfModel(ctx))
	if len(sm) != 1 || sm[0].Domain != "ponder:ui-2026-08-24" || sm[0].Held != 1 || sm[0].Missed != 1 || !eqf(sm[0].MeanSurprise, f(0.045)) {
		t.Errorf("self model = %+v", sm)
	}

	// deliberations: four rows, resolved, silent empath NULL on odd passes.
	ps := must[[]pgstore.PerspectiveRow](t)(s.Perspectives(ctx, se.Slug))
	if len(ps) != 4 {
		t.Fatalf("perspectives: %d rows", len(ps))
	}
	for i, p := range ps {
		pass := i + 1
		wantVoices, silent := 4, false
		if pass%2 == 1 {
			wantVoices, silent = 3, true
		}
		if p.Decision != "ponder ui-2026-08-24 pass "+string(rune('0'+pass))+": revise the finding set for the UI" ||
			deref(p.Stakes) != "high" || p.Voices != wantVoices || (p.EmpathArgument == nil) != silent ||
			p.Resolution == nil || p.CompletedAt == nil || deref(p.SkepticArgument) != "nothing is falsified" {
			t.Errorf("perspective %d = %+v", pass, p)
		}
	}

	// metacognitive_observations.
	or := must[[]pgstore.ObservationRow](t)(s.Observations(ctx, se.Slug))
	if len(or) != 1 || or[0].Type != "thrash" || deref(or[0].Intervention) != "pin f0002" || *or[0].InterventionApplied {
		t.Errorf("observations = %+v", or)
	}

	// cognitive_events: 4 deliberation_result, 3 formed, 2 tested, 1 alert, 1 trace.
	evs := must[[]pgstore.EventRow](t)(s.Events(ctx, se.Slug))
	count := map[string]int{}
	for _, e := range evs {
		count[e.EventType]++
		var pl map[string]any
		if err := json.Unmarshal(e.Payload, &pl); err != nil {
			t.Fatal(err)
		}
		for k, v := range pl {
			if k == "" || v == "" || v == nil {
				t.Errorf("%s payload has an empty key or value: %s", e.EventType, e.Payload)
			}
		}
		if pl["slug"] != se.Slug {
			t.Errorf("%s payload lacks the slug: %s", e.EventType, e.Payload)
		}
		switch e.EventType {
		case "deliberation_result":
			if _, ok := pl["resolution"]; ok {
				t.Errorf("deliberation_result carries a resolution outside the fallback: %s", e.Payload)
			}
			if pl["deliberation_id"] == nil || pl["stakes"] != "high" {
				t.Errorf("deliberation_result payload %s", e.Payload)
			}
			if !eqf(e.Priority, f(0.5)) {
				t.Errorf("deliberation_result priority %v", fp(e.Priority))
			}
		case "hypothesis_tested":
			if sp := pl["surprise"].(float64); !near(*e.Priority, sp) {
				t.Errorf("hypothesis_tested priority %v, want its surprise %v", *e.Priority, sp)
			}
		case "hypothesis_formed":
			if pl["for_pass"] == nil || pl["forecastChurn"] == nil || pl["hypothesis_id"] == nil {
				t.Errorf("hypothesis_formed payload %s", e.Payload)
			}
		case "metacognition_alert":
			if !eqf(e.Priority, f(0.8)) || pl["observation_id"] == nil || pl["type"] != "thrash" {
				t.Errorf("alert %v %s", fp(e.Priority), e.Payload)
			}
		case "reasoning_trace_created":
			if pl["outcome"] != "converged" || pl["passes"] != 4.0 || pl["expiredHypotheses"] != 1.0 {
				t.Errorf("trace payload %s", e.Payload)
			}
		}
	}
	if want := map[string]int{"deliberation_result": 4, "hypothesis_formed": 3, "hypothesis_tested": 2,
		"metacognition_alert": 1, "reasoning_trace_created": 1}; !mapsEqual(count, want) {
		t.Errorf("event counts = %v, want %v", count, want)
	}

	// Sessions list.
	ss := must[[]pgstore.SessionSummary](t)(s.Sessions(ctx))
	if len(ss) != 1 || ss[0].Slug != se.Slug || ss[0].Passes != 4 || !ss[0].Converged || !ss[0].Applied {
		t.Errorf("sessions = %+v", ss)
	}

	// A later session on the same subject sees the converged and start
	// rows, newest first, never the applied or pass rows.
	prior := must[[]oca.Episode](t)(s.PriorPondering(ctx, "the ui"))
	if len(prior) != 2 || prior[0].Content != base || deref(prior[0].ActualOutcome) != `{"coverage":1,"deleted":1,"live":4}` ||
		prior[1].ActualOutcome != nil {
		t.Errorf("prior pondering = %+v", prior)
	}
}

// modelUpdateOK checks "decay=… forecast=… actual=… surprise=<s>" with s
// the measured surprise (which float arithmetic makes 0.07999… for 0.08).
func modelUpdateOK(got *string, prefix string, surprise *float64) bool {
	if prefix == "" {
		return got == nil
	}
	rest, ok := strings.CutPrefix(deref(got), prefix)
	v, err := strconv.ParseFloat(rest, 64)
	return ok && err == nil && near(v, *surprise)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func eqf(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || near(*a, *b)) }

// fp prints a nullable float.
func fp(p *float64) any {
	if p == nil {
		return "NULL"
	}
	return *p
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// `ponder oca sessions` counts passes, not ponder_pass rows: judge writes a
// row each time it runs, and a re-run judge is not another pass.
func TestSessionsCountPassesNotRows(t *testing.T) {
	t.Parallel()
	s := openStore(t, pgtest.NewOCADatabase(t))
	ctx := testCtx(t)
	se := uiSession
	must[oca.StartResult](t)(s.RecordStart(ctx, se))
	m := oca.PassMetrics{Coverage: 1, Voices: 4, Verdict: "continue"}
	for _, pass := range []int{1, 1, 1, 2, 2} {
		must[oca.PassResult](t)(s.RecordPass(ctx, oca.PassRecord{Session: se, Pass: pass, Metrics: m}))
	}
	ss := must[[]pgstore.SessionSummary](t)(s.Sessions(ctx))
	if len(ss) != 1 || ss[0].Passes != 2 {
		t.Errorf("sessions = %+v; want one session of 2 passes (5 ponder_pass rows)", ss)
	}
}
