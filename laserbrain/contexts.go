package laserbrain

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// ContextEntry is what the context store knows about one task (one
// context id) across every run that spelled it. The whole-run judgment reads
// it: how often a spelling repeated, how close anyone got, how many runs
// have tried before.
type ContextEntry struct {
	ID           string         `json:"id"`
	Tokens       []string       `json:"tokens"`
	FirstSeen    Stamp          `json:"first_seen"`
	LastSeen     Stamp          `json:"last_seen"`
	Checks       int            `json:"checks"`
	BestDistance int            `json:"best_distance"`
	Outcomes     map[string]int `json:"outcomes"`
	Sessions     []string       `json:"sessions"`
	SessionCount int            `json:"session_count"`
	Spellings    map[string]int `json:"spellings"`
}

// maxSessions is how many of the most recent run ids an entry keeps.
const maxSessions = 20

// ContextStep is one check as the context store records it.
type ContextStep struct {
	ID     string
	Tokens []string
	At     time.Time
	// Distance is the step's distance; an unknown one is recorded as the
	// middle of the range, as the reference does.
	Distance Distance
	Reason   string // the underlying verdict (never oscillating)
	Run      string
	// N is the step's number in its run: with Run it names the step, so a
	// store can apply a step's context record exactly once.
	N          int
	Laserscore string // empty when the step had none
}

// Apply adds one step to the entry (creating it when e.ID is empty).
func (e *ContextEntry) Apply(s ContextStep) {
	d := s.Distance.Value
	if !s.Distance.Known {
		d = distFallback
	}
	if e.ID == "" {
		*e = ContextEntry{ID: s.ID, Tokens: slices.Clone(s.Tokens), FirstSeen: Stamp{s.At}, BestDistance: d}
	}
	e.LastSeen = Stamp{s.At}
	e.Checks++
	e.BestDistance = min(e.BestDistance, d)
	if e.Outcomes == nil {
		e.Outcomes = map[string]int{}
	}
	e.Outcomes[s.Reason]++
	e.touch(s.Run)
	if s.Laserscore != "" {
		if e.Spellings == nil {
			e.Spellings = map[string]int{}
		}
		e.Spellings[s.Laserscore]++
	}
}

// touch records a run as the most recent session (last in Sessions).
func (e *ContextEntry) touch(run string) {
	if i := slices.Index(e.Sessions, run); i >= 0 {
		e.Sessions = append(slices.Delete(e.Sessions, i, i+1), run)
		return
	}
	e.SessionCount++
	e.Sessions = append(e.Sessions, run)
	if len(e.Sessions) > maxSessions {
		e.Sessions = slices.Delete(e.Sessions, 0, len(e.Sessions)-maxSessions)
	}
}

// ContextDelta gathers many steps of one context so a store can write them
// as one update. Merging a delta gives what applying its steps one by one
// gives, except in one corner: if more than maxSessions runs touched the
// context within the delta, a run pushed out and back in again is counted
// once in SessionCount instead of twice.
type ContextDelta struct {
	ID           string         `json:"id"`
	Tokens       []string       `json:"tokens"`
	FirstAt      time.Time      `json:"first_at"`
	LastAt       time.Time      `json:"last_at"`
	Checks       int            `json:"checks"`
	BestDistance int            `json:"best_distance"`
	Outcomes     map[string]int `json:"outcomes"`
	Spellings    map[string]int `json:"spellings,omitempty"`
	Runs         []string       `json:"runs"` // distinct, in order of last occurrence
	// inRuns holds the runs in Runs, so that a run new to the delta is
	// appended without a search (made on first use: a decoded delta has
	// none).
	inRuns map[string]bool
}

// Add gathers one step.
func (d *ContextDelta) Add(s ContextStep) {
	dist := s.Distance.Value
	if !s.Distance.Known {
		dist = distFallback
	}
	if d.Checks == 0 {
		*d = ContextDelta{ID: s.ID, Tokens: s.Tokens, FirstAt: s.At, BestDistance: dist,
			Outcomes: map[string]int{}, Spellings: map[string]int{}}
	}
	d.LastAt = s.At
	d.Checks++
	d.BestDistance = min(d.BestDistance, dist)
	d.Outcomes[s.Reason]++
	if s.Laserscore != "" {
		if d.Spellings == nil { // read back without any (omitempty)
			d.Spellings = map[string]int{}
		}
		d.Spellings[s.Laserscore]++
	}
	if n := len(d.Runs); n == 0 || d.Runs[n-1] != s.Run {
		if d.inRuns == nil {
			d.inRuns = make(map[string]bool, len(d.Runs)+1)
			for _, r := range d.Runs {
				d.inRuns[r] = true
			}
		}
		if d.inRuns[s.Run] {
			if i := slices.Index(d.Runs, s.Run); i >= 0 {
				d.Runs = slices.Delete(d.Runs, i, i+1)
			}
		}
		d.inRuns[s.Run] = true
		d.Runs = append(d.Runs, s.Run)
	}
}

// Merge adds a delta to the entry (creating it when e.ID is empty).
func (e *ContextEntry) Merge(d *ContextDelta) {
	if d.Checks == 0 {
		return
	}
	if e.ID == "" {
		*e = ContextEntry{ID: d.ID, Tokens: slices.Clone(d.Tokens), FirstSeen: Stamp{d.FirstAt}, BestDistance: d.BestDistance}
	}
	e.LastSeen = Stamp{d.LastAt}
	e.Checks += d.Checks
	e.BestDistance = min(e.BestDistance, d.BestDistance)
	if e.Outcomes == nil {
		e.Outcomes = map[string]int{}
	}
	for k, n := range d.Outcomes {
		e.Outcomes[k] += n
	}
	if len(d.Spellings) > 0 && e.Spellings == nil {
		e.Spellings = map[string]int{}
	}
	for k, n := range d.Spellings {
		e.Spellings[k] += n
	}
	for _, run := range d.Runs {
		e.touch(run)
	}
}

// Clone returns a deep copy.
func (e ContextEntry) Clone() ContextEntry {
	e.Tokens = slices.Clone(e.Tokens)
	e.Outcomes = maps.Clone(e.Outcomes)
	e.Sessions = slices.Clone(e.Sessions)
	e.Spellings = maps.Clone(e.Spellings)
	return e
}

// ContextStore records every check under its context id and answers what
// is known about a context. Implementations: MemContexts (one process),
// localstore's contexts.json (one machine), later PostgreSQL.
type ContextStore interface {
	RecordStep(s ContextStep) error
	Context(id string) (ContextEntry, bool, error)
}

// MemContexts is an in-memory ContextStore, safe for concurrent use. A
// fresh one isolates a run from every other (the vectors use one per
// sequence).
type MemContexts struct {
	mu      sync.Mutex
	entries map[string]*ContextEntry
}

// NewMemContexts returns an empty store.
func NewMemContexts() *MemContexts { return &MemContexts{entries: map[string]*ContextEntry{}} }

// RecordStep implements ContextStore.
func (m *MemContexts) RecordStep(s ContextStep) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entryLocked(s.ID).Apply(s)
	return nil
}

// entryLocked is id's entry, made empty when there is none; m.mu is held.
func (m *MemContexts) entryLocked(id string) *ContextEntry {
	e := m.entries[id]
	if e == nil {
		e = &ContextEntry{}
		m.entries[id] = e
	}
	return e
}

// Context implements ContextStore.
func (m *MemContexts) Context(id string) (ContextEntry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[id]
	if e == nil {
		return ContextEntry{}, false, nil
	}
	return e.Clone(), true, nil
}

// Entries returns a copy of every entry, keyed by id.
func (m *MemContexts) Entries() map[string]ContextEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]ContextEntry, len(m.entries))
	for id, e := range m.entries {
		out[id] = e.Clone()
	}
	return out
}

// Load replaces the store's content with entries.
func (m *MemContexts) Load(entries map[string]ContextEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = make(map[string]*ContextEntry, len(entries))
	for id, e := range entries {
		c := e.Clone()
		m.entries[id] = &c
	}
}

// Merge adds a delta to the entry with id d.ID (creating it).
func (m *MemContexts) Merge(d *ContextDelta) {
	if d.Checks == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entryLocked(d.ID).Merge(d)
}

// Combine adds another store's entry for the same context to e, as when a
// home is copied into a shared store: counts add up, the best distance and
// the first sighting are the earlier, the last sighting the later, and the
// recent runs are the union, the more recently seen entry's last.
func (e *ContextEntry) Combine(o ContextEntry) {
	if o.ID == "" {
		return
	}
	if e.ID == "" {
		*e = o.Clone()
		return
	}
	if o.FirstSeen.Before(e.FirstSeen.Time) {
		e.FirstSeen = o.FirstSeen
	}
	first, last := o.Sessions, e.Sessions
	if o.LastSeen.After(e.LastSeen.Time) {
		e.LastSeen = o.LastSeen
		first, last = e.Sessions, o.Sessions
	}
	e.Checks += o.Checks
	e.BestDistance = min(e.BestDistance, o.BestDistance)
	for k, n := range o.Outcomes {
		if e.Outcomes == nil {
			e.Outcomes = map[string]int{}
		}
		e.Outcomes[k] += n
	}
	for k, n := range o.Spellings {
		if e.Spellings == nil {
			e.Spellings = map[string]int{}
		}
		e.Spellings[k] += n
	}
	shared := 0
	for _, s := range o.Sessions {
		if slices.Contains(e.Sessions, s) {
			shared++
		}
	}
	e.SessionCount += o.SessionCount - shared
	var runs []string
	for _, s := range first {
		if !slices.Contains(last, s) {
			runs = append(runs, s)
		}
	}
	runs = append(runs, last...)
	if len(runs) > maxSessions {
		runs = runs[len(runs)-maxSessions:]
	}
	e.Sessions = slices.Clone(runs)
}
