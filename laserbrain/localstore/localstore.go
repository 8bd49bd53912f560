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
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/laserkit/laserkit/internal/envconfig"
	"github.com/laserkit/laserkit/internal/jsonl"
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
	h, err := envconfig.Home()
	if err != nil {
		return Paths{}, err
	}
	if h != "" {
		return Paths{Home: h, Config: filepath.Join(h, "config")}, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return Paths{}, fmt.Errorf("no place for the laserbrain store (set LASERBRAIN_HOME): %w", err)
	}
	d := filepath.Join(dir, "laserbrain")
	return Paths{Home: d, Config: d}, nil
}

// InHome is elem's path in the laserbrain home (DefaultPaths's Home), where
// the fleet, the undo store, the loop, the hook queue and the rest keep
// their files.
func InHome(elem ...string) (string, error) {
	p, err := DefaultPaths()
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{p.Home}, elem...)...), nil
}

// LockTimeout is how long a process waits for a run or a shared file that
// another process holds.
var LockTimeout = 10 * time.Second

// SpillSteps is how many steps a held run keeps in memory before Spill
// saves them.
var SpillSteps = 1024

// Store is the directory store. Context records are buffered in memory and
// written by Flush (the CLI flushes after each check, and every second
// while streaming).
type Store struct {
	paths   Paths
	runsDir string
	log     *runLog
	packs   *packSet
	// onFile lists the runs with files of their own, read while a
	// compaction runs (onFileGen duringCompaction) or once a process has
	// looked for listAfterMisses runs' files in vain in one generation of
	// the log (onFileGen that generation), so that it need not look for
	// each by name. Only a compaction makes such files, and every
	// compaction that finishes replaces the log: the list holds until the
	// log's generation moves on. (A compaction cut short may have made some
	// in the meantime; the runs it made them for read the same without
	// them, from their packs and the log it left whole.)
	onFile         map[string]bool
	onFileGen      int
	misses, missAt int
	contexts       *contexts
	evidence       *Evidence
	closed         sync.Once
}

var (
	_ laserbrain.Store    = (*Store)(nil)
	_ laserbrain.Exporter = (*Store)(nil)
	_ laserbrain.Importer = (*Store)(nil)
)

// Open opens (and creates) the store at paths.
func Open(paths Paths) (*Store, error) {
	runs := filepath.Join(paths.Home, "runs")
	for _, d := range []string{runs, paths.Config} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	log, err := openRunLog(runs)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &Store{paths: paths, runsDir: runs, log: log, packs: &packSet{dir: filepath.Join(runs, "packs")}, contexts: newContexts(paths.Config), evidence: OpenEvidence(paths.Config)}
	if err := s.contexts.load(); err != nil {
		_ = log.close() // nothing was written through it
		return nil, err
	}
	return s, nil
}

// Paths returns where the store lives.
func (s *Store) Paths() Paths { return s.paths }

func (s *Store) runPath(id string) string { return filepath.Join(s.runsDir, id+".json") }

func (s *Store) historyPath(id string) string {
	return filepath.Join(s.runsDir, id+".history.jsonl")
}

// runFile is what <id>.json holds (a compacted run, or one an earlier
// version saved).
type runFile struct {
	Run json.RawMessage `json:"run"`
	// HistoryBytes is how much of the history file is committed; bytes
	// beyond it were written by a save that did not finish.
	HistoryBytes int64 `json:"history_bytes"`
}

// stored is a run as the store holds it: its own files or its record in
// a pack, then the chain of its saves in the log (read when needed, not
// held).
type stored struct {
	state        []byte
	count        int // steps committed
	onFile       bool
	fileCount    int
	historyBytes int64
	packed       *packRun // when not on file: its record in the newest pack holding it
	saves        []span   // the saves in the log that apply, after the file's or the pack's
}

// size is how many bytes the run's steps and state come to.
func (st *stored) size() int64 {
	n := st.historyBytes + int64(len(st.state))
	if st.packed != nil {
		n += st.packed.sp.steps
	}
	for _, sp := range st.saves {
		n += sp.steps
	}
	return n
}

// fromLog reports whether a save in the log applies.
func (st *stored) fromLog() bool { return len(st.saves) > 0 }

// stepCount reads a state's step_count.
func stepCount(state []byte) (int, error) {
	var c struct {
		ID        string `json:"id"`
		StepCount int    `json:"step_count"`
	}
	if err := json.Unmarshal(state, &c); err != nil {
		return 0, err
	}
	return c.StepCount, nil
}

// lookup reads run id; nil when there is none. The caller holds the log's
// lock.
func (s *Store) lookup(id string) (*stored, error) {
	st, err := s.locate(id)
	if err != nil || st == nil || !st.fromLog() {
		return st, err
	}
	if st.state, err = s.log.state(st.saves[len(st.saves)-1]); err != nil {
		return nil, err
	}
	return st, nil
}

// locate is lookup without reading the state of the run's last save in the
// log (st.state is nil when st.fromLog()): a compaction reads it with the
// steps.
func (s *Store) locate(id string) (*stored, error) {
	st := &stored{}
	data, err := s.readOnFile(id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		var f runFile
		if err := json.Unmarshal(data, &f); err != nil || len(f.Run) == 0 || bytes.Equal(f.Run, []byte("null")) {
			return nil, fmt.Errorf("run %s: %s is not a saved run: %v", id, s.runPath(id), err)
		}
		n, err := stepCount(f.Run)
		if err != nil {
			return nil, fmt.Errorf("run %s: %s is not a saved run: %v", id, s.runPath(id), err)
		}
		st.state, st.count, st.onFile, st.fileCount, st.historyBytes = f.Run, n, true, n, f.HistoryBytes
	}
	if !st.onFile {
		if err := s.packs.current(s.log.generation); err != nil {
			return nil, err
		}
		pr, err := s.packs.find(id)
		if err != nil {
			return nil, err
		}
		if pr != nil {
			st.state, st.count, st.packed = pr.state, pr.sp.n, pr
		}
	}
	saves, count, err := s.log.chain(id, st.count)
	if err != nil {
		return nil, err
	}
	if len(saves) > 0 {
		st.state, st.count, st.saves = nil, count, saves
	}
	if !st.onFile && st.packed == nil && !st.fromLog() {
		return nil, nil
	}
	return st, nil
}

const (
	listAfterMisses  = 64
	duringCompaction = -2
)

// readOnFile reads run id's state file; the caller holds the log's lock.
func (s *Store) readOnFile(id string) ([]byte, error) {
	gen := s.log.generation
	if s.onFile != nil && (s.onFileGen == duringCompaction || s.onFileGen == gen) {
		if !s.onFile[id] {
			return nil, fs.ErrNotExist
		}
		return os.ReadFile(s.runPath(id))
	}
	if s.missAt != gen {
		s.misses, s.missAt = 0, gen
	}
	if s.misses >= listAfterMisses {
		m, err := listOnFile(s.runsDir)
		if err != nil {
			return nil, err
		}
		s.onFile, s.onFileGen = m, gen
		return s.readOnFile(id)
	}
	data, err := os.ReadFile(s.runPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		s.misses++
	}
	return data, err
}

func (s *Store) decode(id string, state []byte) (*laserbrain.Run, error) {
	return laserbrain.DecodeRun(id, state, s.contexts, s.evidence)
}

// OpenRun implements laserbrain.Store.
func (s *Store) OpenRun(ctx context.Context, id string) (laserbrain.RunHandle, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, err
	}
	lock, err := lockRun(s.runsDir, id, LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("run %s is in use: %w", id, err)
	}
	var st *stored
	if err := s.log.withLock(false, func() (err error) { st, err = s.lookup(id); return err }); err != nil {
		lock.Unlock()
		return nil, err
	}
	h := &runHandle{store: s, lock: lock, id: id}
	if st == nil {
		h.run = laserbrain.NewRun(laserbrain.RunOptions{ID: id, Contexts: s.contexts, Evidence: s.evidence})
		h.created = true
		return h, nil
	}
	if h.run, err = s.decode(id, st.state); err != nil {
		lock.Unlock()
		return nil, err
	}
	h.count = st.count
	return h, nil
}

// ReadRun implements laserbrain.Store; the run comes with its history.
func (s *Store) ReadRun(ctx context.Context, id string) (*laserbrain.Run, error) {
	return s.readRun(id, true)
}

// ReadRunState implements laserbrain.StateReader.
func (s *Store) ReadRunState(ctx context.Context, id string) (*laserbrain.Run, error) {
	return s.readRun(id, false)
}

// readRun loads saved run id, with its history or without.
func (s *Store) readRun(id string, history bool) (*laserbrain.Run, error) {
	if err := laserbrain.ValidateRunID(id); err != nil {
		return nil, err
	}
	var (
		st   *stored
		hist []laserbrain.StepRecord
	)
	err := s.log.withLock(false, func() (err error) {
		if st, err = s.lookup(id); err != nil || st == nil || !history {
			return err
		}
		hist, err = s.readHistory(id, st)
		return err
	})
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("run %s: %w (in %s)", id, laserbrain.ErrNoRun, s.runsDir)
	}
	r, err := s.decode(id, st.state)
	if err != nil {
		return nil, err
	}
	if history {
		r.LoadHistory(hist)
	}
	return r, nil
}

// readHistory reads the committed part of the run's history file, then
// its steps from the log, a line at a time.
func (s *Store) readHistory(id string, st *stored) ([]laserbrain.StepRecord, error) {
	out := make([]laserbrain.StepRecord, 0, st.count)
	steps := laserbrain.StepReader{Strings: &jsonl.Interner{}}
	decode := func(where string, base int) func([]byte, int) error {
		return func(line []byte, n int) error {
			rec, err := steps.Parse(line)
			if err != nil {
				return fmt.Errorf("run %s: %s step %d: %w", id, where, base+n, err)
			}
			out = append(out, rec)
			return nil
		}
	}
	if st.historyBytes > 0 {
		fh, err := os.Open(s.historyPath(id))
		if err != nil {
			return nil, fmt.Errorf("run %s: history: %w", id, err)
		}
		end, err := jsonl.ScanFile(fh, jsonl.Start, st.historyBytes, decode(s.historyPath(id)+":", 0))
		fh.Close()
		if err == nil && end.Off != st.historyBytes {
			err = fmt.Errorf("run %s: history is shorter than its state says (%d of %d bytes)", id, end.Off, st.historyBytes)
		}
		if err != nil {
			return nil, err
		}
	}
	if pr := st.packed; pr != nil && pr.sp.steps > 0 {
		if _, err := jsonl.ScanFile(pr.p.f, jsonl.Pos{Off: pr.sp.body, Line: 1}, pr.sp.body+pr.sp.steps, decode(pr.p.path+":", 0)); err != nil {
			return nil, err
		}
	}
	if err := s.log.eachStep(st.saves, decode("the log:", len(out))); err != nil {
		return nil, err
	}
	return out, nil
}

// Contexts implements laserbrain.Store.
func (s *Store) Contexts() laserbrain.ContextStore { return s.contexts }

// Evidence implements laserbrain.Store.
func (s *Store) Evidence() laserbrain.EvidenceSource { return s.evidence }

// Flush implements laserbrain.Store: every save so far becomes durable
// (one sync of the run log), the buffered context records are appended to
// contexts.log, and either log is compacted when it is due.
func (s *Store) Flush(ctx context.Context) error { return s.flush(false) }

func (s *Store) flush(closing bool) error {
	// The two logs are synced at once: the file system commits both in
	// one journal transaction, so a check waits for one sync, not two.
	logErr := make(chan error, 1)
	go func() { logErr <- s.log.sync() }()
	ctxErr := s.contexts.flush(closing)
	if err := errors.Join(<-logErr, ctxErr); err != nil {
		return err
	}
	if s.log.size() >= CompactAt {
		return s.Compact()
	}
	return nil
}

// Close implements laserbrain.Store.
func (s *Store) Close() error {
	var err error
	s.closed.Do(func() {
		err = s.flush(true)
		if cerr := s.log.close(); err == nil {
			err = cerr
		}
		s.log.mu.Lock()
		s.packs.close()
		s.log.mu.Unlock()
	})
	return err
}

// RecordToolEvent implements laserbrain.Store.
func (s *Store) RecordToolEvent(ctx context.Context, ev laserbrain.Event) error {
	return s.evidence.record(ev)
}

// RunIDs implements laserbrain.Exporter.
func (s *Store) RunIDs(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.log.withLock(false, func() error {
		names, err := filepath.Glob(filepath.Join(s.runsDir, "*.json"))
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, n := range names {
			id := strings.TrimSuffix(filepath.Base(n), ".json")
			if laserbrain.ValidateRunID(id) == nil {
				seen[id] = true
			}
		}
		if err := s.packs.current(s.log.generation); err != nil {
			return err
		}
		s.packs.eachID(func(id string, _ *pack) { seen[id] = true })
		logIDs, err := s.log.ids()
		if err != nil {
			return err
		}
		for _, id := range logIDs {
			if !seen[id] {
				if st, err := s.lookup(id); err != nil {
					return err
				} else if st != nil {
					seen[id] = true
				}
			}
		}
		for id := range seen {
			ids = append(ids, id)
		}
		return nil
	})
	sort.Strings(ids)
	return ids, err
}

// RecentRunIDs lists the saved runs, the most recently saved first: those
// in the run log by their last save, then those on file by the time their
// state was written (shell completion offers them in this order).
func (s *Store) RecentRunIDs(ctx context.Context) ([]string, error) {
	type run struct {
		id  string
		key int64
	}
	var inLog, onFile []run
	err := s.log.withLock(false, func() error {
		if err := s.log.index(); err != nil {
			return err
		}
		for id, sps := range s.log.spans {
			inLog = append(inLog, run{id, sps[len(sps)-1].body})
		}
		names, err := filepath.Glob(filepath.Join(s.runsDir, "*.json"))
		if err != nil {
			return err
		}
		listed := map[string]bool{}
		for _, n := range names {
			id := strings.TrimSuffix(filepath.Base(n), ".json")
			if _, logged := s.log.spans[id]; logged || laserbrain.ValidateRunID(id) != nil {
				continue
			}
			if fi, err := os.Stat(n); err == nil {
				onFile = append(onFile, run{id, fi.ModTime().UnixNano()})
				listed[id] = true
			}
		}
		// A run in a pack was last saved when its pack was written.
		if err := s.packs.current(s.log.generation); err != nil {
			return err
		}
		mod := map[*pack]int64{}
		for _, p := range s.packs.packs {
			fi, err := p.f.Stat()
			if err != nil {
				return err
			}
			mod[p] = fi.ModTime().UnixNano()
		}
		s.packs.eachID(func(id string, p *pack) {
			if _, logged := s.log.spans[id]; !logged && !listed[id] {
				onFile = append(onFile, run{id, mod[p]})
			}
		})
		return nil
	})
	newest := func(rs []run) {
		sort.Slice(rs, func(i, j int) bool { return rs[i].key > rs[j].key })
	}
	newest(inLog)
	newest(onFile)
	var ids []string
	for _, r := range append(inLog, onFile...) {
		ids = append(ids, r.id)
	}
	return ids, err
}

// ContextEntries implements laserbrain.Exporter.
func (s *Store) ContextEntries(ctx context.Context) (map[string]laserbrain.ContextEntry, error) {
	return s.contexts.entries()
}

// ImportRun implements laserbrain.Importer: the run is saved as one
// record in the log.
func (s *Store) ImportRun(ctx context.Context, r *laserbrain.Run) error {
	id := r.ID()
	if err := laserbrain.ValidateRunID(id); err != nil {
		return err
	}
	lock, err := lockRun(s.runsDir, id, LockTimeout)
	if err != nil {
		return fmt.Errorf("run %s is in use: %w", id, err)
	}
	defer lock.Unlock()
	state, err := json.Marshal(r)
	if err != nil {
		return err
	}
	steps := r.Steps()
	if n, err := stepCount(state); err != nil || n != len(steps) {
		return fmt.Errorf("run %s: %d steps in its history, %d in its state: import it with its whole history", id, len(steps), n)
	}
	var lines []byte
	for i := range steps {
		lines = append(steps[i].AppendJSON(lines), '\n')
	}
	return s.log.withLock(false, func() error {
		st, err := s.lookup(id)
		if err != nil {
			return err
		}
		if st != nil {
			return fmt.Errorf("run %s: %w", id, laserbrain.ErrRunExists)
		}
		return s.log.appendRecord(encodeRecord(nil, id, 0, len(steps), lines, state))
	})
}

// ImportContexts implements laserbrain.Importer.
func (s *Store) ImportContexts(ctx context.Context, source string, entries map[string]laserbrain.ContextEntry) (bool, error) {
	return s.contexts.importEntries(source, entries)
}

type runHandle struct {
	store   *Store
	lock    *runLock
	id      string
	run     *laserbrain.Run
	count   int // steps saved
	created bool
	closed  bool
}

// saveBufs are the buffers Save encodes a run's new steps into. The log's
// pending saves take a copy, so one buffer serves every handle in turn: a
// handle held for one batch of checks would otherwise grow its own from
// nothing, each batch.
var saveBufs = sync.Pool{New: func() any { return new([]byte) }}

// saveRoom bounds the room Save makes at once for a batch's steps.
const saveRoom = 4 << 20

func (h *runHandle) Run() *laserbrain.Run { return h.run }
func (h *runHandle) Created() bool        { return h.created }

// Spill saves the run once it holds SpillSteps unsaved steps, so a long
// stream's memory stays flat. The stream calls it after every step.
func (h *runHandle) Spill() error {
	if len(h.run.UnsavedHistory()) < SpillSteps {
		return nil
	}
	return h.Save(context.Background())
}

// Save adds the run's new steps and its state to the run log, as one
// record. This process's saves are appended together — at the store's next
// Flush (which makes them durable), when this process next reads the log,
// when a run is let go, or once they come to pendingMax — and every process
// sees them from then on.
func (h *runHandle) Save(ctx context.Context) error {
	if h.closed {
		return fmt.Errorf("run %s: saved after close", h.run.ID())
	}
	// The run's own encoding is compact already: json.Marshal would
	// only scan it again.
	state, err := h.run.MarshalJSON()
	if err != nil {
		return err
	}
	steps := h.run.UnsavedHistory()
	bp := saveBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	for i := range steps {
		buf = append(steps[i].AppendJSON(buf), '\n')
		if i == 0 {
			// Room for the rest at about the first line's size (up to
			// saveRoom: a long first line says little of the rest): a
			// batch's steps are encoded without growing the buffer
			// step by step.
			buf = slices.Grow(buf, min(len(buf)*(len(steps)-1)*5/4, saveRoom))
		}
	}
	err = h.store.log.addPending(h.id, h.count, h.count+len(steps), buf, state)
	*bp = buf
	saveBufs.Put(bp)
	if err != nil {
		return fmt.Errorf("run %s: %w", h.id, err)
	}
	h.count += len(steps)
	h.run.HistorySaved()
	h.run.ReleaseSavedHistory()
	return nil
}

// Close lets the run go, its saves appended first: whoever takes it next
// must find them in the log.
func (h *runHandle) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	var err error
	if h.store.log.hasPending() {
		err = h.store.log.withLock(false, func() error { return nil })
	}
	return errors.Join(err, h.lock.Unlock())
}
