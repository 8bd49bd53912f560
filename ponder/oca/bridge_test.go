package oca

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// stubBackend is a small in-test Backend for the bridge's mode and log logic.
// Database behaviour itself is tested against real PostgreSQL in pgstore.
type stubBackend struct {
	report ProbeReport
	fail   error         // returned by every record call
	block  bool          // every record call waits for its deadline
	panics bool          // every record call panics
	pass   PassResult    // what RecordPass returns
	closed *atomic.Int32 // counts Close calls
}

func (s *stubBackend) do(ctx context.Context) error {
	if s.panics {
		panic("stub exploded")
	}
	if s.block {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.fail
}

func (s *stubBackend) Probe(ctx context.Context) (ProbeReport, error) { return s.report, nil }
func (s *stubBackend) PriorPondering(ctx context.Context, subject string) ([]Episode, error) {
	return nil, s.do(ctx)
}
func (s *stubBackend) RecordStart(ctx context.Context, _ Session) (StartResult, error) {
	return StartResult{ID: 1, EpisodeID: 1, SessionRef: "episodic_memory:1"}, s.do(ctx)
}
func (s *stubBackend) RecordPass(ctx context.Context, _ PassRecord) (PassResult, error) {
	return s.pass, s.do(ctx)
}
func (s *stubBackend) RecordDeliberation(ctx context.Context, _ DeliberationRecord) (DeliberationResult, error) {
	return DeliberationResult{DeliberationID: 7}, s.do(ctx)
}
func (s *stubBackend) ResolveDeliberation(ctx context.Context, _ Session, id int64, _ string) (ResolveResult, error) {
	return ResolveResult{DeliberationID: id, Resolved: true}, s.do(ctx)
}
func (s *stubBackend) RecordObservation(ctx context.Context, _ ObservationRecord) (ObservationResult, error) {
	return ObservationResult{ObservationID: 3, EventID: 4}, s.do(ctx)
}
func (s *stubBackend) RecordConverged(ctx context.Context, _ ConvergedRecord) (ConvergedResult, error) {
	return ConvergedResult{}, s.do(ctx)
}
func (s *stubBackend) RecordApply(ctx context.Context, _ ApplyRecord) (ApplyResult, error) {
	return ApplyResult{}, s.do(ctx)
}
func (s *stubBackend) ExpireForecasts(ctx context.Context, _ Session) (ExpireResult, error) {
	return ExpireResult{}, s.do(ctx)
}
func (s *stubBackend) SessionRows(ctx context.Context, _ Session) (SessionRows, error) {
	return SessionRows{}, s.do(ctx)
}
func (s *stubBackend) OpenObservations(ctx context.Context, _ Session) ([]Observation, error) {
	return nil, s.do(ctx)
}
func (s *stubBackend) Close() {
	if s.closed != nil {
		s.closed.Add(1)
	}
}

var completeSchema = ProbeReport{Schema: true}

type harness struct {
	bridge   *Bridge
	env      map[string]string
	connects *atomic.Int32
	stderr   *bytes.Buffer
	dir      string
}

// newHarness builds a bridge whose connector answers with be (or connErr).
func newHarness(t *testing.T, env map[string]string, be Backend, connErr error) *harness {
	t.Helper()
	h := &harness{env: env, connects: new(atomic.Int32), stderr: new(bytes.Buffer), dir: t.TempDir()}
	h.bridge = New(Config{
		Getenv: func(k string) string { return h.env[k] },
		Connect: func(ctx context.Context, dsn string) (Backend, error) {
			h.connects.Add(1)
			if connErr != nil {
				return nil, connErr
			}
			return be, nil
		},
		Stderr:          h.stderr,
		CallTimeout:     50 * time.Millisecond,
		AutoProbeBudget: 50 * time.Millisecond,
		OnProbeBudget:   50 * time.Millisecond,
	})
	return h
}

func (h *harness) log(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(h.dir, "oca.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// callAll calls every export once and reports which returned non-nil.
func callAll(b *Bridge) (nonNil []string) {
	s := Session{Slug: "ui-2026-08-24", Subject: "the UI"}
	if b.Probe() != nil {
		nonNil = append(nonNil, "probe")
	}
	if b.PriorPondering("the UI") != nil {
		nonNil = append(nonNil, "priorPondering")
	}
	if b.RecordStart(s) != nil {
		nonNil = append(nonNil, "recordStart")
	}
	if b.RecordPass(PassRecord{Session: s, Pass: 2}) != nil {
		nonNil = append(nonNil, "recordPass")
	}
	if b.RecordDeliberation(DeliberationRecord{Session: s, Pass: 1}) != nil {
		nonNil = append(nonNil, "recordDeliberation")
	}
	if b.ResolveDeliberation(s, 1, "x") != nil {
		nonNil = append(nonNil, "resolveDeliberation")
	}
	if b.RecordObservation(ObservationRecord{Session: s}) != nil {
		nonNil = append(nonNil, "recordObservation")
	}
	if b.RecordConverged(ConvergedRecord{Session: s}) != nil {
		nonNil = append(nonNil, "recordConverged")
	}
	if b.RecordApply(ApplyRecord{Session: s}) != nil {
		nonNil = append(nonNil, "recordApply")
	}
	if b.OpenObservations(s) != nil {
		nonNil = append(nonNil, "openObservations")
	}
	return nonNil
}

// lineFormat is an oca.log line (SPEC.md §8): <ISO-8601 UTC, ms, Z> <function> <KIND> <message>
// dsn=<masked> [mode=<m>] [ms=<n>].
var lineFormat = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z [A-Za-z]+ (FAIL|SKIP|DISABLED|FATAL) .+ dsn=\S+( mode=(auto|on|off))?( ms=\d+)?$`)

func TestOffConnectsToNothingAndLogsNothing(t *testing.T) {
	h := newHarness(t, map[string]string{"PONDER_OCA": "off"}, &stubBackend{report: completeSchema}, nil)
	h.bridge.Attach(h.dir)
	if got := callAll(h.bridge); len(got) != 0 {
		t.Errorf("under off these exports returned non-nil: %v", got)
	}
	if err := h.bridge.Require(); err != nil {
		t.Errorf("Require under off = %v", err)
	}
	if h.bridge.IsEnabled() {
		t.Error("IsEnabled under off")
	}
	h.bridge.Close()
	if n := h.connects.Load(); n != 0 {
		t.Errorf("off attempted %d connections", n)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "oca.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("off wrote oca.log (stat err %v)", err)
	}
	if h.stderr.Len() != 0 {
		t.Errorf("off wrote to stderr: %q", h.stderr)
	}
}

func TestAutoUnreachableDisablesOnceThenSkips(t *testing.T) {
	h := newHarness(t, map[string]string{"PONDER_OCA_DSN": "postgres://ponder:s3cret@127.0.0.1:1/nope"}, nil,
		errors.New("dial tcp 127.0.0.1:1: connect: connection refused\nsecond line"))
	// Session-less lines first (as in start before the session exists).
	if eps := h.bridge.PriorPondering("the UI"); eps != nil {
		t.Errorf("PriorPondering = %v, want nil", eps)
	}
	h.bridge.Attach(h.dir)
	if got := callAll(h.bridge); len(got) != 1 || got[0] != "probe" {
		t.Errorf("non-nil exports = %v, want only probe (the one negative result returned as an object)", got)
	}
	if err := h.bridge.Require(); err != nil {
		t.Errorf("Require under auto = %v, want nil (never fatal)", err)
	}
	h.bridge.Close()
	if n := h.connects.Load(); n != 1 {
		t.Errorf("probe ran %d times, want 1 (memoised)", n)
	}
	lines := h.log(t)
	// One DISABLED verdict, then a SKIP for each of the ten calls after it
	// (priorPondering twice, and the nine other record/read exports).
	if len(lines) != 11 {
		t.Fatalf("got %d lines, want 11:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, l := range lines {
		if !lineFormat.MatchString(l) {
			t.Errorf("line %d does not follow §9: %q", i, l)
		}
		if strings.Contains(l, "s3cret") {
			t.Errorf("line %d leaks the password: %q", i, l)
		}
		if !strings.Contains(l, "dsn=postgres://ponder:***@127.0.0.1:1/nope") {
			t.Errorf("line %d lacks the masked dsn: %q", i, l)
		}
	}
	if !strings.Contains(lines[0], " probe DISABLED unreachable: dial tcp 127.0.0.1:1: connect: connection refused second line dsn=") ||
		!strings.Contains(lines[0], " mode=auto ms=") {
		t.Errorf("first line is not the probe's DISABLED verdict: %q", lines[0])
	}
	if !strings.Contains(lines[1], " priorPondering SKIP oca unreachable (") {
		t.Errorf("second line is not the buffered priorPondering SKIP: %q", lines[1])
	}
	for _, l := range lines[1:] {
		if !strings.Contains(l, " SKIP ") || !strings.HasSuffix(l, " mode=auto") {
			t.Errorf("after the verdict every line should be a SKIP with mode=auto: %q", l)
		}
	}
	if h.stderr.Len() != 0 {
		t.Errorf("every line found the session log, yet stderr got %q", h.stderr)
	}
}

func TestOnUnreachableIsFatal(t *testing.T) {
	h := newHarness(t, map[string]string{"PONDER_OCA": "on"}, nil, errors.New("connection refused"))
	err := h.bridge.Require()
	var unusable *UnusableError
	if !errors.As(err, &unusable) || !unusable.Probe.Fatal || unusable.Probe.Reachable {
		t.Fatalf("Require = %v, want *UnusableError with fatal true, reachable false", err)
	}
	// No session yet (start): the note is returned, nothing is buffered.
	h.bridge.Close()
	if h.stderr.Len() != 0 {
		t.Errorf("a returned probe note was also queued for stderr: %q", h.stderr)
	}

	h = newHarness(t, map[string]string{"PONDER_OCA": "on"}, nil, errors.New("connection refused"))
	h.bridge.Attach(h.dir)
	if h.bridge.Require() == nil {
		t.Fatal("Require = nil with OCA down under on")
	}
	lines := h.log(t)
	if len(lines) != 1 || !strings.Contains(lines[0], " probe FATAL unreachable: connection refused ") ||
		!strings.Contains(lines[0], " mode=on") {
		t.Errorf("log = %q, want one FATAL line with mode=on", lines)
	}
}

func TestNonOCADatabaseIsUnreachable(t *testing.T) {
	five := []string{"cognitive_events", "episodic_memory", "hypotheses", "deliberations", "metacognitive_observations"}
	closed := new(atomic.Int32)
	h := newHarness(t, nil, &stubBackend{report: ProbeReport{Schema: false, Missing: five}, closed: closed}, nil)
	p := h.bridge.Probe()
	if p == nil || p.Reachable || p.Schema || len(p.Missing) != 5 || p.Fatal || p.Mode != ModeAuto {
		t.Fatalf("probe = %+v, want reachable false, schema false, the five tables missing", p)
	}
	if closed.Load() != 1 {
		t.Errorf("the non-OCA connection was not closed")
	}
	if h.bridge.IsEnabled() {
		t.Error("IsEnabled after a failed probe")
	}
}

func TestSessionLessLinesBufferedAndDrainedToStderr(t *testing.T) {
	h := newHarness(t, nil, nil, errors.New("refused"))
	for range 60 {
		h.bridge.PriorPondering("x")
	}
	h.bridge.Close()
	got := strings.Split(strings.TrimSuffix(h.stderr.String(), "\n"), "\n")
	if len(got) != maxPending {
		t.Fatalf("stderr got %d lines, want the buffer's cap %d", len(got), maxPending)
	}
	if !strings.Contains(got[0], " probe DISABLED ") || !strings.Contains(got[1], " priorPondering SKIP ") {
		t.Errorf("drained lines out of order: %q, %q", got[0], got[1])
	}
}

func TestProbeAloneBuffersNothing(t *testing.T) {
	// Bug 7: doctor's probe line was duplicated; the note is returned instead.
	h := newHarness(t, nil, nil, errors.New("refused"))
	if p := h.bridge.Probe(); p == nil || p.Reachable || !strings.Contains(p.Note, "refused") {
		t.Fatalf("probe = %+v", p)
	}
	h.bridge.Close()
	if h.stderr.Len() != 0 {
		t.Errorf("a lone probe buffered %q", h.stderr)
	}
}

func TestCleanRunWritesNothing(t *testing.T) {
	h := newHarness(t, nil, &stubBackend{report: completeSchema, pass: PassResult{Lock: "held", CloseNote: "closed", OpenNote: "opened"}}, nil)
	h.bridge.Attach(h.dir)
	got := callAll(h.bridge)
	h.bridge.Close()
	if len(got) != 10 {
		t.Errorf("with a healthy backend only %v returned results", got)
	}
	if lines := h.log(t); lines != nil {
		t.Errorf("a clean run logged %q", lines)
	}
}

func TestFailuresTimeoutsAndPanicsAreOneFailLine(t *testing.T) {
	cases := map[string]struct {
		be   *stubBackend
		want string
	}{
		"error": {&stubBackend{report: completeSchema, fail: errors.New("ERROR: relation\n  \"x\" does not exist password=hunter22")},
			` recordStart FAIL ERROR: relation "x" does not exist password=*** dsn=postgres://localhost/oneiro ms=`},
		"timeout": {&stubBackend{report: completeSchema, block: true}, ` recordStart FAIL timeout after 50ms dsn=postgres://localhost/oneiro ms=`},
		"panic":   {&stubBackend{report: completeSchema, panics: true}, ` recordStart FAIL panic: stub exploded dsn=postgres://localhost/oneiro ms=`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil, c.be, nil)
			h.bridge.Attach(h.dir)
			if r := h.bridge.RecordStart(Session{Slug: "s"}); r != nil {
				t.Errorf("RecordStart = %+v, want nil", r)
			}
			lines := h.log(t)
			if len(lines) != 1 || !strings.Contains(lines[0], c.want) || !lineFormat.MatchString(lines[0]) {
				t.Errorf("log = %q, want one line containing %q", lines, c.want)
			}
		})
	}
}

func TestLifecycleDeclinesAreLogged(t *testing.T) {
	cases := map[string]struct {
		res  PassResult
		want string // "" = no line
	}{
		"pass 1":    {PassResult{Lock: "held", CloseNote: "nothing-pending", OpenNote: "no-churn-signal"}, "no-churn-signal"},
		"pass 2":    {PassResult{Lock: "held", CloseNote: "nothing-pending", OpenNote: "opened"}, ""},
		"rerun":     {PassResult{Lock: "held", CloseNote: "nothing-pending", OpenNote: "already-forecast"}, "already-forecast"},
		"contended": {PassResult{Lock: "contended", CloseNote: "contended", OpenNote: "contended"}, "contended"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil, &stubBackend{report: completeSchema, pass: c.res}, nil)
			h.bridge.Attach(h.dir)
			if h.bridge.RecordPass(PassRecord{Pass: 2}) == nil {
				t.Fatal("RecordPass = nil")
			}
			lines := h.log(t)
			switch {
			case c.want == "" && lines != nil:
				t.Errorf("routine outcome logged %q", lines)
			case c.want != "" && (len(lines) != 1 || !strings.Contains(lines[0], " recordPass SKIP "+c.want+":")):
				t.Errorf("log = %q, want one recordPass line for %s", lines, c.want)
			}
		})
	}
}

func TestModeIsReadOnEveryCall(t *testing.T) {
	h := newHarness(t, map[string]string{"PONDER_OCA": "off"}, &stubBackend{report: completeSchema}, nil)
	h.bridge.Attach(h.dir)
	if h.bridge.RecordStart(Session{}) != nil {
		t.Fatal("off returned a result")
	}
	h.env["PONDER_OCA"] = "auto"
	if h.bridge.RecordStart(Session{}) == nil {
		t.Fatal("flipping to auto mid-process did not take effect")
	}
	h.env["PONDER_OCA"] = "off"
	if h.bridge.RecordStart(Session{}) != nil || h.bridge.IsEnabled() {
		t.Fatal("flipping back to off did not take effect")
	}
}

// TestMaskDSN: MaskDSN is internal/pgdsn's Mask (tested there).
func TestMaskDSN(t *testing.T) {
	if got := MaskDSN("postgres://user:pw@host/oneiro"); got != "postgres://user:***@host/oneiro" {
		t.Errorf("MaskDSN = %q", got)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeAuto, "auto": ModeAuto, "ON": ModeOn, " off ": ModeOff} {
		if got, ok := ParseMode(in); got != want || !ok {
			t.Errorf("ParseMode(%q) = %v, %v", in, got, ok)
		}
	}
	if got, ok := ParseMode("maybe"); got != ModeAuto || ok {
		t.Errorf("ParseMode(maybe) = %v, %v; want auto, false", got, ok)
	}
}
