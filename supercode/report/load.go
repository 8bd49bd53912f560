package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/ponder/oca"
	preport "github.com/laserkit/laserkit/ponder/report"
)

// Options says what to report on and where to read it.
type Options struct {
	// Run reports one run of the laserbrain store.
	Run string
	// Repo reports the fleet of the repository at this directory, with its
	// ponder sessions.
	Repo string
	// Runs is laserbrain's run store.
	Runs laserbrain.Store
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Panels, as Sources names them.
const (
	PanelDrift      = "drift timelines"
	PanelCollisions = "collisions"
	PanelFiles      = "file-overlap evidence"
	PanelOutcomes   = "collision outcomes (route, halt, escalation)"
	PanelGate       = "gate decisions"
	PanelSessions   = "ponder sessions"
	PanelHalts      = "halts and releases"
	PanelEscalate   = "escalations"
	PanelJournal    = "journal verification"
)

// InputError is Load's error about what was asked for (not about the
// stores).
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Load reads everything the report shows, each source through its adapter.
func Load(ctx context.Context, opts Options) (*Fleet, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	th, err := GrammarThresholds()
	if err != nil {
		return nil, err
	}
	f := &Fleet{Generated: now(), Thresholds: th, Agents: []Agent{}, Collisions: []Collision{}, Gate: []GateDecision{},
		Sessions: []preport.Session{}, Halts: []Halt{}, Escalations: []Escalation{},
		Journal: Journal{State: JournalUnavailable, Problem: "the supervisor journal arrives with laserbrain supervise (issue 11)"}}
	switch {
	case opts.Run != "" && opts.Repo != "":
		return nil, &InputError{"report one run or one fleet, not both"}
	case opts.Run != "":
		f.Scope = "run"
		r, err := opts.Runs.ReadRun(ctx, opts.Run)
		if err != nil {
			return nil, err
		}
		f.Agents = append(f.Agents, AgentFromRuns(opts.Run, opts.Run, []*laserbrain.Run{r}))
		f.Sources = append(f.Sources, Source{Panel: PanelDrift, Fed: true, From: "laserbrain's run store: the run's checks"})
	default:
		f.Scope = "fleet"
		repo := opts.Repo
		if repo == "" {
			repo = "."
		}
		abs, err := filepath.Abs(repo)
		if err != nil {
			return nil, err
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, &InputError{"--fleet " + repo + " is not a directory"}
		}
		f.Repo, f.ID = abs, fleetID(ctx, abs)
		if f.Sessions, err = loadSessions(abs); err != nil {
			return nil, fmt.Errorf("ponder sessions of %s: %w", abs, err)
		}
		f.Sources = append(f.Sources,
			Source{Panel: PanelDrift, From: "the fleet's agent runs: the fleet store's run registry (supercode/fleet, issue 10); ponder sessions as agents (issue 11)"},
			Source{Panel: PanelSessions, Fed: true, From: "the repository's .ponder/ sessions, read through ponder's read-only API"})
	}
	f.Collisions = FindCollisions(f.Agents)
	Outcomes(f.Collisions, f.Halts, f.Escalations)
	f.Sources = append(f.Sources,
		Source{Panel: PanelCollisions, Fed: true, From: "the agents' grounds, compared by laserbrain (collision_min from the grammar)"},
		Source{Panel: PanelFiles, From: "the files each agent touched: the fleet store's observed events (supercode/fleet, issue 10) and issue 11's footprints"},
		Source{Panel: PanelOutcomes, From: "the supervisor's rounds: laserbrain supervise (issue 11)"},
		Source{Panel: PanelGate, From: "the gate decisions the hooks record in the fleet store (supercode/fleet, issue 10)"},
		Source{Panel: PanelHalts, From: "halts and releases in the fleet store (issue 11)"},
		Source{Panel: PanelEscalate, From: "the supervisor's escalations (issue 11)"},
		Source{Panel: PanelJournal, From: "the hash-chained supervisor journal (issue 11)"},
	)
	if f.Scope == "run" {
		f.Sources = append(f.Sources, Source{Panel: PanelSessions, From: "only in a fleet report (--fleet DIR)"})
	}
	return f, nil
}

// fleetID names the repository's fleet: $LASERBRAIN_FLEET, else its root
// commit, else "dir:" and its path.
func fleetID(ctx context.Context, abs string) string {
	if f := strings.TrimSpace(os.Getenv("LASERBRAIN_FLEET")); f != "" {
		return f
	}
	out, err := exec.CommandContext(ctx, "git", "-C", abs, "rev-list", "--max-parents=0", "HEAD").Output()
	if roots := strings.Fields(string(out)); err == nil && len(roots) > 0 {
		slices.Sort(roots)
		return roots[0]
	}
	return "dir:" + abs
}

// loadSessions is the adapter from a repository's .ponder/ to the report:
// every session, read through ponder's read-only API with OCA off (the
// report never connects to a database).
func loadSessions(repo string) ([]preport.Session, error) {
	if _, err := os.Stat(filepath.Join(repo, ".ponder")); errors.Is(err, os.ErrNotExist) {
		return []preport.Session{}, nil
	}
	e := ponder.New(repo, oca.New(oca.Config{Getenv: func(string) string { return "off" }}))
	return preport.LoadAll(e)
}
