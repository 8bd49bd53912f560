package agentrun

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// unchecked puts a run in a fresh home (the local stores) whose coverage
// record has 5 steps and no check, working in dir.
func unchecked(t *testing.T, dir string) (*Tracker, fleet.Store, string) {
	t.Helper()
	t.Setenv("LASERBRAIN_HOME", t.TempDir())
	for _, k := range []string{coverage.ModeEnv, coverage.FloorEnv, coverage.BlockAfterEnv, coverage.NudgeEveryEnv,
		"LASERBRAIN_PROBE_SHARE", "LASERBRAIN_MIN_COVERAGE"} {
		t.Setenv(k, "")
	}
	s := &Tracker{ValidatePolicy: policyschema.Validate}
	t.Cleanup(func() { s.Close() })
	st, err := s.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	r := fleet.Run{ID: "r1", Agent: "worker", Fleet: "f", Dir: dir, Created: time.Now().UTC()}
	if err := SetCoverageRecord(&r, &coverage.Record{Agent: "worker", Goal: "ship the parser", Steps: 5}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return s, st, r.ID
}

func since(t *testing.T, st fleet.Store, id string) int {
	t.Helper()
	r, err := st.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := CoverageRecord(r)
	if err != nil || rec == nil {
		t.Fatalf("the run's record: %v, %v", rec, err)
	}
	return rec.Since()
}

// A check counts once, whatever route it takes: laserbrain check (once or
// --stream) and a loop step count here; a check_state call is counted by
// its post-tool-use hook, so the MCP server's check does not count it
// again; run --goal's grounding is not the agent's check.
func TestCheckCountsEachRouteOnce(t *testing.T) {
	for _, c := range []struct {
		via   string
		since int
	}{{ViaCLI, 0}, {ViaStream, 0}, {ViaLoop, 0}, {ViaTool, 5}, {ViaGoal, 5}} {
		t.Run(c.via, func(t *testing.T) {
			s, st, id := unchecked(t, t.TempDir())
			in := CheckInput{StepInput: laserbrain.StepInput{Goal: "ship the parser", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(4)}, Via: c.via}
			if _, err := s.Check(context.Background(), id, in); err != nil {
				t.Fatal(err)
			}
			if got := since(t, st, id); got != c.since {
				t.Fatalf("a check by %s: %d steps since the last check on the record; want %d", c.via, got, c.since)
			}
		})
	}
}

// A CLI check reads the project policy of the directory the run works in:
// a project that switched coverage off counts nothing; a run's own
// variable switches it back on.
func TestCheckReadsTheRunsProjectPolicy(t *testing.T) {
	project := t.TempDir()
	for _, d := range []string{".git", ".laserbrain"} {
		if err := os.Mkdir(filepath.Join(project, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(project, ".laserbrain", "policy.json"), []byte(`{"version": 1, "coverage": {"mode": "off"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in := CheckInput{StepInput: laserbrain.StepInput{Goal: "ship the parser", Progress: laserbrain.ProgressAdvancing}, Via: ViaCLI}

	s, st, id := unchecked(t, project)
	if _, err := s.Check(context.Background(), id, in); err != nil {
		t.Fatal(err)
	}
	if got := since(t, st, id); got != 5 {
		t.Fatalf("under a policy with coverage off the check was counted (%d steps since); want the record left alone", got)
	}

	s, st, id = unchecked(t, project)
	t.Setenv(coverage.ModeEnv, "on")
	if _, err := s.Check(context.Background(), id, in); err != nil {
		t.Fatal(err)
	}
	if got := since(t, st, id); got != 0 {
		t.Fatalf("with LASERBRAIN_COVERAGE=on over the policy's off the check was not counted (%d steps since)", got)
	}

	// A setting that cannot be used refuses the check, naming it and the file.
	if err := os.WriteFile(filepath.Join(project, ".laserbrain", "policy.json"), []byte(`{"version": 1, "coverage": {"floor": 0.5}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, id = unchecked(t, project)
	t.Setenv(coverage.FloorEnv, "1.5")
	if _, err := s.Check(context.Background(), id, in); err == nil {
		t.Fatal("a check under LASERBRAIN_COVERAGE_FLOOR=1.5 was taken")
	}
}

// A batch of checks leaves the run's coverage record as the same checks
// made one by one do: the batch counts on one copy of the record and
// writes it once.
func TestCheckBatchCountsAsSingleChecks(t *testing.T) {
	ins := make([]CheckInput, 7)
	for i := range ins {
		ins[i] = CheckInput{StepInput: laserbrain.StepInput{Goal: "ship the parser", Progress: laserbrain.ProgressAdvancing, Distance: laserbrain.Dist(9 - i)}, Via: ViaStream}
	}
	ins[3].Via = ViaTool // counted by its post-tool-use hook, not here
	record := func(batched bool) string {
		s, st, id := unchecked(t, t.TempDir())
		ctx := context.Background()
		if batched {
			if _, err := s.CheckBatch(ctx, id, ins); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, in := range ins {
				if _, err := s.CheckBatch(ctx, id, []CheckInput{in}); err != nil {
					t.Fatal(err)
				}
			}
		}
		r, err := st.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return string(r.Coverage)
	}
	one, batch := record(false), record(true)
	if one != batch {
		t.Fatalf("a batch's record differs from single checks':\nsingle: %s\nbatch:  %s", one, batch)
	}
	rec := &coverage.Record{}
	if err := json.Unmarshal([]byte(batch), rec); err != nil {
		t.Fatal(err)
	}
	if rec.NumChecks() != 6 || rec.Steps != 5+6 || len(rec.Checks) != 2 {
		t.Fatalf("the record counts %d checks (listing %d) over %d steps; want 6 (the last 2) over 11: %s", rec.NumChecks(), len(rec.Checks), rec.Steps, batch)
	}
}
