package localstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/jsonl"
	"github.com/laserkit/laserkit/laserbrain"
)

// contexts.json is the Python reference's file, and stays its format: a
// Python process reads and writes it too, under the reference's marker
// lock. Rewriting it whole for every flush made a check cost more the more
// contexts the machine knew, so a flush appends its records to
// contexts.log instead (one line, one write, synced, the log's lock held
// exclusively: internal/jsonl's appender cuts off a line a crash left
// unfinished), and compaction
// merges the log into contexts.json now and then: at a flush when the log
// passes ContextsCompactAt or holds a record older than ContextsCompactAge,
// and at the close of a store unless contexts.json was written less than
// a second ago. A one-off check therefore lands in contexts.json as before,
// while a burst of processes rewrites it once a second at most and a
// stream not until it ends (or the log is due). Readers here see
// contexts.json plus the log.
//
// Compaction applies each record exactly once, crash or not:
//
//  1. rename contexts.log → contexts.log.applying (new appends start a new log)
//  2. write contexts.json.next = contexts.json + applying, synced
//  3. create contexts.log.applying.ready                  (next is whole)
//  4. rename contexts.json.next → contexts.json           (the commit)
//  5. remove applying and ready
//
// After a crash, applying with next present (or without ready) was not
// committed: next is dropped and the merge redone on the contexts.json of
// the moment, which a Python process may have changed meanwhile. Applying
// with ready and without next was committed: only step 5 is left.

// ContextsCompactAt and ContextsCompactAge say when a flush merges
// contexts.log into contexts.json.
var (
	ContextsCompactAt  int64 = 64 << 10
	ContextsCompactAge       = 10 * time.Second
	// contextsCloseAge is how long after contexts.json was last written a
	// closing store compacts again.
	contextsCloseAge = time.Second
)

type contexts struct {
	jsonPath, logPath string
	lock              *flock.Flock // contexts.log.lock: shared to read, exclusive to append or compact

	mu        sync.Mutex
	view      *laserbrain.MemContexts // contexts.json + log, as last read
	jsonStamp fileStamp
	logIno    uint64
	logOff    int64 // how much of the log is in view
	loaded    bool
	pending   map[string]*laserbrain.ContextDelta
	order     []string // pending ids, first recorded first
}

func newContexts(dir string) *contexts {
	return &contexts{
		jsonPath: filepath.Join(dir, "contexts.json"),
		logPath:  filepath.Join(dir, "contexts.log"),
		lock:     flock.New(filepath.Join(dir, "contexts.log.lock")),
		view:     laserbrain.NewMemContexts(),
		pending:  map[string]*laserbrain.ContextDelta{},
	}
}

func (c *contexts) applyingPath() string { return c.logPath + ".applying" }
func (c *contexts) readyPath() string    { return c.logPath + ".applying.ready" }
func (c *contexts) nextPath() string     { return c.jsonPath + ".next" }

// withLock holds the contexts lock; c.mu is held by the caller.
func (c *contexts) withLock(exclusive bool, f func() error) error {
	return holdLock(c.lock, exclusive, f)
}

// load reads contexts.json and the log, finishing a compaction a crash
// interrupted first.
func (c *contexts) load() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := os.Stat(c.applyingPath()); err == nil {
		if err := c.withLock(true, c.recover); err != nil {
			return err
		}
	}
	return c.withLock(false, c.refresh)
}

// refresh brings the view up to date: everything again when contexts.json
// changed or the log was compacted, else the log's new lines.
func (c *contexts) refresh() error {
	jfi, jerr := os.Stat(c.jsonPath)
	if jerr != nil && !errors.Is(jerr, fs.ErrNotExist) {
		return jerr
	}
	var js fileStamp
	if jfi != nil {
		js = stampOf(jfi)
	}
	lfi, lerr := os.Stat(c.logPath)
	if lerr != nil && !errors.Is(lerr, fs.ErrNotExist) {
		return lerr
	}
	var lino uint64
	var lsize int64
	if lfi != nil {
		lino, lsize = inode(lfi), lfi.Size()
	}
	if !c.loaded || js != c.jsonStamp || lino != c.logIno || lsize < c.logOff {
		entries, err := readContexts(c.jsonPath)
		if err != nil {
			return err
		}
		c.view.Load(entries)
		c.jsonStamp, c.logIno, c.logOff, c.loaded = js, lino, 0, true
	}
	if lsize == c.logOff {
		return nil
	}
	recs, n, err := readContextLog(c.logPath, c.logOff)
	if err != nil {
		return err
	}
	for _, r := range recs {
		for i := range r.Ctx {
			c.view.Merge(&r.Ctx[i])
		}
	}
	c.logOff += n
	return nil
}

// contextRecord is one flush's line in contexts.log.
type contextRecord struct {
	At  time.Time                 `json:"at"`
	Ctx []laserbrain.ContextDelta `json:"ctx"`
}

// readContextLog reads the log's records from off on, through the one
// JSON-lines reader; n is how many bytes they took. A torn last line is
// not read (its writer may still be at it; the next writer cuts it off), a
// damaged line is an error naming it.
func readContextLog(path string, off int64) (recs []contextRecord, n int64, err error) {
	end, err := jsonl.Decode(path, jsonl.Pos{Off: off}, func(r contextRecord, _ int) error {
		recs = append(recs, r)
		return nil
	})
	return recs, end.Off - off, err
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

// RecordStep implements laserbrain.ContextStore: the record waits in
// memory for the next flush.
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

// Context implements laserbrain.ContextStore: the view with this process's
// pending records merged in.
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

// flush appends the pending records to the log as one synced line, then
// compacts when the log is due (see above for when).
func (c *contexts) flush(closing bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.order) > 0 {
		rec := contextRecord{At: time.Now().UTC()}
		for _, id := range c.order {
			rec.Ctx = append(rec.Ctx, *c.pending[id])
		}
		line, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		line = append(line, '\n')
		// One writer at a time: the append cuts off a line a crashed
		// writer left unfinished (jsonl.Append).
		if err := c.withLock(true, func() error {
			if _, err := jsonl.Append(c.logPath, line, 0o644); err != nil {
				return err
			}
			return c.refresh()
		}); err != nil {
			return err
		}
		clear(c.pending)
		c.order = c.order[:0]
	}
	if !c.due(closing) {
		return nil
	}
	return c.withLock(true, func() error {
		if err := c.recover(); err != nil {
			return err
		}
		if !c.due(closing) { // another process compacted meanwhile
			return c.refresh()
		}
		if err := c.compact(); err != nil {
			return err
		}
		return c.refresh()
	})
}

// due reports whether the log should be compacted now.
func (c *contexts) due(closing bool) bool {
	fi, err := os.Stat(c.logPath)
	if err != nil || fi.Size() == 0 {
		return false
	}
	if fi.Size() >= ContextsCompactAt {
		return true
	}
	if closing {
		jfi, err := os.Stat(c.jsonPath)
		return err != nil || time.Since(jfi.ModTime()) >= contextsCloseAge
	}
	var first time.Time
	stop := errors.New("found")
	_, _ = jsonl.Scan(c.logPath, jsonl.Start, func(line []byte, _ int) error {
		var r struct {
			At time.Time `json:"at"`
		}
		if json.Unmarshal(line, &r) == nil && !r.At.IsZero() {
			first = r.At
			return stop
		}
		return nil
	})
	return !first.IsZero() && time.Since(first) >= ContextsCompactAge
}

// compact merges the log into contexts.json (steps 1-5 above). The caller
// holds the lock exclusively.
func (c *contexts) compact() error {
	if err := os.Rename(c.logPath, c.applyingPath()); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := syncDir(filepath.Dir(c.logPath)); err != nil {
		return err
	}
	return c.apply()
}

// recover finishes or redoes a compaction a crash interrupted. The caller
// holds the lock exclusively.
func (c *contexts) recover() error {
	if _, err := os.Stat(c.applyingPath()); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_, nextErr := os.Stat(c.nextPath())
	_, readyErr := os.Stat(c.readyPath())
	if nextErr == nil || readyErr != nil {
		if err := os.Remove(c.nextPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return c.apply()
	}
	return c.finish()
}

// apply is steps 2-5 for contexts.log.applying.
func (c *contexts) apply() error {
	recs, _, err := readContextLog(c.applyingPath(), 0)
	if err != nil {
		return err
	}
	if err := c.rewrite(func(entries map[string]laserbrain.ContextEntry) {
		for _, r := range recs {
			for i := range r.Ctx {
				e := entries[r.Ctx[i].ID]
				e.Merge(&r.Ctx[i])
				entries[r.Ctx[i].ID] = e
			}
		}
	}, true); err != nil {
		return err
	}
	return c.finish()
}

// rewrite changes contexts.json under the reference's marker. With staged,
// the new file is written to contexts.json.next and marked ready before
// it replaces contexts.json (compaction's steps 2-4); otherwise it is
// replaced atomically in one step.
func (c *contexts) rewrite(change func(map[string]laserbrain.ContextEntry), staged bool) error {
	unlock, err := lockShared(c.jsonPath)
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := readContexts(c.jsonPath)
	if err != nil {
		return err
	}
	change(entries)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(entries); err != nil {
		return err
	}
	if !staged {
		return fsx.WriteFile(c.jsonPath, buf.Bytes(), 0o644)
	}
	if err := fsx.WriteFile(c.nextPath(), buf.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(c.readyPath(), nil, 0o644); err != nil {
		return err
	}
	dir := filepath.Dir(c.jsonPath)
	if err := syncDir(dir); err != nil {
		return err
	}
	if err := os.Rename(c.nextPath(), c.jsonPath); err != nil {
		return err
	}
	return syncDir(dir)
}

// finish is step 5.
func (c *contexts) finish() error {
	for _, p := range []string{c.applyingPath(), c.readyPath()} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return syncDir(filepath.Dir(c.logPath))
}

// entries is the whole store: contexts.json, the log and pending records.
func (c *contexts) entries() (map[string]laserbrain.ContextEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.withLock(false, c.refresh); err != nil {
		return nil, err
	}
	out := c.view.Entries()
	for _, id := range c.order {
		e := out[id]
		e.Merge(c.pending[id])
		out[id] = e
	}
	return out, nil
}

// importEntries combines another store's entries into contexts.json, once
// per source (the sources are listed in contexts.imports beside it).
func (c *contexts) importEntries(source string, in map[string]laserbrain.ContextEntry) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	listPath := c.jsonPath[:len(c.jsonPath)-len(".json")] + ".imports"
	imported := false
	err := c.withLock(true, func() error {
		if err := c.recover(); err != nil {
			return err
		}
		var sources []string
		if data, err := os.ReadFile(listPath); err == nil {
			if err := json.Unmarshal(data, &sources); err != nil {
				return fmt.Errorf("%s: %w", listPath, err)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if slices.Contains(sources, source) {
			return nil
		}
		if err := c.rewrite(func(entries map[string]laserbrain.ContextEntry) {
			for id, e := range in {
				cur := entries[id]
				cur.Combine(e)
				entries[id] = cur
			}
		}, false); err != nil {
			return err
		}
		data, err := json.Marshal(append(sources, source))
		if err != nil {
			return err
		}
		if err := fsx.WriteFile(listPath, data, 0o644); err != nil {
			return err
		}
		imported = true
		return c.refresh()
	})
	return imported, err
}
