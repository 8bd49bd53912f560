package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/slotfile"
)

// A run's record is rewritten after every tool call (its coverage counts)
// and every batch of checks. It lives in runs/<id>.run, a file of two
// sealed slots (internal/slotfile): an update writes the slot that does
// not hold the newest record, in place, and waits for the disk with
// fdatasync — no new inode and no journal commit, where replacing a file
// whole costs both. A crash mid-write leaves that slot torn and the other
// whole, which readers take; what an update returned for is on the disk.
// Readers take no lock; one that finds neither slot whole (two updates
// went over the file while it read) reads again under the run's lock.
//
// Homes written before keep a run in runs/<id>.json, replaced whole: it is
// read as it is, and its first update moves it to runs/<id>.run.

// runPath is joined by hand: a valid id has no separator, and every check
// on a run that is not registered asks for it.
func (l *Local) runPath(id string) string {
	return l.runsDir + string(filepath.Separator) + id + ".run"
}

// legacyRunPath is where an earlier version kept a run.
func (l *Local) legacyRunPath(id string) string {
	return l.runsDir + string(filepath.Separator) + id + ".json"
}

// encodeRun is r as its slot holds it.
func encodeRun(r *Run) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// CreateRun implements Runs.
func (l *Local) CreateRun(ctx context.Context, r Run) error {
	if err := ValidateRunID(r.ID); err != nil {
		return err
	}
	data, err := encodeRun(&r)
	if err != nil {
		return err
	}
	p := l.runPath(r.ID)
	return l.createFile(p, "run "+r.ID, func() error { return slotfile.Create(p, data) }, func() error {
		for _, s := range r.Sessions {
			if err := l.indexSession(s, r.ID); err != nil {
				return err
			}
		}
		return nil
	}, l.legacyRunPath(r.ID))
}

// Run implements Runs.
func (l *Local) Run(ctx context.Context, id string) (Run, error) {
	if err := ValidateRunID(id); err != nil {
		return Run{}, err
	}
	// Read before a Run is made: most lookups find none (an unregistered
	// id), and a Run decoded through an interface lives on the heap.
	path, data, err := l.readRun(id)
	if err != nil {
		return Run{}, err
	}
	var r Run
	return r, decodeJSON(path, data, &r)
}

// readRun reads run id's record, and where it was read from.
func (l *Local) readRun(id string) (string, []byte, error) {
	path := l.runPath(id)
	data, err := slotfile.Read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		path = l.legacyRunPath(id)
		data, err = os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil, runNotFound(id)
		}
	case errors.Is(err, slotfile.ErrTorn):
		data, err = l.readRunLocked(path)
	}
	return path, data, err
}

// readRunLocked reads the run file at path again under the run's lock: a
// file that is torn there is damaged. A store opened for reading takes the
// lock only when its file is there (it creates nothing).
func (l *Local) readRunLocked(path string) ([]byte, error) {
	lockPath := path + ".lock"
	if _, err := os.Stat(lockPath); err == nil || !l.readOnly {
		lk, err := fsx.LockFile(lockPath, LockTimeout)
		if err != nil {
			return nil, err
		}
		defer lk.Unlock()
	}
	data, err := slotfile.Read(path)
	if errors.Is(err, slotfile.ErrTorn) {
		return nil, fmt.Errorf("%s is damaged (fix or move it; nothing was changed): %w", path, slotfile.ErrTorn)
	}
	return data, err
}

// UpdateRun implements Runs.
func (l *Local) UpdateRun(ctx context.Context, id string, f func(*Run) error) (Run, error) {
	if err := ValidateRunID(id); err != nil {
		return Run{}, err
	}
	p := l.runPath(id)
	lk, err := l.lock(p)
	if err != nil {
		return Run{}, err
	}
	defer lk.Unlock()
	file, data, err := slotfile.Open(p)
	legacy := errors.Is(err, fs.ErrNotExist)
	switch {
	case legacy:
		if data, err = os.ReadFile(l.legacyRunPath(id)); errors.Is(err, fs.ErrNotExist) {
			return Run{}, runNotFound(id)
		}
	case errors.Is(err, slotfile.ErrTorn):
		return Run{}, fmt.Errorf("%s is damaged (fix or move it; nothing was changed): %w", p, err)
	case err == nil:
		defer file.Close()
	}
	if err != nil {
		return Run{}, err
	}
	var r Run
	if err := decodeJSON(p, data, &r); err != nil {
		return Run{}, err
	}
	before := len(r.Sessions)
	if err := f(&r); err != nil {
		return Run{}, err
	}
	r.ID = id // the id is the key, never changed by an update
	if data, err = encodeRun(&r); err != nil {
		return Run{}, err
	}
	if err := l.writeRun(file, p, id, data); err != nil {
		return Run{}, err
	}
	for _, s := range r.Sessions[min(before, len(r.Sessions)):] {
		if err := l.indexSession(s, id); err != nil {
			return Run{}, err
		}
	}
	return r, nil
}

// writeRun writes run id's record: into its slot file, or (file nil: an
// earlier version's run) into a new one, the old file removed once the
// new one is on the disk.
func (l *Local) writeRun(file *slotfile.File, p, id string, data []byte) error {
	if file != nil {
		return file.Write(data)
	}
	if err := slotfile.Create(p, data); err != nil {
		return err
	}
	if err := os.Remove(l.legacyRunPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ListRuns implements Runs.
func (l *Local) ListRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	ids, err := l.runIDs()
	if err != nil {
		return nil, err
	}
	var out []Run
	for _, id := range ids {
		path, data, err := l.readRun(id)
		if errors.Is(err, ErrNotFound) {
			continue // removed while listed
		}
		if err != nil {
			return nil, err
		}
		var r Run
		if err := decodeJSON(path, data, &r); err != nil {
			return nil, err
		}
		if f.Fleet == "" || r.Fleet == f.Fleet {
			out = append(out, r)
		}
	}
	oldestFirst(out, func(r *Run) (time.Time, string) { return r.Created, r.ID })
	return out, nil
}

// runIDs are the ids of the runs in the store, each once (a run an
// earlier version kept, moved by an update a crash cut short, is in both
// files for a moment), in name order.
func (l *Local) runIDs() ([]string, error) {
	entries, err := os.ReadDir(l.runsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".run")
		if !ok {
			id, ok = strings.CutSuffix(name, ".json")
		}
		if !ok || seen[id] || ValidateRunID(id) != nil {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}
