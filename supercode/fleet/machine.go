package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
)

// Machine is what this machine last verified of the fleets' journals and
// the halts in force on their agents. It is kept in the laserbrain home
// beside the fleet store, not in it (MachinePath), for two reasons: the
// gate enforces a halt while the store's database is out of reach, and a
// store that loses what the machine verified — the fleet's directory
// removed, its journal and halts deleted, emptied or rewritten — releases
// nothing: the halts the machine knew hold, and ReadWitness names the loss,
// until a person accepts the journal as it stands (Accept).
//
// It only moves forward: a fleet's witness is replaced by one that extends
// it (ReadWitness read it on from the last one), a known halt is dropped
// only when the journal witnesses its release, and a file that exists but
// cannot be read — emptied through a hard link, edited by hand — is
// Damaged, which the gate refuses on (it is always written whole, by
// rename, so it is never half-written). Reading it costs the gate one small
// file; only records past what it verified are read from the journal.
type Machine struct {
	// Witness is each fleet's journal's, as last verified, by where the
	// journal is kept (JournalLocation: its store and fleet), so that the
	// stores one home has used for a fleet are each held to their own.
	Witness map[string]*Witness `json:"witness,omitempty"`
	// InForce are the halts in force as last read, each with when.
	InForce []KnownHalt `json:"in_force,omitempty"`

	// Damaged: the file exists and cannot be read.
	Damaged error `json:"-"`

	loaded []byte           // as read: Save writes only a change
	notes  []func(*Machine) // what this process noted, replayed onto the file at Save
}

// KnownHalt is a halt in force as read at ReadAt.
type KnownHalt struct {
	Halt
	ReadAt time.Time `json:"read_at"`
}

// MachinePath is where Machine is kept: in the laserbrain home, beside the
// fleet store's directory (not in it).
func MachinePath() (string, error) {
	dir, err := DefaultDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(dir), "machine.json"), nil
}

// legacyMachinePath is where an earlier version kept it: in the fleet
// store's directory. It is read when MachinePath holds nothing yet.
func legacyMachinePath() (string, error) {
	dir, err := DefaultDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "machine.json"), nil
}

// MachineDamagedError is a machine.json that exists and cannot be read.
type MachineDamagedError struct {
	Path string
	Err  error
}

func (e *MachineDamagedError) Error() string {
	return fmt.Sprintf("%s, what this machine verified of the fleets' journals and halts, cannot be read (%v): it is only ever written whole, so it was emptied or changed from outside laserbrain", e.Path, e.Err)
}

func (e *MachineDamagedError) Unwrap() error { return e.Err }

// ReadMachine reads what this machine knows: nothing when it knows nothing
// yet (or its home cannot be placed), Damaged when the file is there and
// cannot be read.
func ReadMachine() *Machine {
	m := &Machine{}
	p, err := MachinePath()
	if err != nil {
		return m
	}
	if c := cachedMachine(p); c != nil {
		return c
	}
	readAt := time.Now()
	data, st, err := readMachineFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		if old, lerr := legacyMachinePath(); lerr == nil {
			if data, err = os.ReadFile(old); err == nil {
				if json.Unmarshal(data, m) != nil {
					*m = Machine{} // an earlier version's cache: not evidence
				}
				return m // loaded stays nil: Save writes MachinePath
			}
		}
		return &Machine{}
	}
	if err == nil {
		err = json.Unmarshal(data, m)
		if err == nil && len(data) == 0 {
			err = errors.New("it is empty")
		}
	}
	if err != nil {
		return &Machine{Damaged: &MachineDamagedError{Path: p, Err: err}}
	}
	m.loaded = data
	keepMachine(p, st, readAt, m)
	return m
}

// readMachineFile reads the file at path and the stamp of what it read.
func readMachineFile(path string) ([]byte, machineStamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, machineStamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, machineStamp{}, err
	}
	data, err := io.ReadAll(f)
	return data, stampOfMachine(fi), err
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
// none, and the witness of its fleet's journal in st — which replaces the
// one known only when it holds and reaches at least as far (the machine
// never moves back).
func (m *Machine) Note(st any, fleet, agent, run string, h Halt, ok bool, w *Witness, at time.Time) {
	key := machineKey(st, fleet)
	note := func(m *Machine) {
		m.InForce = slices.DeleteFunc(m.InForce, func(k KnownHalt) bool {
			return k.Fleet == fleet && (k.Agent == agent || (run != "" && k.Run == run))
		})
		if ok {
			m.InForce = append(m.InForce, KnownHalt{Halt: h, ReadAt: at.UTC()})
		}
		if w != nil {
			m.noteWitness(key, *w, at)
		}
	}
	note(m)
	m.notes = append(m.notes, note)
}

// machineKey is where fleet's journal in st is kept: Machine's key for
// its witness.
func machineKey(st any, fleet string) string {
	if loc := JournalLocation(st, fleet); loc != "" {
		return loc
	}
	return fleet
}

// Verified is what this machine verified of fleet's journal in st (nil:
// nothing yet).
func (m *Machine) Verified(st any, fleet string) *Witness {
	return m.Witness[machineKey(st, fleet)]
}

// NoteWitness records the witness of fleet's journal in st as verified,
// when it holds and reaches at least as far as the one known.
func (m *Machine) NoteWitness(st any, fleet string, w Witness, at time.Time) {
	key := machineKey(st, fleet)
	note := func(m *Machine) { m.noteWitness(key, w, at) }
	note(m)
	m.notes = append(m.notes, note)
}

func (m *Machine) noteWitness(key string, w Witness, at time.Time) {
	if w.Problem != nil {
		return
	}
	if cur := m.Witness[key]; cur != nil && cur.Problem == nil && cur.Records > w.Records {
		return
	}
	v := w.clone()
	v.VerifiedAt = at.UTC()
	if m.Witness == nil {
		m.Witness = map[string]*Witness{}
	}
	m.Witness[key] = &v
	// A halt the journal witnesses released is no longer known in force.
	m.InForce = slices.DeleteFunc(m.InForce, func(k KnownHalt) bool { return k.Fleet == w.Fleet && v.Lifts(k.ID) })
}

// Accept is a person's acceptance of fleet's journal in st as it stands: w
// (read from the start, its chain holding) becomes what this machine
// verified, however little it holds, and the halts known in force on the
// fleet's agents are those given (those that held, journaled again).
func (m *Machine) Accept(st any, fleet string, w Witness, held []Halt, at time.Time) {
	key := machineKey(st, fleet)
	accept := func(m *Machine) {
		v := w.clone()
		v.Problem, v.VerifiedAt = nil, at.UTC()
		if m.Witness == nil {
			m.Witness = map[string]*Witness{}
		}
		m.Witness[key] = &v
		m.InForce = slices.DeleteFunc(m.InForce, func(k KnownHalt) bool { return k.Fleet == fleet })
		for _, h := range held {
			m.InForce = append(m.InForce, KnownHalt{Halt: h, ReadAt: at.UTC()})
		}
	}
	accept(m)
	m.notes = append(m.notes, accept)
}

// Save writes what this machine knows: under a short lock (a hook must not
// wait on it), the file is read again and what this process noted is
// replayed onto it, so that writers at the same time lose nothing of each
// other's. A damaged file is never overwritten: it is evidence, and what
// it held is not known.
func (m *Machine) Save() error {
	if m.Damaged != nil {
		return m.Damaged
	}
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
	cur := ReadMachine()
	if cur.Damaged != nil {
		return cur.Damaged
	}
	for _, note := range m.notes {
		note(cur)
	}
	if data, err = json.Marshal(cur); err != nil {
		return err
	}
	if err := fsx.WriteFile(p, data, 0o644); err != nil {
		return err
	}
	cur.loaded, cur.notes = data, nil
	*m = *cur
	return nil
}

// NoteMachineHalts adds halts just put to what this machine knows (one
// read and one write of the file), so that they hold here from now on even
// if the store goes out of reach, or loses them, before a hook reads them.
func NoteMachineHalts(halts []Halt) error {
	m := ReadMachine()
	for _, h := range halts {
		m.Note(nil, h.Fleet, h.Agent, h.Run, h, true, nil, h.At)
	}
	return m.Save()
}

// HaltOn is the halt in force on agent (run: its run id) of fleet as the
// gate holds it (HaltInForce, read on from what this machine verified of
// the journal, so that a journal that lost what was verified keeps its
// halts in force), and notes what was read. Its Problem says the journal
// does not hold, and why.
func (m *Machine) HaltOn(ctx context.Context, st Store, fleet, agent, run string, at time.Time) (Halt, bool, *Witness, error) {
	h, ok, w, err := HaltInForce(ctx, st, fleet, agent, run, m.Verified(st, fleet))
	if err != nil {
		return Halt{}, false, nil, err
	}
	m.Note(st, fleet, agent, run, h, ok, w, at)
	return h, ok, w, nil
}

// Lifts reports whether the journal, holding, witnesses halt id released.
func (w *Witness) Lifts(id string) bool {
	return w != nil && w.Problem == nil && slices.Contains(w.Released, id)
}

// MachineCheck is what this machine verified of one fleet, held against
// the store as it is now (laserbrain supervise verify, doctor).
type MachineCheck struct {
	// Damaged: machine.json cannot be read (nothing else is known).
	Damaged error
	// Verified is what this machine verified of the fleet's journal (nil:
	// nothing yet).
	Verified *Witness
	// Problem: the journal no longer holds what was verified (or its chain
	// does not hold); nil when it does.
	Problem *JournalProblem
	// Held are halts this machine knew in force of which the store holds
	// no record, and no journaled release lifted: the gate holds them.
	Held []KnownHalt
}

// CheckMachine holds what this machine verified of fleet against st.
func CheckMachine(ctx context.Context, st Store, fleet string) (MachineCheck, error) {
	m := ReadMachine()
	if m.Damaged != nil {
		return MachineCheck{Damaged: m.Damaged}, nil
	}
	c := MachineCheck{Verified: m.Verified(st, fleet)}
	w, err := ReadWitness(ctx, st, fleet, c.Verified)
	if err != nil {
		return c, err
	}
	c.Problem = w.Problem
	halts, err := st.ListHalts(ctx, fleet)
	if err != nil {
		return c, err
	}
	for _, k := range m.InForce {
		stored := slices.ContainsFunc(halts, func(h Halt) bool { return h.ID == k.ID })
		if k.Fleet == fleet && !stored && !w.Lifts(k.ID) {
			c.Held = append(c.Held, k)
		}
	}
	return c, nil
}

// Lines are the check's findings, one a line, for a person: empty when
// the store holds what this machine verified.
func (c MachineCheck) Lines(location string) []string {
	if c.Damaged != nil {
		return []string{c.Damaged.Error()}
	}
	var out []string
	if c.Problem != nil && c.Verified != nil {
		out = append(out, fmt.Sprintf("the journal (%s) no longer holds what this machine verified: %v", location, c.Problem))
	}
	for _, k := range c.Held {
		out = append(out, fmt.Sprintf("the halt on %s (%s) is gone from the store, and no journaled release lifted it: the gate holds it (this machine knew it in force at %s)",
			k.Agent, k.ID, k.ReadAt.UTC().Format(time.RFC3339)))
	}
	return out
}

// MachineProblem is what is wrong with fleet's journal against what this
// machine verified of it (nil when the journal extends it, or nothing was
// verified yet): what a writer checks before it appends, so that nothing is
// appended over a loss. It reads only the records past what was verified.
func MachineProblem(ctx context.Context, st Journal, fleet string) (*JournalProblem, error) {
	m := ReadMachine()
	if m.Damaged != nil {
		return &JournalProblem{Index: 1, Seq: 1, Kind: TamperCorrupt, Detail: m.Damaged.Error()}, nil
	}
	k := m.Verified(st, fleet)
	if k == nil {
		return nil, nil
	}
	w, err := ReadWitness(ctx, st, fleet, k)
	if err != nil {
		return nil, err
	}
	return w.Problem, nil
}

// NoteJournal moves what this machine verified of fleet's journal on to
// its head, when the journal holds (a writer calls it after it appended;
// best effort: a failure is returned for a log).
func NoteJournal(ctx context.Context, st Journal, fleet string, at time.Time) error {
	m := ReadMachine()
	if m.Damaged != nil {
		return m.Damaged
	}
	w, err := ReadWitness(ctx, st, fleet, m.Verified(st, fleet))
	if err != nil || w.Problem != nil {
		return err
	}
	m.NoteWitness(st, fleet, w, at)
	return m.Save()
}
