package undo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/text"
)

// Input says what a checkpoint is taken for.
type Input struct {
	Run  string
	Kind Kind
	Call string // the call's id (tool_use_id), when it has one
	Tool string
	What string // the call's command lines or files; an undo's command
	// Include are the ignored paths the project policy names, relative to
	// the work tree's top: recorded beside it.
	Include []string
	// Budgeted: the caller's context has a tight deadline (a hook). A work
	// tree whose checkpoint overran one is not tried again by a budgeted
	// caller for SlowPause (ErrSlow), so that a tree too large to copy in
	// time does not cost every call its budget; an unbudgeted checkpoint
	// (laserbrain run's start) clears the mark.
	Budgeted bool
}

// SlowPause is how long budgeted checkpoints of a work tree wait after one
// overran its deadline.
const SlowPause = 10 * time.Minute

// ErrSlow: a recent checkpoint of the work tree overran its deadline.
var ErrSlow = errors.New("a recent checkpoint of this work tree overran its deadline; budgeted checkpoints wait")

// maxWhat bounds the command text a checkpoint keeps.
const maxWhat = 512

// Captured is a checkpoint taken.
type Captured struct {
	Record Record
	// Change is what changed since the work tree's previous checkpoint,
	// Before (of run BeforeRun): what the call it stood before did, when
	// it was this run's.
	Change    Change
	Before    Record
	BeforeRun string
	// Again: the call's checkpoint was taken already (a second hook layer
	// asked about the same call); nothing was appended.
	Again bool
}

// Capture takes a checkpoint of the work tree containing dir for a run
// and appends it to the run's checkpoints. It costs what changed since the
// work tree's last checkpoint: git compares each tracked file's stat data
// with the private index and reads the directories for new files, hashes
// only the files that changed, and the refs' objects are copied only when
// a ref moved. (git add reads no untracked cache, so the private index
// keeps none.)
func (s *Store) Capture(ctx context.Context, dir string, in Input) (Captured, error) {
	repo, err := FindRepo(dir)
	if err != nil {
		return Captured{}, err
	}
	slow := filepath.Join(s.repoDir(repoKey(repo.Top)), "slow")
	if fi, err := os.Stat(slow); err == nil && in.Budgeted && time.Since(fi.ModTime()) < SlowPause {
		return Captured{}, ErrSlow
	}
	got, err := s.capture(ctx, repo, in)
	switch {
	case err == nil:
		_ = os.Remove(slow)
	case in.Budgeted && ctx.Err() != nil:
		_ = os.WriteFile(slow, nil, 0o644)
	}
	return got, err
}

func (s *Store) capture(ctx context.Context, repo Repo, in Input) (Captured, error) {
	r, err := s.open(ctx, repo)
	if err != nil {
		return Captured{}, err
	}
	defer r.close()
	return s.take(ctx, r, in)
}

// take snapshots the work tree under its lock, appends the checkpoint to
// the run and keeps it as the work tree's last.
func (s *Store) take(ctx context.Context, r *repoStore, in Input) (Captured, error) {
	st, err := r.loadState()
	if err != nil {
		return Captured{}, err
	}
	if in.Kind == KindCall && in.Call != "" && st.LastRun == in.Run && st.Last.Kind == KindCall && st.Last.Call == in.Call {
		return Captured{Record: st.Last, Before: st.Last, BeforeRun: in.Run, Again: true}, nil
	}
	got := Captured{Before: st.Last, BeforeRun: st.LastRun}
	var w *Watch
	if in.Kind != KindUndo {
		w = s.watchOf(r.key)
	}
	rec, ch, err := r.snapshot(ctx, &st, in.Include, w)
	if err != nil {
		return Captured{}, err
	}
	rec.Kind, rec.At, rec.Call, rec.Tool, rec.What = in.Kind, nowUTC(), in.Call, in.Tool, text.Clip(in.What, maxWhat)
	if st.LastRun == in.Run && st.Last.Seq > 0 && !ch.Empty() {
		kept := ch.Capped()
		rec.Changed, rec.Since = &kept, st.Last.Seq
	}
	if err := s.appendRecord(in.Run, &rec); err != nil {
		return Captured{}, err
	}
	st.Last, st.LastRun = rec, in.Run
	if err := r.saveState(st); err != nil {
		return Captured{}, err
	}
	got.Record, got.Change = rec, ch
	return got, nil
}

// snapshot records the work tree's state in the store, under its lock;
// w, when not nil, is this process's watch of the work tree, whose paths
// spare the comparison of the whole tree when it can vouch for them.
func (r *repoStore) snapshot(ctx context.Context, stp *state, include []string, w *Watch) (Record, Change, error) {
	st := *stp
	prev := st
	refs, err := ReadRefs(ctx, r.repo)
	if err != nil {
		return Record{}, Change{}, err
	}
	var notes []string
	refsID, stashID, err := r.keepRefs(ctx, refs, st, &notes)
	if err != nil {
		return Record{}, Change{}, err
	}
	if err := r.syncExclude(&st); err != nil {
		return Record{}, Change{}, err
	}
	include = cleanIncludes(include)
	tree, ch, err := r.worktree(ctx, &st, include, refs, w)
	if err != nil {
		return Record{}, Change{}, err
	}
	index, err := r.indexTree(ctx, tree, &st)
	if err != nil {
		notes = append(notes, "the staged changes: "+err.Error())
	}
	if prev.Tree != "" {
		if err := r.refsChange(&ch, prev, refs, refsID, stashID); err != nil {
			return Record{}, Change{}, err
		}
		ch.Index = index != prev.Index
		ch.sort()
	} else {
		ch = Change{}
	}
	_ = os.Remove(r.indexPath() + ".prev")
	st.Tree, st.Index, st.Refs, st.Stash = tree, index, refsID, stashID
	*stp = st
	return Record{Repo: r.repo.Top, Key: r.key, Tree: tree, Index: index, Refs: refsID, Stash: stashID,
		Data: include, Note: strings.Join(notes, "; ")}, ch, nil
}

// worktree records the work tree's files as a tree and says what they
// changed since the last checkpoint: from the watch's paths when it can
// vouch for them (the private index is then behind the tree), else the
// whole way.
func (r *repoStore) worktree(ctx context.Context, st *state, include []string, refs RefSet, w *Watch) (string, Change, error) {
	if w != nil {
		if tree, fc, ok := w.fastTree(ctx, r, st, include); ok {
			c := Change{Modified: fc.modified, Deleted: fc.deleted, LostBytes: fc.lost}
			c.Data = named(append(slices.Clone(fc.modified), fc.deleted...), include)
			if tree != st.Tree {
				st.Quiet, st.IndexBehind = nil, true
			}
			return tree, c, nil
		}
	}
	tree, c, err := r.whole(ctx, st, include, refs)
	if w != nil && err == nil {
		w.settled(r, tree)
	}
	return tree, c, err
}

// whole brings the private index to the work tree with git add and writes
// it as a tree. What changed is read off git add's paths and the index
// before it; when the index was behind the last tree (checkpoints a watch
// made), off the two trees.
func (r *repoStore) whole(ctx context.Context, st *state, include []string, refs RefSet) (string, Change, error) {
	prev := *st
	seeded := st.Tree == "" && r.seed(refs)
	paths, err := r.addAll(ctx, include, st)
	if err != nil && seeded {
		// An index git cannot read through the store (a split or sparse
		// one): start from an empty one, hashing every file once.
		_ = os.Remove(r.indexPath())
		seeded = false
		paths, err = r.addAll(ctx, include, st)
	}
	if err != nil {
		return "", Change{}, err
	}
	tree := st.Tree
	if tree == "" || len(paths) > 0 || prev.IndexBehind {
		if tree, err = r.writeTree(ctx, seeded, refs); err != nil {
			return "", Change{}, err
		}
	}
	var c Change
	switch {
	case prev.Tree == "":
	case prev.IndexBehind:
		if c, err = r.treeFiles(ctx, prev.Tree, tree, include); err != nil {
			return "", Change{}, err
		}
	default:
		c = r.pathFiles(prev, paths, include)
	}
	st.IndexBehind = false
	return tree, c, nil
}

// keepRefs keeps the ref set and the stash list, and copies into the store
// the objects their tips need when either changed since the last
// checkpoint. A copy that fails is noted, not fatal: the files are still
// recorded.
func (r *repoStore) keepRefs(ctx context.Context, refs RefSet, st state, notes *[]string) (refsID, stashID string, err error) {
	if refsID, err = r.putBlob("sets", refs.Text()); err != nil {
		return "", "", err
	}
	if len(refs.StashLog) > 0 {
		if stashID, err = r.putBlob("logs", refs.StashLog); err != nil {
			return "", "", err
		}
	}
	if refsID != st.Refs || stashID != st.Stash {
		if err := r.keepTips(ctx, refs.Tips()); err != nil {
			*notes = append(*notes, "the refs' objects: "+err.Error())
		}
	}
	return refsID, stashID, nil
}

// tipRef is where the store keeps a tip it copied, so the objects stay and
// the next copy starts from what it has.
func tipRef(id string) string { return "refs/laserkit/tips/" + id }

// keepTips fetches the tips the store does not hold yet from the work
// tree's repository, each to a ref of its own.
func (r *repoStore) keepTips(ctx context.Context, tips []string) error {
	have := r.heldRefs()
	var want bytes.Buffer
	for _, id := range tips {
		if !have[tipRef(id)] {
			fmt.Fprintf(&want, "%s:%s\n", id, tipRef(id))
		}
	}
	if want.Len() == 0 {
		return nil
	}
	g := r.own()
	g.stdin = &want
	_, err := g.out(ctx, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", "--stdin", r.repo.Top)
	return err
}

// heldRefs are the store repository's refs, loose and packed.
func (r *repoStore) heldRefs() map[string]bool {
	refs := map[string]string{}
	_ = readPacked(filepath.Join(r.gitDir(), "packed-refs"), refs)
	_ = readLooseAll(r.gitDir(), refs)
	out := make(map[string]bool, len(refs))
	for n := range refs {
		out[n] = true
	}
	return out
}

// readLooseAll reads every loose ref under dir/refs, laserbrain's own
// included (the store's refs are all its own).
func readLooseAll(dir string, refs map[string]string) error {
	root := filepath.Join(dir, "refs")
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		refs[filepath.ToSlash(p[len(dir)+1:])] = ""
		return nil
	})
}

// syncExclude keeps the store's info/exclude the work tree's, so the store
// ignores what git status ignores there.
func (r *repoStore) syncExclude(st *state) error {
	src := filepath.Join(r.repo.CommonDir, "info", "exclude")
	now := statOf(src)
	if now == st.Exclude {
		return nil
	}
	dst := filepath.Join(r.gitDir(), "info", "exclude")
	data, err := os.ReadFile(src)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	case err != nil:
		return err
	default:
		if err := writeAtomic(dst, data); err != nil {
			return err
		}
	}
	st.Exclude = now
	return nil
}

// seed starts the private index from the work tree's own, whose stat data
// spares hashing every unchanged file and whose entries keep the tracked
// files git would otherwise ignore. Only when HEAD names a commit, whose
// tree the store holds (writeTree copies the few blobs it lacks).
func (r *repoStore) seed(refs RefSet) bool {
	if headCommit(refs) == "" {
		return false
	}
	src, err := os.Open(filepath.Join(r.repo.GitDir, "index"))
	if err != nil {
		return false
	}
	defer src.Close()
	dst, err := os.Create(r.indexPath())
	if err != nil {
		return false
	}
	_, cerr := io.Copy(dst, src)
	if err := dst.Close(); cerr == nil {
		cerr = err
	}
	if cerr != nil {
		_ = os.Remove(r.indexPath())
		return false
	}
	return true
}

// headCommit is the commit HEAD names, through symbolic refs ("" when it
// names none: an unborn branch).
func headCommit(refs RefSet) string {
	t := refs.Head
	for i := 0; i < 5; i++ {
		name, sym := strings.CutPrefix(t, "ref: ")
		if !sym {
			if isOID(t) {
				return t
			}
			return ""
		}
		t = refs.Refs[name]
	}
	return ""
}

// cleanIncludes keeps the named paths that stay inside the work tree, in
// git's form.
func cleanIncludes(in []string) []string {
	var out []string
	for _, p := range in {
		p = filepath.ToSlash(filepath.Clean(p))
		if p == "." || p == "" || filepath.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || p == ".git" || strings.HasPrefix(p, ".git/") {
			continue
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// addAll brings the private index to the work tree: every change git add
// -A sees, and the named data, which is ignored and so is added by name
// (a file once, since git then tracks it in the private index; a directory
// each time, for the files new in it). It returns the paths whose content
// changed.
func (r *repoStore) addAll(ctx context.Context, include []string, st *state) ([]string, error) {
	var force []string
	for _, p := range include {
		fi, err := os.Lstat(filepath.Join(r.repo.Top, filepath.FromSlash(p)))
		if err != nil {
			continue
		}
		if fi.IsDir() || !slices.Contains(st.Included, p) {
			force = append(force, p)
		}
	}
	with, started, last := withSum(include), time.Now(), st.Quiet
	var now *quiet
	if st.Tree != "" {
		now = r.look(last, with, started)
	}
	if len(force) == 0 && unchanged(last, now) {
		// Nothing git add could see changed since it last ran.
		return nil, nil
	}
	st.Quiet = nil
	// The index as it was, for what the changed paths held (git replaces
	// the file whole, through a rename: the link keeps the old one).
	prev := r.indexPath() + ".prev"
	_ = os.Remove(prev)
	_ = os.Link(r.indexPath(), prev)
	var changed []string
	g := r.tree()
	if len(force) > 0 {
		out, err := g.out(ctx, append([]string{"add", "-A", "-f", "-v", "--"}, force...)...)
		if err != nil {
			return nil, err
		}
		changed = parseAdded(out, changed)
		for _, p := range force {
			if !slices.Contains(st.Included, p) {
				st.Included = append(st.Included, p)
			}
		}
	}
	args := []string{"-c", "core.untrackedCache=false", "-c", "core.preloadIndex=true", "add", "-A", "-v"}
	if r.exclude != "" {
		args = append(args, "--", ".", ":(exclude)"+r.exclude)
	}
	out, err := g.out(ctx, args...)
	if err != nil {
		return nil, err
	}
	changed = parseAdded(out, changed)
	st.Included = slices.DeleteFunc(st.Included, func(p string) bool { return !slices.Contains(include, p) })
	st.Quiet = r.mark(ctx, last, now, with, started)
	return changed, nil
}

// parseAdded reads git add -v's "add 'PATH'" and "remove 'PATH'" lines.
func parseAdded(out []byte, into []string) []string {
	for _, line := range strings.Split(string(out), "\n") {
		var p string
		if rest, ok := strings.CutPrefix(line, "add '"); ok {
			p = rest
		} else if rest, ok := strings.CutPrefix(line, "remove '"); ok {
			p = rest
		} else {
			continue
		}
		p = strings.TrimSuffix(p, "'")
		if !slices.Contains(into, p) {
			into = append(into, p)
		}
	}
	return into
}

// writeTree writes the private index as a tree. A freshly seeded index
// names blobs the work tree's repository holds and the store may not (a
// staged file changed back, a file git ignores but tracks): they are
// copied.
func (r *repoStore) writeTree(ctx context.Context, seeded bool, refs RefSet) (string, error) {
	args := []string{"write-tree"}
	if seeded {
		args = append(args, "--missing-ok")
	}
	out, err := r.tree().out(ctx, args...)
	if err != nil {
		return "", err
	}
	tree := strings.TrimSpace(string(out))
	if seeded {
		if err := r.ensure(ctx, headCommit(refs), tree); err != nil {
			return "", err
		}
	}
	return tree, nil
}

// indexTree records the work tree's own index as a tree, when it changed
// since the last checkpoint: written from a copy (the index is never
// locked or touched), its trees into the store, and the blobs it stages
// that the work tree's snapshot does not hold copied from the repository.
func (r *repoStore) indexTree(ctx context.Context, wtree string, st *state) (string, error) {
	src := filepath.Join(r.repo.GitDir, "index")
	now := statOf(src)
	if now == st.IndexAt {
		return st.Index, nil
	}
	st.IndexAt = now
	if now.Gone {
		return "", nil
	}
	cp := filepath.Join(r.dir, "their-index")
	defer os.Remove(cp)
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		return "", err
	}
	out, err := r.theirs("GIT_INDEX_FILE="+cp, "GIT_OBJECT_DIRECTORY="+filepath.Join(r.gitDir(), "objects")).out(ctx, "write-tree", "--missing-ok")
	if err != nil {
		st.IndexAt = fileStat{} // try again next time
		return "", err
	}
	tree := strings.TrimSpace(string(out))
	if err := r.ensure(ctx, wtree, tree); err != nil {
		st.IndexAt = fileStat{}
		return "", err
	}
	return tree, nil
}

// ensure copies into the store the blobs of tree that base does not share
// with it and the store lacks, from the work tree's repository.
func (r *repoStore) ensure(ctx context.Context, base, tree string) error {
	args := []string{"diff-tree", "-r", "-z", "--raw", "--no-renames", base, tree}
	if base == "" {
		args = []string{"ls-tree", "-r", "-z", "--full-tree", tree}
	}
	out, err := r.own().out(ctx, args...)
	if err != nil {
		return err
	}
	var want []string
	for _, e := range parseRaw(out, base == "") {
		if e.newMode != "160000" && isOID(e.newID) && !isZero(e.newID) {
			want = append(want, e.newID)
		}
	}
	missing, err := r.missing(ctx, want)
	if err != nil || len(missing) == 0 {
		return err
	}
	return r.copyObjects(ctx, missing)
}

// missing are the ids the store does not hold.
func (r *repoStore) missing(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	g := r.own()
	g.stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	out, err := g.out(ctx, "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return nil, err
	}
	var miss []string
	for _, line := range strings.Split(string(out), "\n") {
		if id, ok := strings.CutSuffix(line, " missing"); ok {
			miss = append(miss, id)
		}
	}
	return miss, nil
}

// copyObjects packs the given objects in the work tree's repository and
// unpacks them into the store.
func (r *repoStore) copyObjects(ctx context.Context, ids []string) error {
	g := r.theirs()
	g.stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	pack, err := g.out(ctx, "pack-objects", "-q", "--stdout")
	if err != nil {
		return fmt.Errorf("copying %d objects from %s: %w", len(ids), r.repo.Top, err)
	}
	u := r.own()
	u.stdin = bytes.NewReader(pack)
	_, err = u.out(ctx, "unpack-objects", "-q")
	return err
}
