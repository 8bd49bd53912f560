package fleet

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
)

// Machine is what this machine last knew of the fleets' halts and their
// journals' witness: kept beside the local fleet store (MachinePath), so
// that the gate enforces a halt while the store's database is out of reach
// and reads a journal only from where it last stopped. Every hook that
// reads the halts keeps it up to date; it is a cache of the store, never
// a source of permissions.
type Machine struct {
	// Witness is each fleet's, as last read.
	Witness map[string]*Witness `json:"witness,omitempty"`
	// InForce are the halts in force as last read from the store, each
	// with when.
	InForce []KnownHalt `json:"in_force,omitempty"`

	loaded []byte // as read: Save writes only a change
}

// KnownHalt is a halt in force as read at At.
type KnownHalt struct {
	Halt
	ReadAt time.Time `json:"read_at"`
}

// MachinePath is where Machine is kept: beside the local fleet store.
func MachinePath() (string, error) {
	dir, err := DefaultDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "machine.json"), nil
}

// ReadMachine reads what this machine knows; nothing (not an error) when
// it knows nothing yet or the file cannot be read.
func ReadMachine() *Machine {
	m := &Machine{}
	p, err := MachinePath()
	if err != nil {
		return m
	}
	data, err := os.ReadFile(p)
	if err == nil && json.Unmarshal(data, m) == nil {
		m.loaded = data
	}
	return m
}

// For is the halt in force this machine knows of on the agent of run (by
// its run id, or its name), if any.
func (m *Machine) For(agent, run string) (KnownHalt, bool) {
	for _, k := range m.InForce {
		if (agent != "" && k.Agent == agent) || (run != "" && k.Run == run) {
			return k, true
		}
	}
	return KnownHalt{}, false
}

// Note records what was read of one agent: its halt in force (ok) or
// none, and its fleet's witness.
func (m *Machine) Note(fleet, agent, run string, h Halt, ok bool, w *Witness, at time.Time) {
	m.InForce = slices.DeleteFunc(m.InForce, func(k KnownHalt) bool {
		return k.Fleet == fleet && (k.Agent == agent || (run != "" && k.Run == run))
	})
	if ok {
		m.InForce = append(m.InForce, KnownHalt{Halt: h, ReadAt: at.UTC()})
	}
	if w != nil {
		if m.Witness == nil {
			m.Witness = map[string]*Witness{}
		}
		m.Witness[fleet] = w
	}
}

// Save writes what this machine knows, best effort under a short lock (a
// hook must not wait on it); a failure is returned for a log, nothing
// depends on it.
func (m *Machine) Save() error {
	p, err := MachinePath()
	if err != nil {
		return err
	}
	data, err := json.Marshal(m)
	if err != nil || string(data) == string(m.loaded) {
		return err
	}
	lk, err := fsx.LockFile(p+".lock", 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	if err := fsx.WriteFile(p, data, 0o644); err != nil {
		return err
	}
	m.loaded = data
	return nil
}

// NoteMachineHalt adds a halt just put to what this machine knows, so that
// it holds here from now on even if the store goes out of reach before a
// hook reads it.
func NoteMachineHalt(h Halt, at time.Time) error {
	m := ReadMachine()
	m.Note(h.Fleet, h.Agent, h.Run, h, true, nil, at)
	return m.Save()
}
