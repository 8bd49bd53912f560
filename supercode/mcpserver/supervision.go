package mcpserver

import (
	"context"
	"strings"

	"github.com/laserkit/laserkit/laserbrain/link"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
)

// The link and the supervisor's reading, for the agent itself: link_read
// and link_write over laserbrain/link (the reference's link_read and
// link_write, as tools), and supervision — laserbrain supervise's report
// for the caller's fleet, read-only, with the caller's own row.

// callerLink is the caller's fleet's link (the file this environment
// names, or the fleet's link in the database LASERBRAIN_STORE names),
// written as the caller: LASERBRAIN_AGENT, else the agent of the caller's
// run.
func (s *Server) callerLink(ctx context.Context) (*link.Link, error) {
	c := s.sup.Caller("", "")
	fid := ""
	if r, ok, err := s.sup.Find(ctx, c); err == nil && ok {
		fid = r.Fleet
	}
	if fid == "" {
		var err error
		if fid, err = fleet.ID(ctx, c.Dir); err != nil {
			return nil, err
		}
	}
	l, err := s.sup.Link(fid)
	if err != nil {
		return nil, err
	}
	if a := strings.TrimSpace(c.Agent); a != "" {
		l.Agent = a
	} else if r, err := s.callerRun(ctx); err == nil && r.Agent != "" {
		l.Agent = r.Agent
	}
	return l, nil
}

func (s *Server) linkRead(ctx context.Context, a args) (any, error) {
	limit, err := a.integer("limit", 20, 1, 100000)
	if err != nil {
		return nil, err
	}
	agent, err := a.str("agent")
	if err != nil {
		return nil, err
	}
	kind, err := a.str("kind")
	if err != nil {
		return nil, err
	}
	l, err := s.callerLink(ctx)
	if err != nil {
		return nil, err
	}
	recs, err := l.Read(link.Filter{Agent: agent, Kind: kind, Limit: limit})
	if err != nil {
		return nil, err
	}
	if recs == nil {
		recs = []link.Record{}
	}
	return map[string]any{"records": recs, "log": l.Whoami().Log}, nil
}

func (s *Server) linkWrite(ctx context.Context, a args) (any, error) {
	text, err := a.text("text", "link_write needs a text: what you want the other agents to read")
	if err != nil {
		return nil, err
	}
	kind, err := a.str("kind")
	if err != nil {
		return nil, err
	}
	e := link.Entry{Text: text, Kind: kind}
	if a.has("goal") {
		g, err := a.str("goal")
		if err != nil {
			return nil, err
		}
		e.Goal = &g
	}
	if a.has("payload") {
		if e.Payload, err = a.raw("payload"); err != nil {
			return nil, err
		}
	}
	l, err := s.callerLink(ctx)
	if err != nil {
		return nil, err
	}
	return l.Write(e)
}

// supervision is one read-only round over the caller's repository: every
// agent of its fleet and every ponder session, the collisions, the route,
// the halts in force — and the caller's own row (its verdict, its advice,
// its halt).
func (s *Server) supervision(ctx context.Context, a args) (any, error) {
	r, err := s.callerRun(ctx)
	if err != nil {
		return nil, err
	}
	dir := r.Dir
	if dir == "" {
		dir = s.sup.Caller("", "").Dir
	}
	repo, err := supervise.RepoRoot(dir)
	if err != nil {
		return nil, err
	}
	st, err := s.sup.Fleet()
	if err != nil {
		return nil, err
	}
	runs, err := s.sup.Runs()
	if err != nil {
		return nil, err
	}
	sv, err := supervise.Open(ctx, supervise.Options{Repo: repo, FleetID: r.Fleet, Fleet: st, Runs: runs, ReadOnly: true})
	if err != nil {
		return nil, err
	}
	round, err := sv.Round(ctx)
	if err != nil {
		return nil, err
	}
	me := fleet.RunAgent(r)
	out := map[string]any{"you": me, "fleet": r.Fleet, "repo": repo, "report": round, "row": nil}
	for _, row := range round.Agents {
		if row.Agent == me {
			out["row"] = row
		}
	}
	return out, nil
}
