package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	preport "github.com/laserkit/laserkit/ponder/report"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
	"github.com/laserkit/laserkit/supercode/undo"
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
	// Fleet is the fleet store (runs, events, gate decisions); nil leaves
	// the fleet's agents out.
	Fleet fleet.Store
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// FleetID, when given, is Repo's fleet, and Repo its root already
	// resolved: a caller loading one fleet again and again (laserbrain
	// ui) spares the git processes that find them.
	FleetID string
	// Undo is the machine's undo checkpoints: what each call changed (nil:
	// not shown).
	Undo *undo.Store
	// Usage reads the model tokens a run's agent spent from its client's
	// records (nil, or ok false: not shown).
	Usage func(fleet.Run) (u fleet.Usage, ok bool)
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
		Journal: Journal{State: JournalUnavailable, Problem: "the supervisor's journal is read in a fleet report"}}
	switch {
	case opts.Run != "" && opts.Repo != "":
		return nil, &InputError{"report one run or one fleet, not both"}
	case opts.Run != "":
		f.Scope = "run"
		// A run of the fleet store (laserbrain run, the hooks) with its
		// tasks and events, else a bare run of laserbrain's store.
		var fr fleet.Run
		var ferr error = fleet.ErrNotFound
		if opts.Fleet != nil {
			fr, ferr = opts.Fleet.Run(ctx, opts.Run)
		}
		switch {
		case ferr == nil:
			agents, gate, err := FromFleet(ctx, oneRun{opts.Fleet, fr}, opts.Runs, fr.Fleet, fr.Dir)
			if err != nil {
				return nil, err
			}
			f.ID, f.Agents, f.Gate = fr.Fleet, agents, gate
			f.Sources = append(f.Sources, Source{Panel: PanelDrift, Fed: true, From: "the fleet store's run and laserbrain's run store: every task's checks"},
				Source{Panel: PanelGate, Fed: true, From: "the gate decisions the hooks recorded on the run (fleet store)"})
		case errors.Is(ferr, fleet.ErrNotFound):
			r, err := opts.Runs.ReadRun(ctx, opts.Run)
			if err != nil {
				return nil, err
			}
			f.Agents = append(f.Agents, AgentFromRuns(opts.Run, opts.Run, []*laserbrain.Run{r}))
			f.Sources = append(f.Sources, Source{Panel: PanelDrift, Fed: true, From: "laserbrain's run store: the run's checks"},
				Source{Panel: PanelGate, From: "a run of the fleet store (laserbrain run or the hooks); this run has only checks"})
		default:
			return nil, ferr
		}
	default:
		f.Scope = "fleet"
		abs, id, err := resolve(ctx, opts)
		if err != nil {
			return nil, err
		}
		f.Repo, f.ID = abs, id
		if opts.Fleet != nil {
			if f.Agents, f.Gate, err = FromFleet(ctx, opts.Fleet, opts.Runs, f.ID, abs); err != nil {
				return nil, err
			}
			addUsage(ctx, opts, f.Agents)
			if f.Halts, f.Escalations, f.Journal, err = fromSupervisor(ctx, opts.Fleet, f.ID); err != nil {
				return nil, err
			}
		}
		sessions, agents, err := loadSessions(abs)
		if err != nil {
			return nil, fmt.Errorf("ponder sessions of %s: %w", abs, err)
		}
		f.Sessions, f.Agents = sessions, append(f.Agents, agents...)
		attachHalts(f.Agents, f.Halts)
		f.Sources = append(f.Sources,
			Source{Panel: PanelDrift, Fed: true, From: "the fleet store's runs of this fleet (laserbrain run, the hooks) and laserbrain's run store: every task's checks"},
			Source{Panel: PanelDrift + ": ponder sessions as agents", Fed: true, From: "each ponder session read as the supervisor reads it: a check per decided pass (ponder/SPEC.md §10)"},
			Source{Panel: PanelGate, Fed: true, From: "the gate decisions the hooks record in the fleet store, with their labels"},
			Source{Panel: PanelSessions, Fed: true, From: "the repository's .ponder/ sessions, read through ponder's read-only API"})
	}
	settle(f.Agents)
	if err := UndoChanges(f.Agents, opts.Undo); err != nil {
		return nil, fmt.Errorf("the undo checkpoints: %w", err)
	}
	f.Collisions = FindCollisions(f.Agents)
	Outcomes(f.Collisions, f.Halts, f.Escalations)
	f.Sources = append(f.Sources,
		Source{Panel: PanelCollisions, Fed: true, From: "the agents' grounds, compared by laserbrain (collision_min from the grammar)"},
		Source{Panel: PanelFiles, Fed: true, From: "the files the supervisor counts: what each agent's file tools wrote and its shell commands wrote or named (the fleet store's observed events), a ponder session's units"},
		Source{Panel: PanelOutcomes, Fed: f.Scope == "fleet" && opts.Fleet != nil, From: "the supervisor's halts and escalations (laserbrain supervise), by the agents' names"},
		Source{Panel: PanelHalts, Fed: f.Scope == "fleet" && opts.Fleet != nil, From: "halts and releases in the fleet store (laserbrain supervise)"},
		Source{Panel: PanelEscalate, Fed: f.Scope == "fleet" && opts.Fleet != nil, From: "the supervisor's escalations and their answers, from its journal"},
		Source{Panel: PanelJournal, Fed: f.Scope == "fleet" && opts.Fleet != nil, From: "the hash-chained supervisor journal, verified (laserbrain supervise verify)"},
	)
	if f.Scope == "run" {
		f.Sources = append(f.Sources, Source{Panel: PanelSessions, From: "only in a fleet report (--fleet DIR)"})
	}
	return f, nil
}

// resolve is the fleet's repository root and id.
func resolve(ctx context.Context, opts Options) (string, string, error) {
	if opts.FleetID != "" {
		return opts.Repo, opts.FleetID, nil
	}
	repo := opts.Repo
	if repo == "" {
		repo = "."
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return "", "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", "", &InputError{"--fleet " + repo + " is not a directory"}
	}
	if abs, err = supervise.RepoRoot(abs); err != nil {
		return "", "", err
	}
	id, err := fleet.ID(ctx, abs)
	return abs, id, err
}

// oneRun is a fleet store narrowed to one run, so that a run report and a
// fleet report read through the same adapter.
type oneRun struct {
	fleet.Store
	run fleet.Run
}

func (o oneRun) ListRuns(ctx context.Context, f fleet.RunFilter) ([]fleet.Run, error) {
	return []fleet.Run{o.run}, nil
}

// addUsage gives each agent run whose events carry no model requests
// (FromFleet read those) the tokens its client recorded elsewhere, where
// opts.Usage reads them.
func addUsage(ctx context.Context, opts Options, agents []Agent) {
	if opts.Usage == nil {
		return
	}
	for i := range agents {
		if agents[i].Tokens != nil {
			continue
		}
		r, err := opts.Fleet.Run(ctx, agents[i].Run)
		if err != nil {
			continue
		}
		if u, ok := opts.Usage(r); ok {
			agents[i].Tokens = &u
		}
	}
}
