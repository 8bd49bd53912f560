package pgstore_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/ponder/oca"
	"github.com/laserkit/laserkit/ponder/oca/pgstore"
	"github.com/laserkit/laserkit/ponder/oca/pgstore/pgtest"
)

// battery is strings that careless SQL or psql quoting would break or run:
// every string must be stored and read back byte for byte, and none may
// execute.
var battery = []string{
	`it's`,
	`it''s`,
	"two\nlines",
	"carriage\rreturn",
	"a\ttab",
	`a; b`,
	`back\slash`,
	"naïve — 日本語 ✓ 🚀",
	`DROP TABLE hypotheses;`,
	`'; DELETE FROM episodic_memory; --`,
	`\! touch /tmp/ponder-pwned`,
	`:notavar`,
	`:'alsonot'`,
	`:"alsonot"`,
	`$1 $$ $q$`,
	"all at once: it's \"x\" ; \\ \n\r\t DROP TABLE hypotheses; '; DELETE FROM episodic_memory; -- \\! :notavar :'alsonot' 日本",
}

func TestInjectionBatteryRoundTripsByteExact(t *testing.T) {
	t.Parallel()
	s := openStore(t, pgtest.NewOCADatabase(t))
	ctx := testCtx(t)
	for i, x := range battery {
		se := oca.Session{Slug: fmt.Sprintf("inj-%02d", i), Subject: x, Lens: "ui", Project: "p", Passes: 4}
		must[oca.StartResult](t)(s.RecordStart(ctx, se))
		d := must[oca.DeliberationResult](t)(s.RecordDeliberation(ctx, oca.DeliberationRecord{Session: se, Pass: 1,
			Stakes: x, Skeptic: voice(x, 0.1), Builder: voice(x, 0.2), Dreamer: voice(x, 0.3), Empath: voice(x, 0.4)}))
		must[oca.ResolveResult](t)(s.ResolveDeliberation(ctx, se, d.DeliberationID, x))
		must[oca.PassResult](t)(s.RecordPass(ctx, oca.PassRecord{Session: se, Pass: 2, Predict: &oca.Forecast{Churn: 0.2, Claim: x},
			Metrics: oca.PassMetrics{Churn: f(0.4), Verdict: x}}))
		evidence, _ := json.Marshal(map[string]string{x: x})
		must[oca.ObservationResult](t)(s.RecordObservation(ctx, oca.ObservationRecord{Session: se, Type: "stuck_state",
			Description: x, Evidence: evidence, Severity: 0.3, Intervention: &x}))
		outcome, _ := json.Marshal(map[string]string{"note": x})
		must[oca.ConvergedResult](t)(s.RecordConverged(ctx, oca.ConvergedRecord{Session: se, Passes: 2, Outcome: outcome}))

		tl := must[[]pgstore.TimelineRow](t)(s.Timeline(ctx, se.Slug))
		if len(tl) != 3 {
			t.Fatalf("%q: %d episodes", x, len(tl))
		}
		content := "[" + se.Slug + "] " + x + " :: lens=ui project=p passes=4 mode=deliberate"
		if tl[0].Content != content || tl[1].Content != content+" pass=2" || tl[2].Content != content {
			t.Errorf("%q: content read back as %q", x, tl[0].Content)
		}
		var pred struct{ Claim string }
		var act struct{ Verdict string }
		var fin struct{ Note string }
		if json.Unmarshal([]byte(deref(tl[1].Prediction)), &pred) != nil || pred.Claim != x ||
			json.Unmarshal([]byte(deref(tl[1].ActualOutcome)), &act) != nil || act.Verdict != x ||
			json.Unmarshal([]byte(deref(tl[2].ActualOutcome)), &fin) != nil || fin.Note != x {
			t.Errorf("%q: JSON columns read back as %q %q %q", x, deref(tl[1].Prediction), deref(tl[1].ActualOutcome), deref(tl[2].ActualOutcome))
		}
		ps := must[[]pgstore.PerspectiveRow](t)(s.Perspectives(ctx, se.Slug))
		if len(ps) != 1 || ps[0].Decision != "ponder "+se.Slug+" pass 1: revise the finding set for "+x ||
			deref(ps[0].Stakes) != x || deref(ps[0].SkepticArgument) != x || deref(ps[0].BuilderArgument) != x ||
			deref(ps[0].DreamerArgument) != x || deref(ps[0].EmpathArgument) != x || deref(ps[0].Resolution) != x {
			t.Errorf("%q: deliberation read back as %+v", x, ps)
		}
		obs := must[[]pgstore.ObservationRow](t)(s.Observations(ctx, se.Slug))
		var ev map[string]string
		if len(obs) != 1 || obs[0].Description != x || deref(obs[0].Intervention) != x ||
			json.Unmarshal(obs[0].Evidence, &ev) != nil || ev[x] != x {
			t.Errorf("%q: observation read back as %+v", x, obs)
		}
		prior := must[[]oca.Episode](t)(s.PriorPondering(ctx, x))
		if len(prior) == 0 || prior[0].Content != content {
			t.Errorf("%q: prior pondering found %+v", x, prior)
		}
	}

	// Nothing executed: every table is there with exactly the rows written.
	conn := connect(t, s.Conn().Config().ConnString())
	n := len(battery)
	for table, want := range map[string]int{
		"episodic_memory": 3 * n, "hypotheses": n, "deliberations": n,
		"metacognitive_observations": n, "cognitive_events": 4 * n,
	} {
		var got int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&got); err != nil || got != want {
			t.Errorf("%s: %d rows (%v), want %d", table, got, err, want)
		}
	}
	if got := probe(t, s.Conn().Config().ConnString()); len(got) != 0 {
		t.Errorf("schema damaged: missing %q", got)
	}
}

// %, _ and \ in a subject match themselves only.
func TestPriorPonderingMatchesLikeMetacharactersLiterally(t *testing.T) {
	t.Parallel()
	s := openStore(t, pgtest.NewOCADatabase(t))
	ctx := testCtx(t)
	subjects := []string{"50% width", "500 width", "a_b layout", "axb layout", `C:\dir`, `C:dir`}
	for i, sub := range subjects {
		must[oca.StartResult](t)(s.RecordStart(ctx, oca.Session{Slug: fmt.Sprintf("like-%d", i), Subject: sub, Lens: "ui", Passes: 4}))
	}
	for i, sub := range []string{"50% width", "a_b layout", `C:\dir`} {
		got := must[[]oca.Episode](t)(s.PriorPondering(ctx, sub))
		if len(got) != 1 || !strings.HasPrefix(got[0].Content, fmt.Sprintf("[like-%d] %s ::", 2*i, sub)) {
			t.Errorf("prior pondering %q = %+v, want only like-%d", sub, got, 2*i)
		}
	}
	// The escaping must not stop a plain substring from matching, case-insensitively.
	if got := must[[]oca.Episode](t)(s.PriorPondering(ctx, "WIDTH")); len(got) != 2 {
		t.Errorf("WIDTH matched %d sessions, want 2", len(got))
	}
	// At most five, newest first.
	for i := range 7 {
		must[oca.StartResult](t)(s.RecordStart(ctx, oca.Session{Slug: fmt.Sprintf("many-%d", i), Subject: "many", Passes: 4}))
	}
	got := must[[]oca.Episode](t)(s.PriorPondering(ctx, "many"))
	if len(got) != 5 || !strings.HasPrefix(got[0].Content, "[many-6]") || !strings.HasPrefix(got[4].Content, "[many-2]") {
		t.Errorf("many: %d episodes, first %q", len(got), got[0].Content)
	}
}

// The read-back queries select by slug literally too.
func TestReadBackSelectsSlugLiterally(t *testing.T) {
	t.Parallel()
	s := openStore(t, pgtest.NewOCADatabase(t))
	ctx := testCtx(t)
	for _, slug := range []string{"a_b-2026-01-01", "axb-2026-01-01"} {
		se := oca.Session{Slug: slug, Subject: "s", Passes: 4}
		must[oca.StartResult](t)(s.RecordStart(ctx, se))
		must[oca.DeliberationResult](t)(s.RecordDeliberation(ctx, oca.DeliberationRecord{Session: se, Pass: 1}))
	}
	if tl := must[[]pgstore.TimelineRow](t)(s.Timeline(ctx, "a_b-2026-01-01")); len(tl) != 1 {
		t.Errorf("timeline of a_b matched %d rows", len(tl))
	}
	if ps := must[[]pgstore.PerspectiveRow](t)(s.Perspectives(ctx, "a_b-2026-01-01")); len(ps) != 1 {
		t.Errorf("perspectives of a_b matched %d rows", len(ps))
	}
}
