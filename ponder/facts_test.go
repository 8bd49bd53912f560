package ponder

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func fullVoices() *DeliberationInput {
	arg := func(s string) VoiceArg { return VoiceArg{Argument: ptr(s), Confidence: ptr(0.8)} }
	return &DeliberationInput{Voices: Voices{Skeptic: arg("check it"), Builder: arg("fix it"), Dreamer: arg("more"), Empath: arg("weigh it")}}
}

// startIn starts a session in a new project holding the files named (each
// holding its name).
func startIn(t *testing.T, o StartOptions, files ...string) (*Engine, *StartResult) {
	t.Helper()
	root := t.TempDir()
	for _, n := range files {
		if err := os.WriteFile(filepath.Join(root, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := New(root, nil)
	st, err := e.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	return e, st
}

// factsSession runs a four-pass session that converges by Rule 6: pass 1
// raises two findings and grades the rest, pass 2's Skeptic retracts one,
// passes 3 and 4 are silent.
func factsSession(t *testing.T) (*Engine, string) {
	t.Helper()
	e, st := startIn(t, StartOptions{Subject: "the parser architecture", Passes: 4}, "a.go", "b.go", "c.go", "d.go")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.Units("", UnitsOptions{From: []byte("a.go\nb.go\nc.go\nd.go\n"), FromName: "-"})
	must(err)
	for k := 1; k <= 4; k++ {
		if k >= 2 {
			_, err = e.Predict("", 0.1, nil)
			must(err)
		}
		_, err = e.Deliberate("", fullVoices(), false)
		must(err)
		switch k {
		case 1:
			_, err = e.Delta("", []byte(`{"voice":"dreamer","op":"add","unitId":"u0001","severity":"must","confidence":0.9,"text":"a leaks"}
{"voice":"dreamer","op":"add","unitId":"u0002","severity":"could","confidence":0.7,"text":"b is slow"}`))
			must(err)
			_, err = e.Grade("", []string{"u0003", "d.go"}, nil)
			must(err)
		case 2:
			_, err = e.Delta("", []byte(`{"voice":"skeptic","op":"delete","findingId":"f0001","reason":"the helper escapes it"}`))
			must(err)
		}
		_, err = e.Judge("")
		must(err)
		decision := "continue"
		if k == 4 {
			decision = "stop"
		}
		_, err = e.Decide("", decision)
		must(err)
	}
	return e, st.Slug
}

// TestFacts: per-pass facts derived by hand from the session's ledger.
func TestFacts(t *testing.T) {
	e, slug := factsSession(t)
	f, err := e.Facts(slug)
	if err != nil {
		t.Fatal(err)
	}
	if f.Subject != "the parser architecture" || f.Status != StatusConverged || len(f.Passes) != 4 {
		t.Fatalf("facts = %+v", f)
	}
	if strings.Join(f.Files, " ") != "a.go b.go c.go d.go" {
		t.Fatalf("files = %v", f.Files)
	}
	p1, p2, p3, p4 := f.Passes[0], f.Passes[1], f.Passes[2], f.Passes[3]
	if p1.Graded != 4 || p1.Counted != 4 || p1.Churn != nil || p1.Quiet || p1.Judgement == nil || p1.Judgement.Verdict != VerdictContinue || p1.Judgement.Rule != "R2" || *p1.Decision != "continue" {
		t.Fatalf("pass 1 = %+v", p1)
	}
	var by []string
	for _, g := range p1.GradedUnits {
		by = append(by, g.Path+":"+g.By)
	}
	if strings.Join(by, " ") != "a.go:finding b.go:finding c.go:grade d.go:grade" {
		t.Fatalf("pass 1 graded units = %v", by)
	}
	if len(p1.FindingOps) != 2 || p1.FindingOps[0].Finding != "f0001" || p1.FindingOps[0].Path != "a.go" || p1.FindingOps[1].Text != "b is slow" {
		t.Fatalf("pass 1 finding ops = %+v", p1.FindingOps)
	}
	// Pass 2: one delete over one live finding left: churn 1/1; the
	// delete falsifies a pass-1 claim, which is not thrash (0/1).
	if p2.Live != 1 || *p2.Churn != 1 || *p2.Novelty != 0 || *p2.Thrash != 0 || p2.Quiet || len(p2.GradedUnits) != 0 ||
		len(p2.FindingOps) != 1 || p2.FindingOps[0].Op != "delete" || p2.FindingOps[0].Path != "a.go" {
		t.Fatalf("pass 2 = %+v", p2)
	}
	if !p3.Quiet || *p3.Churn != 0 || p3.Judgement.Verdict != VerdictContinue || !p4.Quiet || p4.Judgement.Verdict != VerdictStop || p4.Judgement.Rule != "R6" || *p4.Decision != "stop" {
		t.Fatalf("passes 3, 4 = %+v\n%+v", p3, p4)
	}
	// What session.json, judge.json and predict.json add (ponder/report
	// draws them): the forecast made before passes 2-4, the metrics judge
	// measured, the decision's time, and the session's coverage now.
	if p1.Forecast != nil || p2.Forecast == nil || p2.Forecast.Churn != 0.1 || p4.Forecast == nil {
		t.Fatalf("forecasts = %+v, %+v, %+v", p1.Forecast, p2.Forecast, p4.Forecast)
	}
	if m := p4.Judgement.Metrics; m.Voices != 4 || !m.Skeptic || m.Coverage != 1 || p4.DecidedAt == nil || p4.Skipped || p4.OverBudget {
		t.Fatalf("pass 4 judged = %+v, decided at %v", m, p4.DecidedAt)
	}
	if f.Grading != (Grading{Graded: 4, Counted: 4, Value: 1}) || f.Live != 1 {
		t.Fatalf("now: coverage %+v, live %d", f.Grading, f.Live)
	}
	stamp, err := e.SessionStamp(slug)
	if err != nil || stamp == "" {
		t.Fatalf("stamp = %q, %v", stamp, err)
	}
	if slugs, _ := e.Slugs(); len(slugs) != 1 || slugs[0] != slug {
		t.Fatalf("slugs = %v", slugs)
	}
}

// TestFactsPhantomBack: a phantom delete whose file came back counts again
// in the facts, as judge counts it.
func TestFactsPhantomBack(t *testing.T) {
	e, st := startIn(t, StartOptions{Subject: "s", Passes: 3}, "a.go")
	if _, err := e.Units("", UnitsOptions{From: []byte("a.go\ngone.go\n"), FromName: "-"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deliberate("", fullVoices(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Delta("", []byte(`{"type":"unit-delete","unitId":"u0002","phantom":true,"voice":"skeptic"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Grade("", []string{"a.go"}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := e.Facts(st.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Passes[0]; p.Graded != 1 || p.Counted != 1 || len(p.Phantoms) != 1 || len(p.Phantoms[0].OnDisk) != 0 {
		t.Fatalf("with the phantom holding: %+v", p)
	}
	if err := os.WriteFile(filepath.Join(e.Root, "gone.go"), []byte("back"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ = e.Facts(st.Slug)
	if p := f.Passes[0]; p.Graded != 1 || p.Counted != 2 || len(p.Phantoms[0].OnDisk) != 1 {
		t.Fatalf("with the file back: %+v", p)
	}
}

type haltStub struct {
	halt *Halt
	err  error
}

func (h *haltStub) SessionHalt(root, slug string) (*Halt, error) { return h.halt, h.err }

// TestHaltRefusesWrites: a halted session refuses every writing command
// with the reason and the way back; reading goes on; a lifted halt lets
// the command through.
func TestHaltRefusesWrites(t *testing.T) {
	e, st := startIn(t, StartOptions{Subject: "s", Passes: 3}, "a.go")
	if _, err := e.Units("", UnitsOptions{Scan: "."}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deliberate("", fullVoices(), false); err != nil {
		t.Fatal(err)
	}
	stub := &haltStub{halt: &Halt{Reason: "shares a ground with ponder:other", Release: "laserbrain supervise release ponder:" + st.Slug}}
	e.Halts = stub
	for name, call := range map[string]func() error{
		"delta": func() error {
			_, err := e.Delta("", []byte(`{"voice":"dreamer","op":"add","unitId":"u0001","severity":"must","confidence":0.9,"text":"x"}`))
			return err
		},
		"grade": func() error { _, err := e.Grade("", []string{"a.go"}, nil); return err },
		"judge": func() error { _, err := e.Judge(""); return err },
	} {
		err := call()
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindState || !strings.Contains(pe.Message, "halted: shares a ground with ponder:other") ||
			!strings.Contains(pe.Message, "laserbrain supervise release ponder:"+st.Slug) {
			t.Errorf("%s on a halted session: %v", name, err)
		}
	}
	res, err := e.Status("")
	if err != nil {
		t.Fatalf("status on a halted session: %v", err)
	}
	if res.Halted == nil || res.Halted.Reason != stub.halt.Reason || res.Halted.Release != stub.halt.Release || !slices.Equal(res.Next, []string{"abort"}) {
		t.Fatalf("status on a halted session shows %+v, next %v", res.Halted, res.Next)
	}
	halt := stub.halt
	stub.halt, stub.err = nil, errors.New("store unreadable")
	if _, err := e.Grade("", []string{"a.go"}, nil); err == nil || !strings.Contains(err.Error(), "cannot tell whether it is halted") {
		t.Fatalf("an unreadable halt store: %v", err)
	}
	stub.err = nil
	if _, err := e.Grade("", []string{"a.go"}, nil); err != nil {
		t.Fatalf("after the release: %v", err)
	}
	if res, err := e.Status(""); err != nil || res.Halted != nil {
		t.Fatalf("status after the release: %+v, %v", res, err)
	}

	// Halted again, the session may still be ended: abort goes through and
	// records the halt it ended under.
	stub.halt = halt
	ab, err := e.Abort("")
	if err != nil {
		t.Fatalf("abort on a halted session: %v", err)
	}
	if ab.Halted == nil || *ab.Halted != halt.Reason {
		t.Fatalf("abort of a halted session reports halted %v", ab.Halted)
	}
	s, err := readSession(e.sessionDir(st.Slug))
	if err != nil || s.Status != StatusAborted || s.AbortedHalted == nil || *s.AbortedHalted != halt.Reason {
		t.Fatalf("session.json after aborting a halted session: %+v, %v", s, err)
	}
}
