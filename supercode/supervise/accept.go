package supervise

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// ErrNothingToAccept: the journal holds, and holds what this machine
// verified of it.
var ErrNothingToAccept = errors.New("the journal holds what this machine verified of it: nothing to accept")

// Accepted is what AcceptJournal did.
type Accepted struct {
	// Problem is what was wrong: the chain's first problem, or what the
	// journal lost of what this machine verified.
	Problem *fleet.JournalProblem
	// SetAside is where the old journal went ("" when only machine.json
	// was set aside and the journal held).
	SetAside string
	// MachineSetAside is where a machine.json that could not be read went.
	MachineSetAside string
	// Halts are the halts kept in force, journaled again on the new chain.
	Halts []fleet.Halt
}

// AcceptJournal is a person's way on after a fleet's journal broke or lost
// what this machine verified of it: the old journal is set aside whole
// (kept as evidence), a new chain starts with a record saying who
// accepted it and why, every halt that held — the store's in force, the
// journal's no release lifted, and those this machine knew — is journaled
// again on it and put in force in the store, and this machine's witness
// moves to the new chain. Nothing is released: each halt is then lifted
// as any other, by Release. A machine.json that could not be read is set
// aside too (what it held is unknown; the journal's halts are kept).
func AcceptJournal(ctx context.Context, st fleet.Store, fleetID, by, reason string, now time.Time) (Accepted, error) {
	var out Accepted
	m := fleet.ReadMachine()
	if m.Damaged != nil {
		p, _ := fleet.MachinePath()
		out.MachineSetAside = p + ".damaged-" + now.UTC().Format("20060102T150405")
		if err := os.Rename(p, out.MachineSetAside); err != nil {
			return out, fmt.Errorf("setting machine.json aside: %w", err)
		}
		m = fleet.ReadMachine()
	}
	// A journal, head or counter that cannot be read at all is a problem
	// to accept like any other: it is set aside with the rest.
	unreadable := func(err error) *fleet.JournalProblem {
		return &fleet.JournalProblem{Index: 1, Seq: 1, Kind: fleet.TamperCorrupt, Detail: err.Error()}
	}
	c, err := fleet.CheckJournal(ctx, st, fleetID)
	if err != nil {
		c.Problem = unreadable(err)
	}
	verified := m.Verified(st, fleetID)
	w, err := fleet.ReadWitness(ctx, st, fleetID, verified)
	if err != nil {
		w = fleet.Witness{Fleet: fleetID}
		if k := verified; k != nil {
			w = *k
		}
		w.Problem = unreadable(err)
	}
	out.Problem = c.Problem
	if out.Problem == nil {
		out.Problem = w.Problem
	}
	if out.Problem == nil && out.MachineSetAside == "" {
		return out, ErrNothingToAccept
	}
	if out.Halts, err = haltsHeld(ctx, st, fleetID, m, verified, &w); err != nil {
		return out, err
	}
	if out.Problem != nil {
		if out.SetAside, err = restart(ctx, st, fleetID, by, reason, out.Problem, verified, now); err != nil {
			return out, err
		}
	}
	for i, h := range out.Halts {
		if out.Halts[i], err = holdAgain(ctx, st, h, now); err != nil {
			return out, err
		}
	}
	nw, err := fleet.ReadWitness(ctx, st, fleetID, nil)
	if err != nil {
		return out, err
	}
	if nw.Problem != nil {
		return out, fmt.Errorf("the new journal does not hold: %v", nw.Problem)
	}
	m.Accept(st, fleetID, nw, out.Halts, now)
	return out, m.Save()
}

// haltsHeld are the halts on fleet that hold whatever the store says: the
// store's in force, the journal's (w) no journaled release lifted, and
// those this machine knew that no journaled release lifted — one per
// agent, the store's first.
func haltsHeld(ctx context.Context, st fleet.Store, fleetID string, m *fleet.Machine, verified, w *fleet.Witness) ([]fleet.Halt, error) {
	all, err := st.ListHalts(ctx, fleetID)
	if err != nil {
		return nil, err
	}
	var out []fleet.Halt
	add := func(h fleet.Halt) {
		if !slices.ContainsFunc(out, func(x fleet.Halt) bool { return x.Agent == h.Agent }) {
			h.Released = nil
			out = append(out, h)
		}
	}
	for _, h := range all {
		if cur, ok, err := st.ActiveHalt(ctx, fleetID, h.Agent); err != nil {
			return nil, err
		} else if ok && cur.ID == h.ID {
			add(h)
		}
	}
	for _, h := range w.Halts {
		add(h)
	}
	// A release the journal witnessed before it broke or was lost still
	// stands: what this machine verified says so.
	for _, k := range m.InForce {
		if k.Fleet == fleetID && !w.Lifts(k.ID) && !verified.Lifts(k.ID) {
			add(k.Halt)
		}
	}
	return out, nil
}

// restart sets the journal aside and starts the new chain with the
// person's record; it returns where the old journal went.
func restart(ctx context.Context, st fleet.Store, fleetID, by, reason string, problem *fleet.JournalProblem, verified *fleet.Witness, now time.Time) (string, error) {
	r, ok := st.(fleet.JournalRestarter)
	if !ok {
		return "", errors.New("this store cannot start a fleet's journal again")
	}
	data, _ := json.Marshal(map[string]any{"by": by, "reason": reason, "problem": problem, "verified": verified})
	var round int64
	if rl, ok := st.(fleet.Rounds); ok {
		if mark, err := rl.LastRound(ctx, fleetID); err == nil {
			round = mark.Round
		}
	}
	text := "journal accepted by " + by + " as it stood (" + problem.Error() + ")"
	if reason != "" {
		text += ": " + reason
	}
	_, aside, err := r.RestartJournal(ctx, fleetID, fleet.JournalRecord{At: fleet.JournalTime(now), Kind: fleet.JournalAccept,
		Round: round, Text: text, Data: data})
	return aside, err
}

// holdAgain journals h on the new chain and puts it in force in the
// store: under its own id when the store has no record of that id, else
// under a new one (the store's record of the old id says it was lifted).
func holdAgain(ctx context.Context, st fleet.Store, h fleet.Halt, now time.Time) (fleet.Halt, error) {
	if cur, ok, err := st.ActiveHalt(ctx, h.Fleet, h.Agent); err != nil {
		return h, err
	} else if ok {
		h = cur
	} else {
		all, err := st.ListHalts(ctx, h.Fleet)
		if err != nil {
			return h, err
		}
		if slices.ContainsFunc(all, func(x fleet.Halt) bool { return x.ID == h.ID }) {
			h.ID = fleet.NewID()
		}
	}
	data, err := json.Marshal(h)
	if err != nil {
		return h, err
	}
	if _, err := st.AppendJournal(ctx, fleet.JournalRecord{At: fleet.JournalTime(now), Fleet: h.Fleet, Kind: fleet.JournalHalt,
		Round: h.Round, Agent: h.Agent, Text: h.Reason, Data: data}); err != nil {
		return h, err
	}
	if err := st.PutHalt(ctx, h); err != nil && !errors.Is(err, fleet.ErrExists) {
		return h, err
	}
	return h, nil
}
