package laserbrain

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
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
	// Save writes the run's current state, whole or not at all.
	Save(ctx context.Context) error
	// Close releases the run without saving.
	Close() error
}

// ErrNoRun is wrapped by ReadRun when no run has the id.
var ErrNoRun = errors.New("no such run")

// runIDPattern is ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$, compiled on first use
// (hook processes start with this package linked).
var runIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// ValidateRunID rejects ids a store could not use as a name: 1 to 64
// characters of letters, digits, '.', '_' and '-', starting with a letter
// or digit.
func ValidateRunID(id string) error {
	if !runIDPattern().MatchString(id) {
		return fmt.Errorf("run id %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}
