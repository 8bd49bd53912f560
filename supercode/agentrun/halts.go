package agentrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Halted is the halt in force on the caller, if any: the store's, or one
// the fleet's journal witnesses that no journaled release lifted, or one
// this machine knew that no journaled release lifted (fleet.Machine.HaltOn:
// a halt lifted by hand, or lost with the store's records, holds). What was
// read is kept on the machine, and while the store is out of reach the
// halts this machine last read hold. note is what the gate adds to the
// halt's message: when the halt was read, when the store is out of reach;
// that the journal does not hold, when it does not. A machine.json that
// cannot be read is a *fleet.MachineDamagedError: nothing is known to be
// released. It costs one read of the machine's file and one of the store
// (a directory, a query) when nothing is halted.
func (s *Tracker) Halted(ctx context.Context, c Caller) (h fleet.Halt, ok bool, note string, err error) {
	m := fleet.ReadMachine()
	if m.Damaged != nil {
		return fleet.Halt{}, false, "", m.Damaged
	}
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
		return k.Halt, true, "the store is out of reach: this is the halt as this machine last read it, at " + k.ReadAt.Format("2006-01-02 15:04:05Z07:00"), nil
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
		h, ok, _, err := known("", "")
		if !ok {
			return h, ok, "", err
		}
		return h, ok, "the store no longer holds this agent's run: this is the halt as this machine last read it; a person runs laserbrain supervise verify, then " + fleet.AcceptJournalCommand, err
	}
	agent := fleet.RunAgent(run)
	h, ok, w, err := m.HaltOn(ctx, st, run.Fleet, agent, run.ID, s.now())
	if unreachable(err) {
		return known(agent, run.ID)
	}
	if err != nil {
		return fleet.Halt{}, false, "", fmt.Errorf("reading the halts: %w", err)
	}
	_ = m.Save()
	if ok && w != nil && w.Problem != nil {
		note = fleet.JournalDoesNotHold(w.Problem)
	}
	return h, ok, note, nil
}
