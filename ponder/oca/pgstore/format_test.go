package pgstore

import (
	"encoding/json"
	"testing"

	"github.com/laserkit/laserkit/ponder/oca"
)

func TestSessionContent(t *testing.T) {
	cases := []struct {
		s    oca.Session
		pass int
		want string
	}{
		{oca.Session{Slug: "ui-2026-08-24", Subject: "the UI", Lens: "ui", Project: "laserkit", Passes: 4}, 0,
			"[ui-2026-08-24] the UI :: lens=ui project=laserkit passes=4 mode=deliberate"},
		// Values with spaces are JSON-quoted; an empty one too, so the field is visible.
		{oca.Session{Slug: "the-ui-2026-08-24", Subject: "the UI", Project: "my project", Passes: 2}, 3,
			`[the-ui-2026-08-24] the UI :: lens="" project="my project" passes=2 mode=deliberate pass=3`},
		{oca.Session{Slug: "s", Subject: "x", Lens: `a"b`, Project: "tab\there", Passes: 1}, 0,
			`[s] x :: lens="a\"b" project="tab\there" passes=1 mode=deliberate`},
		{oca.Session{Slug: "s", Subject: "x", Lens: "<ui>&", Project: "日本", Passes: 1}, 0,
			`[s] x :: lens=<ui>& project=日本 passes=1 mode=deliberate`},
	}
	for _, c := range cases {
		if got := sessionContent(c.s, c.pass); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

func TestNumbersAndEscapes(t *testing.T) {
	for v, want := range map[float64]string{0.18: "0.18", 1e-7: "0.0000001", 2.5: "2.5", 3: "3", 1.5e21: "1500000000000000000000"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %s, want %s", v, got, want)
		}
	}
	if got := likeLiteral(`50%_a\b`); got != `50\%\_a\\b` {
		t.Errorf("likeLiteral = %s", got)
	}
}

func TestCanonicalJSON(t *testing.T) {
	got, err := canonicalJSON(json.RawMessage(` { "b" : 1.50, "a" : [null, "<&>"], "c": {"z":1,"y":2} } `), "x")
	if want := `{"a":[null,"<&>"],"b":1.50,"c":{"y":2,"z":1}}`; err != nil || got != want {
		t.Errorf("canonicalJSON = %s, %v; want %s", got, err, want)
	}
	if _, err := canonicalJSON(json.RawMessage(`{`), "the counts"); err == nil {
		t.Error("invalid JSON accepted")
	}
}

func TestScore(t *testing.T) {
	// confirmed: +min(0.2, (1−0.5)·0.3) = +0.15; refuted: −min(0.3, 0.9·0.4) = −0.3.
	c := score(pending{forecast: 0.3, confidence: 0.5}, 0.26)
	if c.status != "confirmed" || !approx(c.delta, 0.15) || !approx(c.surprise, 0.04) {
		t.Errorf("confirmed case: %+v", c)
	}
	c = score(pending{forecast: 0.3, confidence: 0.9}, 0.1)
	if c.status != "refuted" || !approx(c.delta, -0.3) {
		t.Errorf("refuted case: %+v", c)
	}
	// About 0.05 away still holds (float arithmetic gives 0.04999…); 0.06 does not.
	if c := score(pending{forecast: 0.25, confidence: 0.5}, 0.3); c.status != "confirmed" {
		t.Errorf("0.25 vs 0.3: %s (surprise %v)", c.status, c.surprise)
	}
	if c := score(pending{forecast: 0.25, confidence: 0.5}, 0.31); c.status != "refuted" {
		t.Errorf("0.25 vs 0.31: %s", c.status)
	}
}

func approx(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }
