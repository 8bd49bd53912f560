package localstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

func (s *Store) historyPath(id string) string {
	return filepath.Join(s.paths.Home, "runs", id+".history.jsonl")
}

// runFile is what <id>.json holds.
type runFile struct {
	Run *laserbrain.Run `json:"run"`
	// HistoryBytes is how much of the history file is committed; bytes
	// beyond it were written by a save that did not finish.
	HistoryBytes int64 `json:"history_bytes"`
}

// OpenRun implements laserbrain.Store.
func (s *Store) OpenRun(ctx context.Context, id string) (laserbrain.RunHandle, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, err
	}
	lock, err := fsx.LockFile(filepath.Join(s.paths.Home, "runs", id+".lock"), LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("run %s is in use: %w", id, err)
	}
	h := &runHandle{store: s, lock: lock, id: id}
	f, err := s.load(id)
	switch {
	case errors.Is(err, laserbrain.ErrNoRun):
		h.run = laserbrain.NewRun(laserbrain.RunOptions{ID: id, Contexts: s.contexts, Evidence: s.evidence})
		h.created = true
	case err != nil:
		lock.Unlock()
		return nil, err
	default:
		h.run, h.historyBytes = f.Run, f.HistoryBytes
	}
	return h, nil
}

// ReadRun implements laserbrain.Store; the run comes with its history.
func (s *Store) ReadRun(ctx context.Context, id string) (*laserbrain.Run, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, err
	}
	f, err := s.load(id)
	if err != nil {
		return nil, err
	}
	hist, err := s.readHistory(id, f.HistoryBytes)
	if err != nil {
		return nil, err
	}
	f.Run.LoadHistory(hist)
	return f.Run, nil
}

func (s *Store) readHistory(id string, n int64) ([]laserbrain.StepRecord, error) {
	if n == 0 {
		return nil, nil
	}
	fh, err := os.Open(s.historyPath(id))
	if err != nil {
		return nil, fmt.Errorf("run %s: history: %w", id, err)
	}
	defer fh.Close()
	data := make([]byte, n)
	if _, err := io.ReadFull(fh, data); err != nil {
		return nil, fmt.Errorf("run %s: history is shorter than its state says: %w", id, err)
	}
	var out []laserbrain.StepRecord
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var st laserbrain.StepRecord
		if err := json.Unmarshal(line, &st); err != nil {
			return nil, fmt.Errorf("run %s: history line %d: %w", id, i+1, err)
		}
		out = append(out, st)
	}
	return out, nil
}

func (s *Store) load(id string) (*runFile, error) {
	data, err := os.ReadFile(s.runPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run %s: %w (in %s)", id, laserbrain.ErrNoRun, filepath.Join(s.paths.Home, "runs"))
	}
	if err != nil {
		return nil, err
	}
	f := &runFile{Run: &laserbrain.Run{}}
	if err := json.Unmarshal(data, f); err != nil || f.Run == nil {
		return nil, fmt.Errorf("run %s: %s is not a saved run: %v", id, s.runPath(id), err)
	}
	if f.Run.ID() != id {
		return nil, fmt.Errorf("run %s: %s holds run %q", id, s.runPath(id), f.Run.ID())
	}
	f.Run.Attach(s.contexts, s.evidence, nil)
	return f, nil
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
	store        *Store
	lock         *fsx.Lock
	id           string
	run          *laserbrain.Run
	historyBytes int64 // committed: recorded in the state file
	created      bool
	closed       bool

	// Spilled history: written to the history file ahead of the next save,
	// not yet synced or committed.
	hist    *os.File
	histBuf *bufio.Writer
	spilled int64 // file length once histBuf is flushed
	line    []byte
}

func (h *runHandle) Run() *laserbrain.Run { return h.run }
func (h *runHandle) Created() bool        { return h.created }

// Spill moves the steps taken since the last spill out of memory into the
// history file, uncommitted: the next Save syncs and commits them. A
// stream spills after every step so its memory stays flat.
func (h *runHandle) Spill() error {
	pending := h.run.UnsavedHistory()
	if len(pending) == 0 {
		return nil
	}
	if h.hist == nil {
		f, err := os.OpenFile(h.store.historyPath(h.id), os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		// Drop what an unfinished save left beyond the committed length.
		if err := f.Truncate(h.historyBytes); err != nil {
			f.Close()
			return fmt.Errorf("history %s: %w", f.Name(), err)
		}
		if _, err := f.Seek(h.historyBytes, io.SeekStart); err != nil {
			f.Close()
			return err
		}
		h.hist, h.histBuf, h.spilled = f, bufio.NewWriterSize(f, 64<<10), h.historyBytes
	}
	for i := range pending {
		h.line = append(pending[i].AppendJSON(h.line[:0]), '\n')
		if _, err := h.histBuf.Write(h.line); err != nil {
			return fmt.Errorf("history %s: %w", h.hist.Name(), err)
		}
		h.spilled += int64(len(h.line))
	}
	h.run.HistorySaved()
	h.run.ReleaseSavedHistory()
	return nil
}

// Save commits the run: the history is written and synced first, then the
// state, which records the history's committed length, replaces the old
// state atomically.
func (h *runHandle) Save(ctx context.Context) error {
	if h.closed {
		return fmt.Errorf("run %s: saved after close", h.run.ID())
	}
	if err := h.Spill(); err != nil {
		return err
	}
	n := h.historyBytes
	if h.hist != nil {
		if err := h.histBuf.Flush(); err != nil {
			return fmt.Errorf("history %s: %w", h.hist.Name(), err)
		}
		if err := h.hist.Sync(); err != nil {
			return fmt.Errorf("history %s: %w", h.hist.Name(), err)
		}
		n = h.spilled
	}
	data, err := json.Marshal(runFile{Run: h.run, HistoryBytes: n})
	if err != nil {
		return err
	}
	if err := fsx.WriteFile(h.store.runPath(h.id), append(data, '\n'), 0o644); err != nil {
		return err
	}
	h.historyBytes = n
	return nil
}

func (h *runHandle) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	if h.hist != nil {
		h.hist.Close() // unsynced spill beyond the committed length is ignored
	}
	return h.lock.Unlock()
}

// contexts is contexts.json: a snapshot read at open (and refreshed at each
// flush) plus the records made since, which flush merges into whatever the
// file holds by then.
type contexts struct {
	path    string
	mu      sync.Mutex
	view    *laserbrain.MemContexts // the file as last read or written
	pending map[string]*laserbrain.ContextDelta
	order   []string // pending ids, first recorded first
}

func (c *contexts) load() error {
	entries, err := readContexts(c.path)
	if err != nil {
		return err
	}
	c.view = laserbrain.NewMemContexts()
	c.view.Load(entries)
	c.pending = map[string]*laserbrain.ContextDelta{}
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
	d := c.pending[s.ID]
	if d == nil {
		d = &laserbrain.ContextDelta{}
		c.pending[s.ID] = d
		c.order = append(c.order, s.ID)
	}
	d.Add(s)
	return nil
}

// Context reads the snapshot with this process's pending records merged in.
func (c *contexts) Context(id string) (laserbrain.ContextEntry, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok, err := c.view.Context(id)
	if d := c.pending[id]; d != nil && err == nil {
		e.Merge(d)
		ok = true
	}
	return e, ok, err
}

func (c *contexts) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.order) == 0 {
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
	for _, id := range c.order {
		e := entries[id]
		e.Merge(c.pending[id])
		entries[id] = e
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
	clear(c.pending)
	c.order = c.order[:0]
	c.view.Load(entries)
	return nil
}

// evidence is evidence.json, re-read only when the file changes, and
// looked at no more than once per evidenceRecheck: a stream of checks
// arriving faster than that is machine-generated, and a tool call recorded
// in between is seen by the next check instead (the counters are
// monotonic, so nothing is lost).
type evidence struct {
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

func (e *evidence) Evidence() (laserbrain.Evidence, bool) {
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
	if err := fsx.WriteFile(e.path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	e.mu.Lock()
	e.checked = time.Time{} // this process's own record is seen at once
	e.mu.Unlock()
	return nil
}
