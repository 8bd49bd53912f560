package laserbrain

import (
	"context"
	"errors"
	"fmt"
)

// Store keeps what outlives one process: runs (so a run can be continued by
// the next process), the context store and the machine's evidence counters.
// The default is a local directory (package localstore); the interface is
// shaped so that a database can take its place for several machines:
// opening a run is a row lock, saving it an update, contexts an upsert.
type Store interface {
	// OpenRun loads run id for stepping (a new run with that id when none
	// is saved) and holds it against every other process until the handle
	// is closed.
	OpenRun(ctx context.Context, id string) (RunHandle, error)
	// ReadRun loads a saved run for reading (history, judgment); it returns
	// an error wrapping ErrNoRun when there is none.
	ReadRun(ctx context.Context, id string) (*Run, error)
	// Contexts is the context store runs from this store record into.
	Contexts() ContextStore
	// Evidence is the machine's evidence counters.
	Evidence() EvidenceSource
	// RecordToolEvent bumps the evidence counters with one completed call.
	RecordToolEvent(ctx context.Context, ev Event) error
	// Flush writes whatever the store buffers (context records).
	Flush(ctx context.Context) error
	// Close flushes and releases the store.
	Close() error
}

// RunHandle is a run held open for stepping.
type RunHandle interface {
	Run() *Run
	// Created reports whether the run was new when opened.
	Created() bool
	// Save writes the run's current state, whole or not at all, and every
	// process sees it at once; it is durable (survives a crash of the
	// machine) once the store's Flush or Close returns.
	Save(ctx context.Context) error
	// Close releases the run without saving.
	Close() error
}

// ErrReadOnly is wrapped by the writes of a store opened for reading only
// (a command that only reads opens its stores so, and creates nothing).
var ErrReadOnly = errors.New("opened for reading only")

// ErrNoRun is wrapped by ReadRun when no run has the id.
var ErrNoRun = errors.New("no such run")

// ErrUnavailable is wrapped by a store's errors when it cannot reach where
// it keeps runs (a database out of reach): callers that can go on without
// the store (the hooks' failure policy) tell it from every other error.
var ErrUnavailable = errors.New("the store is out of reach")

// UnavailableError is an operation that failed because the store is out of
// reach; errors.Is(err, ErrUnavailable) holds for it. Where names the store
// for people (never with a password).
type UnavailableError struct {
	Where string
	Err   error
}

func (e *UnavailableError) Error() string {
	return "cannot reach the laserbrain store at " + e.Where + ": " + e.Err.Error()
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

func (e *UnavailableError) Unwrap() error { return e.Err }

// ErrRunExists is wrapped by ImportRun when the store has the run already.
var ErrRunExists = errors.New("run exists")

// Exporter is a store whose whole content can be listed, so that it can be
// copied into another store (laserbrain store migrate).
type Exporter interface {
	// RunIDs lists every saved run, sorted.
	RunIDs(ctx context.Context) ([]string, error)
	// ContextEntries is the whole context store.
	ContextEntries(ctx context.Context) (map[string]ContextEntry, error)
}

// StateReader is a store that loads a saved run without its history: its
// state alone, which is all its verdicts so far and its judgment
// (Run.Phronesis, Run.LastVerdict) read — for a long run, a small part of
// what ReadRun reads.
type StateReader interface {
	// ReadRunState is ReadRun without the history; it returns an error
	// wrapping ErrNoRun when there is no run.
	ReadRunState(ctx context.Context, id string) (*Run, error)
}

// BatchSaver is a store that saves several of the runs it holds in one
// go: each whole or none of them, as Save would each, for the cost of one
// (a stream's commit saves every run it changed since the last).
type BatchSaver interface {
	// SaveRuns saves every handle in hs (each opened by this store).
	SaveRuns(ctx context.Context, hs []RunHandle) error
}

// Importer is a store that takes runs and contexts copied from another.
type Importer interface {
	// ImportRun saves r, with the history ReadRun gave it, as it is; an
	// error wrapping ErrRunExists when the store has a run with its id.
	ImportRun(ctx context.Context, r *Run) error
	// ImportContexts combines entries into the store's contexts, once per
	// source: imported is false when source was imported before.
	ImportContexts(ctx context.Context, source string, entries map[string]ContextEntry) (imported bool, err error)
}

// ValidateRunID rejects ids a store could not use as a name: 1 to 64
// characters of letters, digits, '.', '_' and '-', starting with a letter
// or digit (checked byte by byte: every new run passes here several times).
func ValidateRunID(id string) error {
	if !validRunID(id) {
		return fmt.Errorf("run id %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}

func validRunID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}
