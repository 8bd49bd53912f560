package ponder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/ponder/oca"
)

// writesFail is an in-test OCA whose probe succeeds and whose writes fail,
// as when the database goes away mid-session. (Database behaviour itself is
// tested against real PostgreSQL, in pgstore and the cmd/ponder scripts.)
type writesFail struct{}

var errGone = errors.New("server closed the connection unexpectedly")

func (writesFail) Probe(context.Context) (oca.ProbeReport, error) {
	return oca.ProbeReport{Schema: true}, nil
}
func (writesFail) PriorPondering(context.Context, string) ([]oca.Episode, error) { return nil, nil }
func (writesFail) RecordStart(context.Context, oca.Session) (oca.StartResult, error) {
	return oca.StartResult{SessionRef: "ponder:x"}, nil
}
func (writesFail) RecordPass(context.Context, oca.PassRecord) (oca.PassResult, error) {
	return oca.PassResult{}, errGone
}
func (writesFail) RecordDeliberation(context.Context, oca.DeliberationRecord) (oca.DeliberationResult, error) {
	return oca.DeliberationResult{}, errGone
}
func (writesFail) ResolveDeliberation(context.Context, oca.Session, int64, string) (oca.ResolveResult, error) {
	return oca.ResolveResult{}, errGone
}
func (writesFail) RecordObservation(context.Context, oca.ObservationRecord) (oca.ObservationResult, error) {
	return oca.ObservationResult{}, errGone
}
func (writesFail) RecordConverged(context.Context, oca.ConvergedRecord) (oca.ConvergedResult, error) {
	return oca.ConvergedResult{}, errGone
}
func (writesFail) RecordApply(context.Context, oca.ApplyRecord) (oca.ApplyResult, error) {
	return oca.ApplyResult{}, errGone
}
func (writesFail) ExpireForecasts(context.Context, oca.Session) (oca.ExpireResult, error) {
	return oca.ExpireResult{}, errGone
}
func (writesFail) SessionRows(context.Context, oca.Session) (oca.SessionRows, error) {
	return oca.SessionRows{}, nil
}
func (writesFail) OpenObservations(context.Context, oca.Session) ([]oca.Observation, error) {
	return []oca.Observation{}, nil
}
func (writesFail) Close() {}

// Under PONDER_OCA=on a write failure after the probe exits 3
// once the local files are written; re-running is the recovery.
func TestOnModeWriteFailureExits3AfterLocalWork(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	mode := "on"
	bridge := oca.New(oca.Config{
		Getenv:  func(k string) string { return map[string]string{"PONDER_OCA": mode}[k] },
		Connect: func(context.Context, string) (oca.Backend, error) { return writesFail{}, nil },
	})
	e := New(root, bridge)
	defer bridge.Close()
	st, err := e.Start(StartOptions{Subject: "s", Lens: "l", Passes: DefaultPassBudget})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Units("", UnitsOptions{Scan: "."}); err != nil {
		t.Fatal(err)
	}
	exit3 := func(what string, err error) {
		t.Helper()
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindOCA {
			t.Errorf("%s: err = %v, want exit 3", what, err)
		}
	}
	d, err := e.Deliberate("", &DeliberationInput{}, true)
	exit3("deliberate", err)
	if d == nil || d.Deliberation.Pass != 1 {
		t.Errorf("deliberate returned no result with its exit 3: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(st.Dir, "passes", "01", "deliberation.json")); err != nil {
		t.Errorf("deliberation.json not written before the exit 3: %v", err)
	}
	j, err := e.Judge("")
	exit3("judge", err)
	if _, serr := os.Stat(filepath.Join(st.Dir, "passes", "01", "judge.json")); j == nil || serr != nil {
		t.Errorf("judge.json not written before the exit 3: %v", serr)
	}
	// The failures are in the session's log, one FAIL line each.
	log, _ := os.ReadFile(filepath.Join(st.Dir, "oca.log"))
	if n := failLines(t, log, "FAIL"); n != 3 { // recordDeliberation, recordPass, recordDeliberation (fallback)
		t.Errorf("oca.log has %d FAIL lines, want 3:\n%s", n, log)
	}
	// metacognize too: every row or exit 3, the observation
	// still kept locally.
	m, err := e.Metacognize("", MetacognizeOptions{Type: "thrash", Description: "flips"})
	exit3("metacognize", err)
	if obs, _ := os.ReadFile(filepath.Join(st.Dir, "observations.jsonl")); m == nil || !strings.Contains(string(obs), `"flips"`) {
		t.Errorf("metacognize returned %+v and kept %q", m, obs)
	}
	// Re-running judge is allowed (it is the recovery).
	_, err = e.Judge("")
	exit3("judge again", err)
	// Under auto the same failures are silent apart from the log.
	mode = "auto"
	if _, err := e.Judge(""); err != nil {
		t.Errorf("judge under auto = %v, want success", err)
	}
}

func failLines(t *testing.T, data []byte, sub string) int {
	t.Helper()
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// units.json is a view of the ledger: doctor notices when a write that
// failed after a commit left it behind, and repair rebuilds it.
func TestDoctorNoticesAStaleUnitsView(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := New(root, oca.New(oca.Config{Getenv: func(string) string { return "off" }}))
	st, err := e.Start(StartOptions{Subject: "s", Lens: "l", Passes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Units("", UnitsOptions{Scan: "."}); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"PONDER_OCA": "off"}[k] }
	if res, err := e.Doctor("", getenv); err != nil || !res.OK {
		t.Fatalf("doctor on a fresh session: %+v, %v", res, err)
	}
	units := filepath.Join(st.Dir, "units.json")
	if err := os.WriteFile(units, []byte(`{"units": []}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := e.Doctor("", getenv)
	stale := false
	for _, c := range res.Checks {
		stale = stale || (c.Problem && strings.Contains(c.Detail, "units.json does not match the ledger"))
	}
	if err == nil || res.OK || !stale {
		t.Fatalf("doctor with a stale units.json: %+v, %v", res, err)
	}
	if _, err := e.Repair(""); err != nil {
		t.Fatal(err)
	}
	if res, err := e.Doctor("", getenv); err != nil || !res.OK {
		t.Errorf("doctor after repair: %+v, %v", res, err)
	}
}
