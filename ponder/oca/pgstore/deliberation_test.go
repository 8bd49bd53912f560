package pgstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/ponder/oca"
	"github.com/laserkit/laserkit/ponder/oca/pgstore"
	"github.com/laserkit/laserkit/ponder/oca/pgstore/pgtest"
)

// Checklist 11: silent voices NULL, two-phase resolve, a rerun never
// overwrites, the fallback writes the row complete, and only the fallback's
// event carries a resolution.
func TestDeliberationPhases(t *testing.T) {
	t.Parallel()
	s := openStore(t, pgtest.NewOCADatabase(t))
	ctx := testCtx(t)
	se := oca.Session{Slug: "delib-2026-01-01", Subject: "the API", Passes: 4}
	other := oca.Session{Slug: "other-2026-01-01", Subject: "x", Passes: 4}

	// deliberate --skip: four NULL voices, stakes default medium.
	skip := must[oca.DeliberationResult](t)(s.RecordDeliberation(ctx, oca.DeliberationRecord{Session: se, Pass: 1}))
	if skip.Voices != 0 {
		t.Errorf("skip voices = %d", skip.Voices)
	}
	// Another session cannot resolve it, even with its id.
	if r := must[oca.ResolveResult](t)(s.ResolveDeliberation(ctx, other, skip.DeliberationID, "hijack")); r.Resolved {
		t.Error("another session resolved this session's row")
	}
	if r := must[oca.ResolveResult](t)(s.ResolveDeliberation(ctx, se, skip.DeliberationID, "first")); !r.Resolved || r.DeliberationID != skip.DeliberationID {
		t.Errorf("resolve = %+v", r)
	}
	if r := must[oca.ResolveResult](t)(s.ResolveDeliberation(ctx, se, skip.DeliberationID, "second")); r.Resolved {
		t.Error("a rerun rewrote the resolution")
	}
	// An open row stays open until judged.
	open := must[oca.DeliberationResult](t)(s.RecordDeliberation(ctx, oca.DeliberationRecord{Session: se, Pass: 2,
		Skeptic: voice("no", 0.9), Builder: oca.Voice{Argument: str("")}}))
	// Judge fallback: no open row at deliberate, so judge writes it complete.
	summary := "edit 1"
	fb := must[oca.DeliberationResult](t)(s.RecordDeliberation(ctx, oca.DeliberationRecord{Session: se, Pass: 3,
		Stakes: "low", Dreamer: voice("more", 0.5), Summary: &summary}))
	if fb.Voices != 1 {
		t.Errorf("fallback voices = %d", fb.Voices)
	}

	ps := must[[]pgstore.PerspectiveRow](t)(s.Perspectives(ctx, se.Slug))
	if len(ps) != 3 {
		t.Fatalf("%d rows", len(ps))
	}
	p1, p2, p3 := ps[0], ps[1], ps[2]
	if deref(p1.Stakes) != "medium" || p1.Voices != 0 || p1.SkepticArgument != nil || p1.SkepticConfidence != nil ||
		deref(p1.Resolution) != "first" || p1.CompletedAt == nil {
		t.Errorf("skipped pass = %+v", p1)
	}
	if p2.Resolution != nil || p2.CompletedAt != nil || p2.Voices != 1 || p2.BuilderArgument != nil {
		t.Errorf("open pass = %+v", p2)
	}
	if deref(p3.Resolution) != "edit 1" || p3.CompletedAt == nil || deref(p3.Stakes) != "low" {
		t.Errorf("fallback pass = %+v", p3)
	}
	_ = open

	var withResolution int
	for _, e := range must[[]pgstore.EventRow](t)(s.Events(ctx, se.Slug)) {
		var pl map[string]any
		if err := json.Unmarshal(e.Payload, &pl); err != nil {
			t.Fatal(err)
		}
		if r, ok := pl["resolution"]; ok {
			withResolution++
			if r != "edit 1" || pl["deliberation_id"] != float64(fb.DeliberationID) {
				t.Errorf("fallback payload %s", e.Payload)
			}
		}
	}
	if withResolution != 1 {
		t.Errorf("%d deliberation_result events carry a resolution, want only the fallback's", withResolution)
	}
}

// Bad input is refused before anything is written.
func TestRejectsBadInputWritingNothing(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewOCADatabase(t)
	s := openStore(t, dsn)
	ctx := testCtx(t)
	se := oca.Session{Slug: "bad-2026-01-01", Subject: "s", Passes: 4}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"unknown type", second(s.RecordObservation(ctx, oca.ObservationRecord{Session: se, Type: "bias", Description: "d", Severity: 0.5})), `unknown observation type "bias"`},
		{"severity", second(s.RecordObservation(ctx, oca.ObservationRecord{Session: se, Type: "thrash", Description: "d", Severity: 1.5})), "severity 1.5 is outside [0,1]"},
		{"evidence", second(s.RecordObservation(ctx, oca.ObservationRecord{Session: se, Type: "thrash", Description: "d", Severity: 0.5, Evidence: json.RawMessage(`{"a":`)})), "evidence is not valid JSON"},
		{"outcome", second(s.RecordConverged(ctx, oca.ConvergedRecord{Session: se, Outcome: json.RawMessage(`[1] [2]`)})), "final counts is not a single JSON value"},
		{"slug", second(s.RecordStart(ctx, oca.Session{Slug: "a[b]", Subject: "s"})), "contains [ or ]"},
		{"empty slug", second(s.RecordStart(ctx, oca.Session{Subject: "s"})), "session has no slug"},
		{"pass 0", second(s.RecordPass(ctx, passAt(se, 0, nil))), "pass 0 is not a pass number"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, c.err, c.want)
		}
	}
	conn := connect(t, dsn)
	var n int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM episodic_memory) + (SELECT count(*) FROM metacognitive_observations)
		+ (SELECT count(*) FROM cognitive_events) + (SELECT count(*) FROM hypotheses)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows written (%v)", n, err)
	}
}

func second[T any](_ T, err error) error { return err }

// A bad DSN is refused without echoing its password.
func TestOpenHidesPasswordOfBadDSN(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{"postgres://ponder:s3cret@localhost:notaport/oneiro", "host=localhost password=s3cret port=notaport"} {
		_, err := pgstore.Open(context.Background(), dsn)
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.HasPrefix(err.Error(), "invalid OCA DSN") {
			t.Errorf("%s: %v", dsn, err)
		}
	}
}

// With the database stopped mid-session every call fails within its
// deadline, the failed pass leaves nothing behind, and a new connection
// after a restart carries on.
func TestDatabaseStoppedMidSession(t *testing.T) {
	t.Parallel()
	c := pgtest.StartCluster(t)
	dsn := c.NewOCADatabase(t)
	se := oca.Session{Slug: "down-2026-01-01", Subject: "s", Passes: 4}
	s, err := pgstore.OpenStore(testCtx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	must[oca.PassResult](t)(s.RecordPass(testCtx(t), passAt(se, 2, f(0.5))))

	if err := c.Halt(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	began := time.Now()
	if _, err := s.RecordPass(ctx, passAt(se, 3, f(0.2))); err == nil {
		t.Fatal("RecordPass succeeded against a stopped server")
	}
	if _, err := pgstore.Open(ctx, dsn); err == nil {
		t.Fatal("Open succeeded against a stopped server")
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("failing took %v, beyond the 5 s budget", d)
	}

	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, dsn)
	if l := must[[]pgstore.LedgerRow](t)(s2.Ledger(testCtx(t), se.Slug)); len(l) != 1 || *l[0].Status != "pending" {
		t.Errorf("after the outage the ledger is %+v", l)
	}
	if r := must[oca.PassResult](t)(s2.RecordPass(testCtx(t), passAt(se, 3, f(0.2)))); notes(r) != "held/closed/opened" {
		t.Errorf("rerun after restart: %s", notes(r))
	}
}
