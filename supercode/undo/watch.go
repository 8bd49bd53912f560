package undo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch follows a work tree through the kernel's file notifications for a
// process that checkpoints it many times (laserbrain run, whose process
// answers its agent's hooks), so that a checkpoint is handed the paths
// that changed since the last one instead of comparing the whole tree:
// only those are read and hashed, and only the trees above them written.
// Whatever the notifications cannot vouch for sends the checkpoint the
// whole way (git add of the tree): the queue overflowed, a directory
// appeared, went away or moved, a watch could not be added, an ignore
// rule changed, a path is new (git decides whether it is ignored), or the
// last checkpoint is not the one this watch knows.
type Watch struct {
	store *Store
	repo  Repo
	key   string
	dir   string // where the barrier files are made (a temporary directory)

	mu      sync.Mutex
	fw      *fsnotify.Watcher
	dirs    map[string]bool // watched directories, relative ("" the top)
	dirty   map[string]bool
	doubt   string // why the next checkpoint goes the whole way ("" none)
	stale   bool   // the watches no longer match the directories: rebuild
	linked  map[string]bool
	seen    uint64
	seenCh  chan struct{}
	barrier uint64
	// barrierAt is the barrier file's name now ("" before the first).
	barrierAt string
	model     *treeModel
	loading   *modelLoad
	rules     string
	done      chan struct{}
	closed    bool
	// small are the packs checkpoints wrote since the last merge, merged
	// the packs merged from them since git last repacked; compacting is
	// closed when git's repack under way ends.
	small, merged []string
	compacting    chan struct{}
}

// watches are this process's watches by store directory and work tree.
var watches sync.Map

func watchKey(storeDir, key string) string { return storeDir + "\x00" + key }

// Watch starts following the work tree containing dir for this store's
// checkpoints taken in this process, until Close. The first checkpoint
// after it goes the whole way.
func (s *Store) Watch(dir string) (*Watch, error) {
	repo, err := FindRepo(dir)
	if err != nil {
		return nil, err
	}
	key := repoKey(repo.Top)
	bdir, err := os.MkdirTemp("", "laserbrain-watch-")
	if err != nil {
		return nil, err
	}
	w := &Watch{store: s, repo: repo, key: key, dir: bdir, seenCh: make(chan struct{})}
	if err := w.rebuild(); err != nil {
		_ = os.RemoveAll(bdir)
		return nil, err
	}
	w.doubt = "the watch began"
	if _, loaded := watches.LoadOrStore(watchKey(s.Dir, key), w); loaded {
		w.Close()
		return nil, fmt.Errorf("%s is watched already", repo.Top)
	}
	return w, nil
}

// Close stops the watch.
func (w *Watch) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	fw := w.fw
	w.mu.Unlock()
	watches.CompareAndDelete(watchKey(w.store.Dir, w.key), w)
	if fw != nil {
		_ = fw.Close()
	}
	_ = os.RemoveAll(w.dir)
	w.mu.Lock()
	c, packs := w.compacting, len(w.small)+len(w.merged)
	w.mu.Unlock()
	if c != nil {
		<-c
	}
	if packs > 1 {
		w.compact(&repoStore{repo: w.repo, key: w.key, dir: w.store.repoDir(w.key)})
	}
}

// maxPacks is how many packs the watch's checkpoints write before they
// are merged into one, and how many of those before git merges them with
// the rest: every object lookup of a git process looks in each pack.
const maxPacks = 32

// packed notes the pack a checkpoint wrote (under the work tree's lock):
// the checkpoint that writes the maxPacks-th merges them (their entries
// copied, nothing compressed again), and the maxPacks-th merge has git
// repack meanwhile.
func (w *Watch) packed(r *repoStore, base string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.small = append(w.small, base)
	if len(w.small) < maxPacks {
		return
	}
	merged, err := mergePacks(filepath.Dir(base), w.small, w.model.raw)
	w.small = nil
	if err != nil {
		return // left to git's repack at the end
	}
	w.merged = append(w.merged, merged)
	if len(w.merged) < maxPacks || w.compacting != nil {
		return
	}
	done := make(chan struct{})
	w.compacting, w.merged = done, nil
	go func() {
		defer close(done)
		w.compact(r)
		w.mu.Lock()
		w.compacting = nil
		w.mu.Unlock()
	}()
}

// compact merges the store's small packs, and its loose objects, into
// larger ones (git repack's geometric progression: each merge costs what
// the small packs hold, not the store).
func (w *Watch) compact(r *repoStore) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = r.own().out(ctx, "repack", "-d", "-q", "--geometric=2", "--no-write-bitmap-index")
}

// watchOf is the watch this process holds of the work tree, if any.
func (s *Store) watchOf(key string) *Watch {
	if v, ok := watches.Load(watchKey(s.Dir, key)); ok {
		return v.(*Watch)
	}
	return nil
}

// rebuild starts the notifications afresh: every directory of the work
// tree but .git (and the store, when it lies inside) watched, and the
// files with more than one link noted (a write through another of their
// names tells their directory nothing, so they are read every time).
func (w *Watch) rebuild() error {
	fw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return err
	}
	if err := fw.Add(w.dir); err != nil {
		_ = fw.Close()
		return err
	}
	dirs, linked := map[string]bool{}, map[string]bool{}
	exclude := w.excluded()
	top := w.repo.Top
	werr := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel := relPath(top, p)
		if d.IsDir() {
			if rel == ".git" || (exclude != "" && rel == exclude) {
				return filepath.SkipDir
			}
			if err := fw.Add(p); err != nil {
				return err
			}
			dirs[rel] = true
			return nil
		}
		if fi, err := d.Info(); err == nil && links(fi) > 1 {
			linked[rel] = true
		}
		return nil
	})
	if werr != nil {
		_ = fw.Close()
		return werr
	}
	w.mu.Lock()
	old := w.fw
	w.fw, w.dirs, w.linked, w.stale = fw, dirs, linked, false
	w.dirty = map[string]bool{}
	w.rules = ruleStat(w.repo)
	done := make(chan struct{})
	w.done = done
	w.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	go w.follow(fw, done)
	return nil
}

// excluded is the laserbrain home relative to the work tree's top when it
// lies inside it ("" when not).
func (w *Watch) excluded() string {
	if rel, err := filepath.Rel(w.repo.Top, filepath.Dir(w.store.Dir)); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return ""
}

// relPath is p relative to top in git's form ("" for top).
func relPath(top, p string) string {
	if p == top {
		return ""
	}
	return filepath.ToSlash(strings.TrimPrefix(p, top+string(filepath.Separator)))
}

// follow reads one notifier's events until it is closed.
func (w *Watch) follow(fw *fsnotify.Watcher, done chan struct{}) {
	defer close(done)
	ended := func() {
		w.mu.Lock()
		current := w.fw == fw && !w.closed
		w.mu.Unlock()
		if current {
			w.setDoubt("the notifications ended", true)
		}
	}
	for {
		select {
		case ev, ok := <-fw.Events:
			if !ok {
				ended()
				return
			}
			w.event(ev)
		case err, ok := <-fw.Errors:
			if !ok {
				ended()
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.setDoubt("the kernel's queue of notifications overflowed", false)
			} else {
				w.setDoubt("the notifications failed: "+err.Error(), true)
			}
		}
	}
}

func (w *Watch) setDoubt(why string, stale bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.doubt == "" {
		w.doubt = why
	}
	w.stale = w.stale || stale
}

// event notes one change: its path, and a doubt when it is a directory's.
func (w *Watch) event(ev fsnotify.Event) {
	if strings.HasPrefix(ev.Name, w.dir+string(filepath.Separator)) {
		if n, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(ev.Name), "b"), 10, 64); err == nil && ev.Has(fsnotify.Create) {
			w.mu.Lock()
			if n > w.seen {
				w.seen = n
				close(w.seenCh)
				w.seenCh = make(chan struct{})
			}
			w.mu.Unlock()
		}
		return
	}
	top := w.repo.Top
	if ev.Name != top && !strings.HasPrefix(ev.Name, top+string(filepath.Separator)) {
		return
	}
	rel := relPath(top, ev.Name)
	if rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return // the refs, HEAD, stash and index are read at every checkpoint
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case rel == "":
		w.doubt, w.stale = "the work tree itself moved or went away", true
	case w.dirs[rel] && ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0:
		w.doubt, w.stale = "a directory went away or moved: "+rel, true
	case ev.Has(fsnotify.Create):
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			w.doubt, w.stale = "a directory appeared: "+rel, true
		}
	}
	w.dirty[rel] = true
}

// cut is what changed since the last cut: the paths, or why the
// checkpoint must go the whole way. It first waits for the kernel to hand
// over every notification of a change made before it (the barrier file in
// the watch's own directory renamed to the cut's number comes after them),
// so nothing made before the checkpoint is left for the next one.
func (w *Watch) cut(ctx context.Context) (paths []string, doubt string) {
	w.mu.Lock()
	w.barrier++
	n := w.barrier
	err := w.moveBarrier(filepath.Join(w.dir, "b"+strconv.FormatUint(n, 10)))
	w.mu.Unlock()
	if err != nil {
		w.setDoubt("the barrier could not be made: "+err.Error(), false)
	} else {
		timeout := time.NewTimer(time.Second)
		defer timeout.Stop()
		for waiting := true; waiting; {
			w.mu.Lock()
			if w.seen >= n {
				w.mu.Unlock()
				break
			}
			ch := w.seenCh
			w.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				w.setDoubt("the notifications were not handed over in time", false)
				waiting = false
			case <-timeout.C:
				w.setDoubt("the notifications were not handed over in time", false)
				waiting = false
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rules != ruleStat(w.repo) {
		w.doubt = "an ignore rule's file outside the tree changed"
		w.rules = ruleStat(w.repo)
	}
	doubt = w.doubt
	for p := range w.dirty {
		paths = append(paths, p)
	}
	for p := range w.linked {
		if !w.dirty[p] {
			paths = append(paths, p)
		}
	}
	w.dirty, w.doubt = map[string]bool{}, ""
	return paths, doubt
}

// moveBarrier renames the barrier file to name (w.mu held): the kernel
// reports it made there, after every change made before. A rename makes
// no inode, where a new file each cut costs the file system an inode
// found, made and freed; the first cut, or one whose file went away,
// makes it.
func (w *Watch) moveBarrier(name string) error {
	if w.barrierAt != "" && os.Rename(w.barrierAt, name) == nil {
		w.barrierAt = name
		return nil
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w.barrierAt = name
	return f.Close()
}

// ruleStat names the state of the files outside the work tree git reads
// ignore rules and configuration from.
func ruleStat(r Repo) string {
	rs := &repoStore{repo: r}
	var b strings.Builder
	for _, p := range rs.ruleFiles() {
		fmt.Fprintf(&b, "%s %+v\n", p, statOf(p))
	}
	return b.String()
}

// fastTree is the work tree's tree written from the paths that changed
// since the last checkpoint, when the watch can vouch for them; ok is
// false when the checkpoint must go the whole way (the watch then watches
// the directories as they now are).
func (w *Watch) fastTree(ctx context.Context, r *repoStore, st *state, include []string) (tree string, fc fastChange, ok bool) {
	paths, doubt := w.cut(ctx)
	if doubt == "" && !w.includedAsBefore(r, st, include) {
		doubt = "the named data changed"
	}
	if doubt == "" && st.Tree == "" {
		doubt = "no tree yet"
	}
	var m *treeModel
	if doubt == "" {
		var err error
		if m, err = w.modelFor(ctx, r, st.Tree); err != nil {
			doubt = "the last tree could not be read: " + err.Error()
		}
	}
	if doubt == "" {
		next, got, err := m.apply(r, paths)
		if err == nil {
			w.mu.Lock()
			w.model = next
			for _, p := range got.linked {
				w.linked[p] = true
			}
			w.mu.Unlock()
			if got.pack != "" {
				w.packed(r, got.pack)
			}
			return next.root, got, true
		}
	}
	w.mu.Lock()
	w.model = nil
	stale := w.stale
	w.mu.Unlock()
	if stale {
		if err := w.rebuild(); err != nil {
			w.setDoubt("the watches could not be renewed: "+err.Error(), true)
		}
	}
	return "", fastChange{}, false
}

// includedAsBefore: the named data are what the private index tracks
// already (a file named the first time is added by name, the whole way).
func (w *Watch) includedAsBefore(r *repoStore, st *state, include []string) bool {
	for _, p := range include {
		fi, err := lstat(r.repo.Top, p)
		if err == nil && !fi.IsDir() && !slices.Contains(st.Included, p) {
			return false
		}
	}
	for _, p := range st.Included {
		if !slices.Contains(include, p) {
			return false
		}
	}
	return true
}

// modelFor is the tree in memory for the last checkpoint's tree: the one
// this watch holds, or the one being read since the last checkpoint that
// went the whole way, or read now.
func (w *Watch) modelFor(ctx context.Context, r *repoStore, tree string) (*treeModel, error) {
	w.mu.Lock()
	m, ld := w.model, w.loading
	w.mu.Unlock()
	if m != nil && m.root == tree {
		return m, nil
	}
	if ld != nil && ld.tree == tree {
		select {
		case <-ld.done:
			if ld.m != nil {
				return ld.m, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return r.loadModel(ctx, tree)
}

// settled: a checkpoint went the whole way and recorded tree; the watch
// reads it into memory meanwhile, for the next.
func (w *Watch) settled(r *repoStore, tree string) {
	ld := &modelLoad{tree: tree, done: make(chan struct{})}
	w.mu.Lock()
	w.loading = ld
	w.mu.Unlock()
	own := &repoStore{repo: r.repo, key: r.key, dir: r.dir}
	go func() {
		defer close(ld.done)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if m, err := own.loadModel(ctx, tree); err == nil {
			ld.m = m
		}
	}()
}

// modelLoad is a tree being read into memory.
type modelLoad struct {
	tree string
	m    *treeModel
	done chan struct{}
}
