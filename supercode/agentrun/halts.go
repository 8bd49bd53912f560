package agentrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Halted is the halt in force on the caller, if any: the store's, or one
// the fleet's journal witnesses that no journaled release lifted (a halt
// lifted by hand holds; fleet.HaltInForce). What was read is kept on the
// machine (fleet.Machine), and while the store is out of reach the halts
// this machine last read hold: stale is then when they were read. It costs
// one read of the machine's file and one of the store (a directory, a
// query) when nothing is halted.
func (s *Tracker) Halted(ctx context.Context, c Caller) (h fleet.Halt, ok bool, stale string, err error) {
	m := fleet.ReadMachine()
	known := func(agent, run string) (fleet.Halt, bool, string, error) {
		if run == "" {
			run = c.Run
		}
		k, ok := m.For(agent, run)
		if !ok && c.Session != "" {
			k, ok = m.For("", c.Session)
		}
		if !ok {
			return fleet.Halt{}, false, "", nil
		}
		return k.Halt, true, k.ReadAt.Format("2006-01-02 15:04:05Z07:00"), nil
	}
	unreachable := func(err error) bool { return errors.Is(err, laserbrain.ErrUnavailable) }
	st, err := s.Fleet()
	if err != nil {
		if unreachable(err) {
			return known("", "")
		}
		return fleet.Halt{}, false, "", err
	}
	any, err := st.AnyHaltInForce(ctx)
	if unreachable(err) {
		return known("", "")
	}
	if err != nil {
		return fleet.Halt{}, false, "", err
	}
	if !any {
		if _, mine, _, _ := known("", ""); !mine {
			return fleet.Halt{}, false, "", nil
		}
		// The store shows none, and this machine knew one on the caller:
		// only a journaled release lifts it.
	}
	run, found, err := s.Find(ctx, c)
	if unreachable(err) {
		return known("", "")
	}
	if err != nil {
		return fleet.Halt{}, false, "", err
	}
	if !found {
		// A run whose record is gone is still halted if this machine knew it.
		return known("", "")
	}
	agent := fleet.RunAgent(run)
	h, ok, w, err := fleet.HaltInForce(ctx, st, run.Fleet, agent, run.ID, m.Witness[run.Fleet])
	if unreachable(err) {
		return known(agent, run.ID)
	}
	if err != nil {
		return fleet.Halt{}, false, "", fmt.Errorf("reading the halts: %w", err)
	}
	m.Note(run.Fleet, agent, run.ID, h, ok, w, s.now())
	_ = m.Save()
	return h, ok, "", nil
}
