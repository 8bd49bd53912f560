package main

import (
	"context"
	"time"

	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// fleetHalts is ponder.Halts over laserkit's fleet store, the one
// LASERBRAIN_STORE names: a session is halted when the store holds a halt
// in force on ponder:<slug> in the project's fleet (its repository). The
// store is opened for reading: where no local fleet store exists nothing is
// halted, and nothing is created; while nothing is halted anywhere it costs
// one directory read (one query in a database).
type fleetHalts struct{}

func (fleetHalts) SessionHalt(root, slug string) (*ponder.Halt, error) {
	cfg, err := backend.FromEnv()
	if err != nil {
		return nil, err
	}
	cfg.ReadOnly = true // asking creates nothing
	b := backend.New(cfg)
	defer b.Close()
	st, err := b.Fleet()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if any, err := st.AnyHaltInForce(ctx); err != nil || !any {
		return nil, err
	}
	fid, err := fleet.ID(ctx, root)
	if err != nil {
		return nil, err
	}
	agent := fleet.PonderAgent(slug)
	h, ok, err := st.ActiveHalt(ctx, fid, agent)
	if err != nil || !ok {
		return nil, err
	}
	return &ponder.Halt{Reason: h.Reason + " (halted by " + by(h) + ")", Release: fleet.ReleaseCommand(agent)}, nil
}

func by(h fleet.Halt) string {
	if h.By == "" {
		return "the supervisor"
	}
	return h.By
}
