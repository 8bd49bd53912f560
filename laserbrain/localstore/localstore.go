// Package localstore is laserbrain's default Store: one directory on this
// machine. Runs are files under runs/, each held by an advisory lock while a
// process steps it; contexts.json and evidence.json sit in the config
// directory the reference uses. Every file is replaced atomically, and every
// read-modify-write happens under a lock, so two processes never lose each
// other's updates.
package localstore

import (
	"bytes"
	"context"
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

// Paths says where the store lives.
type Paths struct {
	// Home holds runs/.
	Home string
	// Config holds contexts.json and evidence.json.
	Config string
}

// DefaultPaths follows the reference: with $LASERBRAIN_HOME set, the home
// is that directory and the config directory is its config/; otherwise both
// are <user config dir>/laserbrain (~/.config/laserbrain on Linux).
func DefaultPaths() (Paths, error) {
	if h := os.Getenv("LASERBRAIN_HOME"); h != "" {
		return Paths{Home: h, Config: filepath.Join(h, "config")}, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return Paths{}, fmt.Errorf("no place for the laserbrain store (set LASERBRAIN_HOME): %w", err)
	}
	d := filepath.Join(dir, "laserbrain")
	return Paths{Home: d, Config: d}, nil
}

// LockTimeout is how long a process waits for a run or a shared file that
// another process holds.
var LockTimeout = 10 * time.Second

// Store is the directory store. Context records are buffered in memory and
// written by Flush (the CLI flushes after each check, and periodically
// while streaming), so a stream of checks does not rewrite contexts.json on
// every line.
type Store struct {
	paths    Paths
	contexts *contexts
	evidence *evidence
}

var _ laserbrain.Store = (*Store)(nil)

// Open opens (and creates) the store at paths.
func Open(paths Paths) (*Store, error) {
	for _, d := range []string{filepath.Join(paths.Home, "runs"), paths.Config} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	s := &Store{paths: paths}
	s.contexts = &contexts{path: filepath.Join(paths.Config, "contexts.json")}
	s.evidence = &evidence{path: filepath.Join(paths.Config, "evidence.json")}
	if err := s.contexts.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// Paths returns where the store lives.
func (s *Store) Paths() Paths { return s.paths }

func (s *Store) runPath(id string) string { return filepath.Join(s.paths.Home, "runs", id+".json") }

// OpenRun implements laserbrain.Store.
func (s *Store) OpenRun(ctx context.Context, id string) (laserbrain.RunHandle, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, err
	}
	lock, err := fsx.LockFile(filepath.Join(s.paths.Home, "runs", id+".lock"), LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("run %s is in use: %w", id, err)
	}
	h := &runHandle{store: s, lock: lock, path: s.runPath(id)}
	r, err := s.load(id)
	switch {
	case errors.Is(err, laserbrain.ErrNoRun):
		h.run = laserbrain.NewRun(laserbrain.RunOptions{ID: id, Contexts: s.contexts, Evidence: s.evidence})
		h.created = true
	case err != nil:
		lock.Unlock()
		return nil, err
	default:
		h.run = r
	}
	return h, nil
}

// ReadRun implements laserbrain.Store.
func (s *Store) ReadRun(ctx context.Context, id string) (*laserbrain.Run, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, err
	}
	return s.load(id)
}

func (s *Store) load(id string) (*laserbrain.Run, error) {
	data, err := os.ReadFile(s.runPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run %s: %w (in %s)", id, laserbrain.ErrNoRun, filepath.Join(s.paths.Home, "runs"))
	}
	if err != nil {
		return nil, err
	}
	r := &laserbrain.Run{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("run %s: %s is not a saved run: %w", id, s.runPath(id), err)
	}
	if r.ID() != id {
		return nil, fmt.Errorf("run %s: %s holds run %q", id, s.runPath(id), r.ID())
	}
	r.Attach(s.contexts, s.evidence, nil)
	return r, nil
}

// Contexts implements laserbrain.Store.
func (s *Store) Contexts() laserbrain.ContextStore { return s.contexts }

// Evidence implements laserbrain.Store.
func (s *Store) Evidence() laserbrain.EvidenceSource { return s.evidence }

// Flush implements laserbrain.Store: it merges the buffered context records
// into contexts.json under its lock.
func (s *Store) Flush(ctx context.Context) error { return s.contexts.flush() }

// Close implements laserbrain.Store.
func (s *Store) Close() error { return s.Flush(context.Background()) }

// RecordToolEvent implements laserbrain.Store.
func (s *Store) RecordToolEvent(ctx context.Context, ev laserbrain.Event) error {
	return s.evidence.record(ev)
}

type runHandle struct {
	store   *Store
	lock    *fsx.Lock
	path    string
	run     *laserbrain.Run
	created bool
	closed  bool
}

func (h *runHandle) Run() *laserbrain.Run { return h.run }
func (h *runHandle) Created() bool        { return h.created }

func (h *runHandle) Save(ctx context.Context) error {
	if h.closed {
		return fmt.Errorf("run %s: saved after close", h.run.ID())
	}
	data, err := json.Marshal(h.run)
	if err != nil {
		return err
	}
	return fsx.WriteFile(h.path, append(data, '\n'), 0o644)
}

func (h *runHandle) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	return h.lock.Unlock()
}

// contexts is contexts.json: a snapshot read at open (and refreshed at each
// flush) plus the records made since, which flush merges into whatever the
// file holds by then.
type contexts struct {
	path    string
	mu      sync.Mutex
	view    *laserbrain.MemContexts // snapshot with pending applied
	pending []laserbrain.ContextStep
}

func (c *contexts) load() error {
	entries, err := readContexts(c.path)
	if err != nil {
		return err
	}
	c.view = laserbrain.NewMemContexts()
	c.view.Load(entries)
	return nil
}

func readContexts(path string) (map[string]laserbrain.ContextEntry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]laserbrain.ContextEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	entries := map[string]laserbrain.ContextEntry{}
	if len(bytes.TrimSpace(data)) == 0 {
		return entries, nil
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("%s is not a context store (fix or move it; nothing was changed): %w", path, err)
	}
	return entries, nil
}

func (c *contexts) RecordStep(s laserbrain.ContextStep) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.Tokens = append([]string(nil), s.Tokens...)
	c.pending = append(c.pending, s)
	return c.view.RecordStep(s)
}

func (c *contexts) Context(id string) (laserbrain.ContextEntry, bool, error) {
	return c.view.Context(id)
}

func (c *contexts) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	unlock, err := lockShared(c.path)
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := readContexts(c.path)
	if err != nil {
		return err
	}
	for _, s := range c.pending {
		e := entries[s.ID]
		e.Apply(s)
		entries[s.ID] = e
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(entries); err != nil {
		return err
	}
	if err := fsx.WriteFile(c.path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	c.pending = c.pending[:0]
	c.view.Load(entries)
	return nil
}

// evidence is evidence.json, re-read only when the file changes.
type evidence struct {
	path   string
	mu     sync.Mutex
	stamp  fileStamp
	cached laserbrain.Evidence
	ok     bool
}

type fileStamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

func (e *evidence) Evidence() (laserbrain.Evidence, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
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
	if err != nil {
		// An unreadable record is no evidence: the check counts as dark.
		e.ok = false
		return laserbrain.Evidence{}, false
	}
	e.stamp, e.cached, e.ok = st, ev, true
	return ev, true
}

func readEvidence(path string) (laserbrain.Evidence, error) {
	var ev laserbrain.Evidence
	data, err := os.ReadFile(path)
	if err != nil {
		return ev, err
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return ev, fmt.Errorf("%s: %w", path, err)
	}
	return ev, nil
}

func (e *evidence) record(call laserbrain.Event) error {
	unlock, err := lockShared(e.path)
	if err != nil {
		return err
	}
	defer unlock()
	ev, err := readEvidence(e.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("evidence not recorded (fix or move the file): %w", err)
	}
	ev.Record(call, time.Now().UTC())
	data, err := json.MarshalIndent(ev, "", " ")
	if err != nil {
		return err
	}
	return fsx.WriteFile(e.path, append(data, '\n'), 0o644)
}
