package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Agent kinds.
const (
	KindPonder = "ponder"
	KindRun    = "run"
)

// EventStamper is an optional method of a fleet store: a value that
// changes whenever a run's events do, cheaper than reading them. A
// supervisor polling many runs reads a run's events again only when its
// stamp moved; without it, it reads them every round.
type EventStamper interface {
	EventStamp(ctx context.Context, run string) (string, error)
}

func (s *Supervisor) agent(name, kind string) *agent {
	a := s.agents[name]
	if a == nil {
		a = &agent{name: name, kind: kind, files: map[string]bool{}, fed: map[int]int{}}
		s.agents[name] = a
	}
	return a
}

// observe takes in what is new since the last round: the passes ponder
// sessions decided, the checks and tool calls of agent runs. changed
// reports whether anything was.
func (s *Supervisor) observe(ctx context.Context) (changed bool, err error) {
	c1, err := s.observeSessions(ctx)
	if err != nil {
		return false, err
	}
	c2, err := s.observeRuns(ctx)
	return c1 || c2, err
}

func (s *Supervisor) step(a *agent, in laserbrain.StepInput) error {
	v, err := s.sc.Observe(a.name, in)
	if err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	view, _ := s.sc.View(a.name)
	a.newSteps++
	if in.Distance.Known {
		d := in.Distance.Value
		a.distance = &d
	}
	a.progress = in.Progress
	if v.Drifting {
		if a.streak == 0 {
			a.streakStart = view.Steps
			a.decision = ""
		}
		a.streak++
		a.advice = v.Advice
	} else {
		a.streak, a.advice, a.decision = 0, "", ""
	}
	return nil
}

func (s *Supervisor) observeSessions(ctx context.Context) (bool, error) {
	slugs, err := s.eng.Slugs()
	if err != nil {
		return false, fmt.Errorf("listing ponder sessions: %w", err)
	}
	changed := false
	for _, slug := range slugs {
		a := s.agent(fleet.PonderAgent(slug), KindPonder)
		a.slug = slug
		stamp, err := s.eng.SessionStamp(slug)
		if errors.Is(err, ponder.ErrNoSession) {
			continue
		}
		if err != nil {
			return false, err
		}
		if stamp == a.stamp {
			continue
		}
		a.stamp, changed = stamp, true
		f, err := s.eng.Facts(slug)
		if err != nil {
			// A ledger ponder itself refuses (torn, forged) is shown, and
			// counts once as a failed check: the session's record cannot be
			// read as evidence.
			if a.damaged == "" {
				ev := laserbrain.CheckEvent("ledger", false)
				ev.Text = err.Error()
				s.sc.Saw(a.name, ev)
			}
			a.damaged = err.Error()
			continue
		}
		a.damaged = ""
		a.status = f.Status
		if a.ground == "" {
			start := SessionStart(f)
			a.ground = start.Goal
			lens := ""
			if f.Lens != nil {
				lens = *f.Lens
			}
			// It collides on its subject; the lens is compared apart, and
			// reported beside it.
			a.lens = lens
			s.sc.SetSubject(a.name, f.Subject, lens)
			if err := s.step(a, start); err != nil {
				return false, err
			}
		}
		for k := a.passes; k < len(f.Passes); k++ {
			in, events, ok := SessionStep(f, k)
			if !ok {
				break
			}
			if err := s.step(a, in); err != nil {
				return false, err
			}
			s.sc.Saw(a.name, events...)
			a.passes = k + 1
		}
		for _, p := range SessionFiles(s.o.Repo, f) {
			a.files[p] = true
		}
		a.finished = Finished(f.Status != ponder.StatusActive, a.distance)
	}
	return changed, nil
}

// Finished reports whether an agent no longer runs, as the supervisor and
// the fleet report read it: its run ended or its session closed, or it
// reached its ground (distance 0). A finished agent collides with nobody.
func Finished(ended bool, distance *int) bool { return ended || (distance != nil && *distance == 0) }

func (s *Supervisor) observeRuns(ctx context.Context) (bool, error) {
	runs, err := s.o.Fleet.ListRuns(ctx, fleet.RunFilter{Fleet: s.fleet})
	if err != nil {
		return false, fmt.Errorf("listing the fleet's runs: %w", err)
	}
	stamper, _ := s.o.Fleet.(EventStamper)
	changed := false
	for _, r := range runs {
		a := s.agent(fleet.RunAgent(r), KindRun)
		wasEnded := a.run.IsEnded()
		a.run = r
		if r.Ponder != "" {
			// laserbrain run --ponder: the run and its session are one
			// worker, never a collision.
			s.sc.SetSameAs(a.name, fleet.PonderAgent(r.Ponder))
		}
		if wasEnded {
			continue // an ended run changes no more
		}
		more, err := s.runSteps(ctx, a, r)
		if err != nil {
			return false, err
		}
		moreEvents, err := s.runEvents(ctx, a, r, stamper)
		if err != nil {
			return false, err
		}
		changed = changed || more || moreEvents || r.IsEnded()
		a.finished = Finished(r.IsEnded(), a.distance)
	}
	return changed, nil
}

// runSteps takes in a run's new checks from laserbrain's run store, task by
// task, when the run's count of checks moved.
func (s *Supervisor) runSteps(ctx context.Context, a *agent, r fleet.Run) (bool, error) {
	if s.o.Runs == nil || r.Checks == a.checks {
		return false, nil
	}
	changed := false
	for n := 1; n <= r.Tasks; n++ {
		lr, err := s.o.Runs.ReadRun(ctx, fleet.TaskID(r.ID, n))
		if errors.Is(err, laserbrain.ErrNoRun) {
			continue
		}
		if err != nil {
			return false, err
		}
		steps := lr.Steps()
		for i := a.fed[n]; i < len(steps); i++ {
			st := steps[i]
			// A later task's first check is a new ground (reset_task): read
			// as a user turn, never as drift — unless the run recorded it
			// as the agent's own reground (a reset or a user turn it
			// claimed when no person spoke), which is read as any other
			// check, so it does not clear the supervisor's drift streak.
			in := laserbrain.StepInput{Goal: st.Goal, Progress: st.Progress, Distance: st.Distance, ParentGoal: st.ParentGoal,
				UserTurn: (st.UserTurn || (n > 1 && i == 0)) && !slices.Contains(r.SelfReground, fleet.SelfRegroundKey(n, st.N))}
			if a.ground == "" {
				a.ground = st.Goal
			}
			if err := s.step(a, in); err != nil {
				return false, err
			}
			changed = true
		}
		a.fed[n] = len(steps)
	}
	a.checks = r.Checks
	return changed, nil
}

// runEvents takes in a run's new tool calls: as events for the catches, and
// as its file footprint.
func (s *Supervisor) runEvents(ctx context.Context, a *agent, r fleet.Run, stamper EventStamper) (bool, error) {
	if stamper != nil {
		stamp, err := stamper.EventStamp(ctx, r.ID)
		if err != nil || stamp == a.estamp {
			return false, err
		}
		a.estamp = stamp
	}
	evs, err := s.o.Fleet.Events(ctx, r.ID)
	if err != nil || len(evs) <= a.events {
		return false, err
	}
	a.waiting = nil
	if w, ok := fleet.Waiting(evs); ok {
		a.waiting = &w
	}
	var seen []laserbrain.Event
	var fr FileReader
	for _, e := range evs[a.events:] {
		a.cov.Add(e)
		if e.Kind == fleet.KindLoss {
			a.losses = append(a.losses, e.Text)
		}
		if ev, ok := observedEvent(e); ok {
			seen = append(seen, ev)
		}
		for _, p := range fr.EventFiles(s.o.Repo, r.Dir, e) {
			a.files[p] = true
		}
	}
	a.events = len(evs)
	if len(seen) > 0 {
		s.sc.Saw(a.name, seen...)
	}
	return true, nil
}

// ErrNotDir: RepoRoot was given something that is not a directory.
var ErrNotDir = errors.New("not a directory")

// RepoRoot is the repository containing dir — its work tree's top when dir
// is in one, else dir — absolute, with symbolic links resolved.
func RepoRoot(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return "", fmt.Errorf("--repo %s: %w", dir, ErrNotDir)
	}
	out, err := exec.Command("git", "-C", abs, "rev-parse", "--show-toplevel").Output()
	if err == nil {
		if top := strings.TrimSpace(string(out)); top != "" {
			abs = top
		}
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return abs, nil
}
