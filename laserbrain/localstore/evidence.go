package localstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/laserbrain"
)

// OpenEvidence is the machine's evidence counters (evidence.json in the
// config directory), for a store that keeps runs elsewhere: the counters
// describe this machine, so they stay on it.
func OpenEvidence(configDir string) *Evidence {
	return &Evidence{path: filepath.Join(configDir, "evidence.json")}
}

// Evidence implements laserbrain.EvidenceSource; Record adds a call.
func (e *Evidence) Record(call laserbrain.Event) error { return e.record(call) }

// Evidence is evidence.json, re-read only when the file changes, and
// looked at no more than once per evidenceRecheck: a stream of checks
// arriving faster than that is machine-generated, and a tool call recorded
// in between is seen by the next check instead (the counters are
// monotonic, so nothing is lost).
type Evidence struct {
	path    string
	mu      sync.Mutex
	stamp   fileStamp
	cached  laserbrain.Evidence
	ok      bool
	checked time.Time
}

const evidenceRecheck = time.Millisecond

type fileStamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

func (e *Evidence) Evidence() (laserbrain.Evidence, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	if now.Sub(e.checked) < evidenceRecheck {
		return e.cached, e.ok
	}
	e.checked = now
	fi, err := os.Stat(e.path)
	if err != nil {
		e.stamp, e.ok = fileStamp{}, false
		return laserbrain.Evidence{}, false
	}
	st := stampOf(fi)
	if st == e.stamp && e.ok {
		return e.cached, true
	}
	ev, err := readEvidence(e.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// The file is written in place: a read that does not parse may
		// have met a write half done, which the writers' lock waits out.
		ev, err = e.readLocked()
	}
	if err != nil {
		// An unreadable record is no evidence: the check counts as dark.
		e.ok = false
		return laserbrain.Evidence{}, false
	}
	e.stamp, e.cached, e.ok = st, ev, true
	return ev, true
}

// readLocked reads the record under the writers' lock.
func (e *Evidence) readLocked() (laserbrain.Evidence, error) {
	l, err := fsx.LockFile(e.lockPath(), LockTimeout)
	if err != nil {
		return laserbrain.Evidence{}, err
	}
	defer l.Unlock()
	return readEvidence(e.path)
}

// lockPath is the writers' advisory lock beside the record.
func (e *Evidence) lockPath() string { return e.path + ".flock" }

func readEvidence(path string) (laserbrain.Evidence, error) {
	var ev laserbrain.Evidence
	data, err := os.ReadFile(path)
	if err != nil {
		return ev, err
	}
	if len(data) == 0 {
		return ev, fmt.Errorf("%s: %w", path, errEmptyEvidence)
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return ev, fmt.Errorf("%s: %w", path, err)
	}
	return ev, nil
}

// errEmptyEvidence is an evidence.json of no bytes: never written so (every
// write is a whole record), it is what a crash can leave of an unsynced
// replace, and reads as no evidence yet — a record starts the counters over.
var errEmptyEvidence = errors.New("it is empty")

func (e *Evidence) record(call laserbrain.Event) error {
	// Only the advisory lock: our own processes queue on it, so none loses
	// another's increment. The reference writes this file with no lock at
	// all (a racing writer loses an increment at worst, and an increment is
	// not a judgment), so the marker file shared with it for the contexts
	// would hold back no writer the advisory lock does not.
	l, err := fsx.LockFile(e.lockPath(), LockTimeout)
	if err != nil {
		return err
	}
	defer l.Unlock()
	ev, err := readEvidence(e.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errEmptyEvidence) {
		return fmt.Errorf("evidence not recorded (fix or move the file): %w", err)
	}
	ev.Record(call, time.Now().UTC())
	data, err := json.MarshalIndent(ev, "", " ")
	if err != nil {
		return err
	}
	// Not synced, and written over the same file (one block, padded):
	// a crash may lose the last calls counted, as a racing writer may in
	// the reference, and nothing more (the counters are corroboration,
	// read as an advance between two checks; the run's own record of each
	// call is synced where it is written).
	if err := fsx.OverwriteUnsynced(e.path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	e.mu.Lock()
	// This process's own record is seen at once: the same inode, and on a
	// file system with coarse times maybe the same time and size.
	e.checked, e.stamp, e.ok = time.Time{}, fileStamp{}, false
	e.mu.Unlock()
	return nil
}
