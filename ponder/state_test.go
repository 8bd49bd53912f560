package ponder

import (
	"strings"
	"testing"

	"github.com/laserkit/laserkit/ponder/ledger"
)

// ledgerOf numbers records as single-record batches.
func ledgerOf(recs ...ledger.Record) []ledger.Record {
	for i := range recs {
		recs[i].Seq, recs[i].Batch, recs[i].BatchSize = i+1, i+1, 1
	}
	return recs
}

func seed(id, path string) ledger.Record {
	return ledger.Record{Pass: 1, Type: ledger.UnitSeed, UnitID: id, Path: path}
}

func add(pass int, fid, uid, sev string, conf float64) ledger.Record {
	text := "t"
	return ledger.Record{Pass: pass, Type: ledger.Finding, Voice: ledger.Dreamer, Op: ledger.OpAdd, FindingID: fid, UnitID: uid, Severity: sev, Confidence: &conf, Text: &text}
}

func edit(pass int, fid string) ledger.Record {
	text := "sharper"
	return ledger.Record{Pass: pass, Type: ledger.Finding, Voice: ledger.Builder, Op: ledger.OpEdit, FindingID: fid, Text: &text}
}

func change(pass int, fid, sev string, conf *float64) ledger.Record {
	return ledger.Record{Pass: pass, Type: ledger.Finding, Voice: ledger.Empath, Op: ledger.OpChange, FindingID: fid, Severity: sev, Confidence: conf}
}

func del(pass int, fid string) ledger.Record {
	return ledger.Record{Pass: pass, Type: ledger.Finding, Voice: ledger.Skeptic, Op: ledger.OpDelete, FindingID: fid}
}

func unitOp(pass int, typ, uid string, phantom bool) ledger.Record {
	return ledger.Record{Pass: pass, Type: typ, UnitID: uid, Phantom: phantom}
}

func TestCoverageCountedDenominator(t *testing.T) {
	// U_counted = U_live ∪ U_ungraded-deleted.
	recs := ledgerOf(seed("u0001", "a"), seed("u0002", "b"), seed("u0003", "c"), seed("u0004", "d"),
		unitOp(1, ledger.UnitGrade, "u0001", false))
	steps := []struct {
		rec             ledger.Record
		graded, counted int
		why             string
	}{
		{unitOp(1, ledger.UnitDelete, "u0002", false), 1, 4, "a non-phantom delete of an ungraded unit keeps it counted"},
		{unitOp(1, ledger.UnitDelete, "u0003", true), 1, 3, "a phantom delete removes an ungraded unit"},
		{unitOp(1, ledger.UnitDelete, "u0001", false), 0, 2, "a unit deleted after grading leaves both sides"},
		{unitOp(1, ledger.UnitGrade, "u0002", false), 0, 1, "grading a deleted unit works (and it then leaves both sides)"},
		{add(1, "f0001", "u0004", "must", 0.9), 1, 1, "a finding add grades its unit"},
	}
	st := Replay(recs)
	if g, c := st.Grading(); g != 1 || c != 4 {
		t.Fatalf("start: %d/%d, want 1/4", g, c)
	}
	for _, s := range steps {
		st.apply(&s.rec)
		if g, c := st.Grading(); g != s.graded || c != s.counted {
			t.Errorf("%s: %d/%d, want %d/%d", s.why, g, c, s.graded, s.counted)
		}
	}
}

func TestMetricsByHand(t *testing.T) {
	base := []ledger.Record{seed("u0001", "a"), add(1, "f0001", "u0001", "must", 0.9), add(1, "f0002", "u0001", "should", 0.4)}
	cases := []struct {
		name                   string
		pass                   []ledger.Record
		churn, novelty, thrash float64
		live, floor, dv        int
	}{
		// revising 3 (edit, change, delete) over live 1 → 3, unclamped;
		// the delete falsifies a pass-1 claim, which is not thrash → 0.
		{"unclamped", []ledger.Record{edit(2, "f0001"), change(2, "f0001", "", f(0.95)), del(2, "f0002")}, 3, 0, 0, 1, 0, 3},
		// Two adds over live 4: novelty 2/4; churn 0; thrash 0 (no revising).
		{"novelty", []ledger.Record{add(2, "f0003", "u0001", "could", 0.7), add(2, "f0004", "u0001", "could", 0.2)}, 0, 0.5, 0, 4, 2, 1},
		// Everything deleted: live 0, floored at 1 → churn 2/1; both
		// deletes falsify pass-1 claims → thrash 0.
		{"floored", []ledger.Record{del(2, "f0001"), del(2, "f0002")}, 2, 0, 0, 0, 0, 1},
		// Silence: c = 0.
		{"silent", nil, 0, 0, 0, 2, 1, 0},
	}
	for _, c := range cases {
		st := Replay(ledgerOf(append(append([]ledger.Record{}, base...), c.pass...)...))
		m := computeMetrics(st, 2, &allVoices, &Forecast{Churn: 0.5}, 0.5)
		if *m.Churn != c.churn || *m.Novelty != c.novelty || *m.Thrash != c.thrash || m.Live != c.live || m.ConfidenceFloor != c.floor || m.DeltaVoices != c.dv {
			t.Errorf("%s: churn %v novelty %v thrash %v live %d floor %d deltaVoices %d", c.name, *m.Churn, *m.Novelty, *m.Thrash, m.Live, m.ConfidenceFloor, m.DeltaVoices)
		}
		if want := c.churn - 0.5; *m.Surprise != max(want, -want) {
			t.Errorf("%s: surprise %v, want |0.5 − %v|", c.name, *m.Surprise, c.churn)
		}
	}
	// Pass 1: churn, novelty, thrash and surprise are null, even with a forecast.
	m := computeMetrics(Replay(ledgerOf(base...)), 1, &allVoices, &Forecast{Churn: 0.3}, 0.5)
	if m.Churn != nil || m.Novelty != nil || m.Thrash != nil || m.Surprise != nil {
		t.Errorf("pass 1 metrics not null: %+v", m)
	}
	// No forecast: surprise null on pass 2.
	if m := computeMetrics(Replay(ledgerOf(base...)), 2, &allVoices, nil, 0.5); m.Surprise != nil {
		t.Error("surprise without a forecast")
	}
}

func addText(pass int, fid, uid, text string) ledger.Record {
	r := add(pass, fid, uid, "could", 0.6)
	r.Text = &text
	return r
}

func TestThrash(t *testing.T) {
	// Thrash is undoing a revision of pass k−1, never falsifying a claim
	// (SPEC.md §7): base has one pass-1 finding on u0001.
	base := []ledger.Record{seed("u0001", "a"), seed("u0002", "b"), add(1, "f0001", "u0001", "must", 0.9)}
	cases := []struct {
		name           string
		recs           []ledger.Record
		thrash, readds int // of pass 3
		falsified      int
	}{
		{"edit after an edit in k−1", []ledger.Record{edit(2, "f0001"), edit(3, "f0001")}, 1, 0, 0},
		{"edit after an edit in k−2 only", []ledger.Record{edit(1, "f0001"), edit(3, "f0001")}, 0, 0, 0},
		{"change back to the severity before the k−1 change", []ledger.Record{change(2, "f0001", "should", nil), change(3, "f0001", "must", nil)}, 1, 0, 0},
		{"change back to the confidence before the k−1 change", []ledger.Record{change(2, "f0001", "", f(0.5)), change(3, "f0001", "", f(0.9))}, 1, 0, 0},
		{"change onward, to a value never held", []ledger.Record{change(2, "f0001", "should", nil), change(3, "f0001", "could", nil)}, 0, 0, 0},
		{"change back with no change in k−1", []ledger.Record{change(1, "f0001", "should", nil), change(3, "f0001", "must", nil)}, 0, 0, 0},
		{"change of a field the k−1 change left alone", []ledger.Record{change(2, "f0001", "", f(0.5)), change(3, "f0001", "must", nil)}, 0, 0, 0},
		// The Skeptic falsifying a claim of the pass before: convergence.
		{"delete of a finding added in k−1", []ledger.Record{add(2, "f0002", "u0001", "could", 0.6), del(3, "f0002")}, 0, 0, 1},
		{"delete of a finding added earlier", []ledger.Record{del(3, "f0001")}, 0, 0, 0},
		// Re-raising what k−1 retracted (same unit, same text up to case
		// and spacing) undoes k−1's delete.
		{"add re-raising a finding deleted in k−1", []ledger.Record{addText(1, "f0002", "u0001", "Body read twice"), del(2, "f0002"),
			addText(3, "f0003", "u0001", "  body   READ twice ")}, 1, 1, 0},
		{"add re-raising a finding deleted in k−2", []ledger.Record{addText(1, "f0002", "u0001", "body read twice"), del(1, "f0002"),
			addText(3, "f0003", "u0001", "body read twice")}, 0, 0, 0},
		{"same text on another unit is not a re-raise", []ledger.Record{addText(1, "f0002", "u0001", "body read twice"), del(2, "f0002"),
			addText(3, "f0003", "u0002", "body read twice")}, 0, 0, 0},
		{"other text on the unit is not a re-raise", []ledger.Record{addText(1, "f0002", "u0001", "body read twice"), del(2, "f0002"),
			addText(3, "f0003", "u0001", "body read once")}, 0, 0, 0},
		// Deleted, re-raised in k−1, deleted again: undoing k−1's re-raise.
		{"delete of a finding re-raised in k−1", []ledger.Record{addText(1, "f0002", "u0001", "x"), del(1, "f0002"),
			addText(2, "f0003", "u0001", "x"), del(3, "f0003")}, 1, 0, 0},
	}
	for _, c := range cases {
		st := Replay(ledgerOf(append(append([]ledger.Record{}, base...), c.recs...)...))
		if p := st.Pass(3); p.Thrash != c.thrash || p.ReAdds != c.readds || p.Falsified != c.falsified {
			t.Errorf("%s: thrash %d, re-adds %d, falsified %d; want %d, %d, %d", c.name, p.Thrash, p.ReAdds, p.Falsified, c.thrash, c.readds, c.falsified)
		}
	}
	// The ratio: one re-raise (thrash) and one falsifying delete over the
	// revising delete plus the re-add → 1/2.
	st := Replay(ledgerOf(append(append([]ledger.Record{}, base...),
		addText(1, "f0002", "u0001", "x"), add(2, "f0003", "u0002", "could", 0.6), del(2, "f0002"),
		addText(3, "f0004", "u0001", "x"), del(3, "f0003"))...))
	m := computeMetrics(st, 3, &allVoices, nil, 0.5)
	if *m.Thrash != 0.5 || m.ReAdds != 1 || m.Falsified != 1 || m.Revising != 1 {
		t.Errorf("thrash %v (re-adds %d, falsified %d, revising %d), want 1/(1+1) = 0.5", *m.Thrash, m.ReAdds, m.Falsified, m.Revising)
	}
}

func TestSlugs(t *testing.T) {
	cases := []struct{ subject, lens, want string }{
		{"the UI", "ui", "ui-2026-08-24"}, // a lens names the session
		{"The Checkout Flow!", "", "the-checkout-flow-2026-08-24"},
		{"[ui] weird", "", "ui-weird-2026-08-24"},
		{"a very long subject that goes on and on forever", "", "a-very-long-subject-that-goes-on-2026-08-24"},
		{"x", "UI Review 2", "ui-review-2-2026-08-24"},
		{"日本語", "", "ponder-2026-08-24"},
	}
	for _, c := range cases {
		got := baseSlug(c.subject, c.lens, "2026-08-24")
		if got != c.want {
			t.Errorf("baseSlug(%q, %q) = %q, want %q", c.subject, c.lens, got, c.want)
		}
		if strings.ContainsAny(got, "[]") || !validSlug(got) || len(got)-len("-2026-08-24") > 32 {
			t.Errorf("%q is not a valid slug", got)
		}
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden", "-x", "a b", "ui]"} {
		if validSlug(bad) {
			t.Errorf("validSlug(%q) = true", bad)
		}
	}
}

func TestCleanUnitPath(t *testing.T) {
	for in, want := range map[string]string{"a/b.go": "a/b.go", "./a//b.go": "a/b.go", "Checkout › Pay": "Checkout › Pay"} {
		if got, err := cleanUnitPath(in); err != nil || got != want {
			t.Errorf("cleanUnitPath(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../x", "/etc/passwd", "a/../../x"} {
		if _, err := cleanUnitPath(bad); err == nil {
			t.Errorf("cleanUnitPath(%q) accepted", bad)
		}
	}
}

// A hand-edited ledger can hold unit records without ids; replaying it must
// not panic (it did: idNumber sliced before checking the length).
func TestReplayToleratesMissingIDs(t *testing.T) {
	recs := []ledger.Record{
		{Pass: 1, Type: ledger.UnitSeed, Path: "a.go"},
		{Pass: 1, Type: ledger.UnitAdd, UnitID: "u", Path: "b.go"},
		seed("u0001", "c.go"),
	}
	st := Replay(recs)
	if st == nil {
		t.Fatal("Replay returned nil")
	}
	if got := idNumber(""); got != 0 {
		t.Fatalf("idNumber(\"\") = %d, want 0", got)
	}
	if got := idNumber("u0042"); got != 42 {
		t.Fatalf("idNumber(u0042) = %d, want 42", got)
	}
}

func TestNormaliseText(t *testing.T) {
	for in, want := range map[string]string{
		"body read twice":        "body read twice",
		"  Body   READ\ttwice\n": "body read twice",
		"body read twice ":       "body read twice",
		" body":                  "body",
		"a  b":                   "a b",
		"Ärger mit Ü":            "ärger mit ü",
		"":                       "",
		"x\u00a0y":               "x y", // no-break space is white space too
	} {
		if got := normaliseText(in); got != want {
			t.Errorf("normaliseText(%q) = %q, want %q", in, got, want)
		}
	}
}
