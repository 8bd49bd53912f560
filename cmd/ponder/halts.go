package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/ponder"
	"github.com/laserkit/laserkit/supercode/backend"
	"github.com/laserkit/laserkit/supercode/broker"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// fleetHalts is ponder.Halts over laserkit's fleet store, the one
// LASERBRAIN_STORE names: a session is halted when the store holds a halt
// in force on ponder:<slug> in the project's fleet (its repository). The
// store is opened for reading: where no local fleet store exists nothing is
// halted, and nothing is created; while nothing is halted anywhere it costs
// one directory read (one query in a database).
type fleetHalts struct {
	storeConfig func() (backend.Config, error)
}

func (fh fleetHalts) SessionHalt(root, slug string) (*ponder.Halt, error) {
	cfg, err := fh.storeConfig()
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
	agent := fleet.PonderAgent(slug)
	m := fleet.ReadMachine()
	if m.Damaged != nil {
		return &ponder.Halt{Reason: m.Damaged.Error(), Release: fleet.MachineDamagedFix}, nil
	}
	if any, err := st.AnyHaltInForce(ctx); err != nil {
		return nil, err
	} else if _, known := m.For(agent, ""); !any && !known {
		return nil, nil
	}
	fid, err := fleet.ID(ctx, root)
	if err != nil {
		return nil, err
	}
	// A halt lifted by hand, or lost with the store's records, still
	// holds: only a journaled release lifts it.
	h, ok, w, err := m.HaltOn(ctx, st, fid, agent, "", time.Now())
	if err != nil || !ok {
		return nil, err
	}
	reason := h.Reason + " (halted by " + by(h) + ")"
	if w != nil && w.Problem != nil {
		reason += "; " + fleet.JournalDoesNotHold(w.Problem)
	}
	return &ponder.Halt{Reason: reason, Release: fleet.ReleaseCommand(agent)}, nil
}

func by(h fleet.Halt) string {
	if h.By == "" {
		return "the supervisor"
	}
	return h.By
}

// fleetMessages is ponder.Messages over the same fleet store: what the
// supervisor said to ponder:<slug> in the project's fleet, handed out once
// (and journaled) by the store. Asked first of a store opened for reading,
// so that while nothing waits nothing is created and it costs one file
// stat (one query in a database); only a waiting message opens it to write.
type fleetMessages struct {
	storeConfig func() (backend.Config, error)
}

func (n fleetMessages) SessionMessages(root, slug string) ([]string, error) {
	if told, ok := os.LookupEnv(broker.EnvPonderTold); ok {
		// Run by a confined agent's broker, which handed them out already:
		// the store is read-only here.
		var out []string
		if err := json.Unmarshal([]byte(told), &out); err != nil {
			return nil, fmt.Errorf("%s: %w", broker.EnvPonderTold, err)
		}
		return out, nil
	}
	cfg, err := n.storeConfig()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fid, err := fleet.ID(ctx, root)
	if err != nil {
		return nil, err
	}
	agent := fleet.PonderAgent(slug)
	d := fleet.Delivery{At: clock().UTC(), Via: "ponder"}
	var got []fleet.Message
	for _, readOnly := range []bool{true, false} {
		cfg.ReadOnly = readOnly
		b := backend.New(cfg)
		st, err := b.Fleet()
		if err == nil {
			got, err = st.Deliver(ctx, fid, agent, d)
		}
		b.Close()
		if err == nil {
			break
		}
		if !readOnly || !errors.Is(err, laserbrain.ErrReadOnly) {
			return nil, err
		}
	}
	out := make([]string, len(got))
	for i, m := range got {
		out[i] = m.Told()
	}
	return out, nil
}
