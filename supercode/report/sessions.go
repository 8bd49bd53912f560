package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/ponder"
	preport "github.com/laserkit/laserkit/ponder/report"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
)

// loadSessions is the adapter from a repository's .ponder/ to the report:
// every session, newest first, read once through ponder's read API (OCA
// off: the report never connects to a database), drawn by ponder/report
// and seen as an agent.
func loadSessions(repo string) ([]preport.Session, []Agent, error) {
	sessions, agents := []preport.Session{}, []Agent{}
	e := ponder.NewReader(repo)
	if _, err := os.Stat(filepath.Join(e.Root, ".ponder")); errors.Is(err, os.ErrNotExist) {
		return sessions, agents, nil
	}
	l, err := e.List()
	if err != nil {
		return nil, nil, err
	}
	for _, s := range l.Sessions {
		f, err := e.Facts(s.Slug)
		if err != nil {
			return nil, nil, fmt.Errorf("session %s: %w", s.Slug, err)
		}
		a, err := AgentFromSession(repo, f)
		if err != nil {
			return nil, nil, fmt.Errorf("session %s: %w", s.Slug, err)
		}
		sessions, agents = append(sessions, preport.FromFacts(f)), append(agents, a)
	}
	return sessions, agents, nil
}

// AgentFromSession is the adapter from a ponder session to an agent, read
// as the supervisor reads it (supervise.SessionStart and SessionStep): the
// agent ponder:<slug>, grounded on its subject at its start, one check per
// pass that is a step yet, at the time it became one; its footprint is
// every path its units carried.
func AgentFromSession(repo string, f *ponder.SessionFacts) (Agent, error) {
	at := stamp(f.CreatedAt, time.Time{})
	r := laserbrain.NewRun(laserbrain.RunOptions{ID: "ponder-" + f.Slug, Now: func() time.Time { return at }})
	if _, err := r.Step(supervise.SessionStart(f)); err != nil {
		return Agent{}, err
	}
	for k := range f.Passes {
		in, _, ok := supervise.SessionStep(f, k)
		if !ok {
			break
		}
		p := f.Passes[k]
		if p.Judgement != nil {
			at = stamp(p.Judgement.JudgedAt, at)
		}
		if p.DecidedAt != nil {
			at = stamp(*p.DecidedAt, at)
		}
		if _, err := r.Step(in); err != nil {
			return Agent{}, err
		}
	}
	a := AgentFromRuns(fleet.PonderAgent(f.Slug), f.Slug, []*laserbrain.Run{r})
	a.Kind, a.Client = "ponder", "ponder"
	a.Created = stamp(f.CreatedAt, a.Created)
	if l := a.Last(); l != nil {
		a.LastEvent = l.At
	}
	a.Footprint = supervise.SessionFiles(repo, f)
	subject := f.Subject
	a.Subject = &subject
	if f.Lens != nil {
		a.Lens = *f.Lens
	}
	a.Finished = supervise.Finished(f.Status != ponder.StatusActive, lastDistance(a))
	return a, nil
}

// stamp reads one of ponder's times, else keeps def.
func stamp(s string, def time.Time) time.Time {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t
	}
	return def
}

// lastDistance is the last distance the agent's steps spelled (as the
// supervisor keeps it: a step of unknown distance leaves it), nil when none
// did.
func lastDistance(a Agent) *int {
	for i := len(a.Steps) - 1; i >= 0; i-- {
		if d, err := strconv.Atoi(a.Steps[i].Distance); err == nil {
			return &d
		}
	}
	return nil
}
