package agentrun

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/coverage"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// How a check reached the run (CheckInput.Via). Every check counts for
// coverage, once: a check_state tool call is counted by the hooks, at its
// post-tool-use (which sees it whatever the client), so the MCP server's
// check does not count it again; every other route counts here.
const (
	// ViaTool: check_state (or modulate) through the MCP server.
	ViaTool = "tool"
	// ViaCLI: laserbrain check; ViaStream: a line of laserbrain check
	// --stream.
	ViaCLI    = "cli"
	ViaStream = "stream"
	// ViaLoop: a step of laserbrain loop's own run.
	ViaLoop = "loop"
	// ViaGoal: laserbrain run --goal grounding the run before the agent
	// starts — not the agent's check, so not counted.
	ViaGoal = "goal"
)

// counts reports whether a check arriving by via is counted by Check.
func counts(via string) bool { return via != ViaTool && via != ViaGoal }

// lookupEnv reads the caller's environment the way coverage.Configure
// wants it (set and non-empty, through Getenv when one is given).
func (s *Tracker) lookupEnv(k string) (string, bool) {
	// An empty variable is unset: LASERBRAIN_PROBE_SHARE= selects nothing.
	v := s.getenv(k)
	return v, v != ""
}

// CoverageSettings are a project policy's coverage settings
// (.laserbrain/policy.json's "coverage") as the engine takes them. A
// policy file that is not valid gives none: our default holds, never less.
func CoverageSettings(pol operator.Policy) coverage.Settings {
	c := pol.Coverage
	return coverage.Settings{Mode: c.Mode, Floor: c.Floor, BlockAfter: c.BlockAfter, NudgeEvery: c.NudgeEvery}
}

// CoverageConfig is how the caller is held to coverage: the run's
// variables (laserbrain run --coverage …: coverage.ModeEnv and the others)
// over pol's settings (the project policy of the directory the caller
// works in) over our default. A setting that cannot be used is an error
// naming it, and the policy file when it is from there.
func (s *Tracker) CoverageConfig(pol operator.Policy) (coverage.Config, error) {
	cfg, err := coverage.Configure(CoverageSettings(pol), s.lookupEnv)
	if err != nil && pol.Source != "" {
		err = fmt.Errorf("%w (the project policy is %s)", err, pol.Source)
	}
	return cfg, err
}

// ProjectCoverage is CoverageConfig for a caller working in dir: the
// project policy read there (LoadPolicy, checked by s.ValidatePolicy).
func (s *Tracker) ProjectCoverage(dir string) (coverage.Config, error) {
	pol, err := LoadPolicy(dir, s.ValidatePolicy)
	if err != nil {
		return coverage.Config{}, err
	}
	return s.CoverageConfig(pol)
}

// CoverageRecord is the coverage record kept with run r (nil while it has
// none).
func CoverageRecord(r fleet.Run) (*coverage.Record, error) {
	if len(r.Coverage) == 0 || string(r.Coverage) == "null" {
		return nil, nil
	}
	var rec coverage.Record
	if err := json.Unmarshal(r.Coverage, &rec); err != nil {
		return nil, fmt.Errorf("run %s: its coverage record is damaged: %w", r.ID, err)
	}
	return &rec, nil
}

// Grounded is r's coverage record as an observer starts from: the one
// kept, or — for a run that has none yet — a record on the run's declared
// goal (laserbrain run --goal), so the first prompt does not replace the
// ground the run was started on. nil for a run with neither.
func Grounded(r fleet.Run) (*coverage.Record, error) {
	rec, err := CoverageRecord(r)
	if rec != nil || err != nil || r.Goal == "" {
		return rec, err
	}
	return &coverage.Record{Goal: r.Goal}, nil
}

// SetCoverageRecord keeps rec with run r (the caller writes r: UpdateRun),
// as coverage.Record.Kept has it: a record that listed every check would
// make every hook call of a long run read and write them all.
func SetCoverageRecord(r *fleet.Run, rec *coverage.Record) error {
	if rec == nil {
		r.Coverage = nil
		return nil
	}
	b, err := json.Marshal(rec.Kept())
	if err != nil {
		return err
	}
	r.Coverage = b
	return nil
}

// batchCoverage is a batch's view of its run's coverage record: read on
// the first check it counts, counted on in memory, written back once for
// the batch: a record read, copied and written for every check costs a
// batch that much more per check.
type batchCoverage struct {
	rec    *coverage.Record
	loaded bool
	// checks is how many checks the batch holds (room is made for them
	// on the record at once); agent is the caller's agent, read once.
	checks int
	agent  string
}

// countCheck counts a check made by another route than a check_state tool
// call on r's coverage record: the agent spelled its state, so its gate
// opens again.
func (s *Tracker) countCheck(cov coverage.Config, b *batchCoverage, r *fleet.Run, in CheckInput, v laserbrain.CheckResult) error {
	if !b.loaded {
		rec, err := Grounded(*r)
		if err != nil {
			return err
		}
		if rec != nil {
			rec.Checks = slices.Grow(rec.Checks, b.checks)
		}
		b.rec, b.loaded, b.agent = rec, true, s.getenv(EnvAgent)
	}
	// Distance's own encoding: what json.Marshal would write, without
	// its reflection.
	dist, err := in.Distance.MarshalJSON()
	if err != nil {
		return err
	}
	b.rec = cov.Count(b.rec, b.agent, coverage.CheckInput{Goal: in.Goal, Progress: in.Progress, Distance: dist, Reason: v.Reason})
	return nil
}

// save writes the counted record back on r (the caller writes r:
// UpdateRun); nothing when no check was counted.
func (b *batchCoverage) save(r *fleet.Run) error {
	if !b.loaded {
		return nil
	}
	return SetCoverageRecord(r, b.rec)
}
