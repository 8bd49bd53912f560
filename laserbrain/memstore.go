package laserbrain

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// MemStore is a Store that lives in one process: runs survive between
// OpenRun calls but not the process. It suits embedding and tests; the CLI
// uses the directory store.
type MemStore struct {
	mu       sync.Mutex
	runs     map[string][]byte // saved state, as a persistent store would hold it
	history  map[string][]StepRecord
	held     map[string]bool
	contexts *MemContexts
	evidence memEvidence
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{runs: map[string][]byte{}, history: map[string][]StepRecord{}, held: map[string]bool{}, contexts: NewMemContexts()}
}

// OpenRun implements Store. A run already held is an error rather than a
// wait: within one process that is a bug in the caller.
func (m *MemStore) OpenRun(ctx context.Context, id string) (RunHandle, error) {
	if err := ValidateRunID(id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held[id] {
		return nil, fmt.Errorf("run %s is already open", id)
	}
	h := &memHandle{store: m, id: id}
	if data, ok := m.runs[id]; ok {
		r, err := m.decode(id, data)
		if err != nil {
			return nil, err
		}
		h.run = r
	} else {
		h.run = NewRun(RunOptions{ID: id, Contexts: m.contexts, Evidence: &m.evidence})
		h.created = true
	}
	m.held[id] = true
	return h, nil
}

func (m *MemStore) decode(id string, data []byte) (*Run, error) {
	return DecodeRun(id, data, m.contexts, &m.evidence)
}

// ReadRun implements Store.
func (m *MemStore) ReadRun(ctx context.Context, id string) (*Run, error) {
	m.mu.Lock()
	data, ok := m.runs[id]
	hist := slices.Clone(m.history[id])
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("run %s: %w", id, ErrNoRun)
	}
	r, err := m.decode(id, data)
	if err != nil {
		return nil, err
	}
	r.LoadHistory(hist)
	return r, nil
}

// Contexts implements Store.
func (m *MemStore) Contexts() ContextStore { return m.contexts }

// Evidence implements Store.
func (m *MemStore) Evidence() EvidenceSource { return &m.evidence }

// RecordToolEvent implements Store.
func (m *MemStore) RecordToolEvent(ctx context.Context, ev Event) error {
	m.evidence.record(ev)
	return nil
}

// Flush implements Store; there is nothing buffered.
func (m *MemStore) Flush(ctx context.Context) error { return nil }

// Close implements Store.
func (m *MemStore) Close() error { return nil }

type memHandle struct {
	store   *MemStore
	id      string
	run     *Run
	created bool
	closed  bool
}

func (h *memHandle) Run() *Run     { return h.run }
func (h *memHandle) Created() bool { return h.created }

func (h *memHandle) Save(ctx context.Context) error {
	if h.closed {
		return fmt.Errorf("run %s: saved after close", h.id)
	}
	data, err := json.Marshal(h.run)
	if err != nil {
		return err
	}
	h.store.mu.Lock()
	h.store.runs[h.id] = data
	h.store.history[h.id] = append(h.store.history[h.id], h.run.UnsavedHistory()...)
	h.store.mu.Unlock()
	h.run.HistorySaved()
	return nil
}

func (h *memHandle) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	h.store.mu.Lock()
	delete(h.store.held, h.id)
	h.store.mu.Unlock()
	return nil
}

type memEvidence struct {
	mu  sync.Mutex
	ev  Evidence
	any bool
}

func (e *memEvidence) Evidence() (Evidence, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ev := e.ev
	ev.Window = slices.Clone(ev.Window)
	return ev, e.any
}

func nowUTC() time.Time { return time.Now().UTC() }

func (e *memEvidence) record(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev.Record(ev, nowUTC())
	e.any = true
}
