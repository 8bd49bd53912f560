package undo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Changes is what the call (or undo) a checkpoint stands before changed:
// the difference to the checkpoint after it. The last checkpoint's is
// empty.
func (s *Store) Changes(ctx context.Context, recs []Record, i int) (Change, error) {
	if i+1 >= len(recs) {
		return Change{}, nil
	}
	if recs[i].Same(recs[i+1]) {
		return Change{}, nil
	}
	if next := recs[i+1]; next.Changed != nil && next.Since == recs[i].Seq && next.Changed.Whole() {
		return *next.Changed, nil
	}
	return s.Diff(ctx, recs[i], recs[i+1])
}

// ErrNothingToUndo: no call of the run changed anything.
var ErrNothingToUndo = errors.New("no call of this run changed anything")

// Select is the checkpoint an undo goes back to: to names a call (its id,
// or #N, its place in the list undo --list prints) and means the state
// before it; "" is the last call (or undo) that changed something.
func Select(recs []Record, to string) (int, error) {
	if to == "" {
		for i := len(recs) - 2; i >= 0; i-- {
			if recs[i].Kind != KindEnd && !recs[i].Same(recs[i+1]) {
				return i, nil
			}
		}
		return 0, ErrNothingToUndo
	}
	if n, ok := strings.CutPrefix(to, "#"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 1 || i > len(recs) {
			return 0, fmt.Errorf("%s: no such checkpoint (the run has #1 to #%d)", to, len(recs))
		}
		return i - 1, nil
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Call == to {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s: no call of this run has that id (undo --list names them)", to)
}

// ChangedError: the work tree is not as the run left it, so an undo would
// also throw away what was done since.
type ChangedError struct {
	Run    string
	Ended  bool   // the run has ended (else it may still be working)
	Change Change // since its last checkpoint
}

func (e *ChangedError) Error() string {
	if !e.Ended {
		return fmt.Sprintf("run %s has not ended (its last checkpoint is not its end): its agent may still be working", e.Run)
	}
	return fmt.Sprintf("the work tree changed since run %s ended (%s): undoing would throw that away too", e.Run, e.Change.Summary())
}

// UndoInput is one undo.
type UndoInput struct {
	Run string
	// To is the checkpoint to go back to (an index into the run's records,
	// as Select gives).
	To int
	// Force undoes even when the work tree changed since the run ended.
	Force bool
	// What is the undo's command, recorded with it.
	What string
}

// UndoResult is what an undo did.
type UndoResult struct {
	Target Record // the checkpoint gone back to
	Before Record // the state before the undo (recorded: it can be undone)
	After  Record // the state after
	Change Change // what the undo changed
	// Differs is what still differs from Target afterwards ("" when
	// nothing does).
	Differs string
}

// Undo brings a run's work tree back to one of its checkpoints, byte for
// byte: its files and named data, its staged changes, its refs, HEAD and
// stash list. The state before is recorded first (kind undo) and the state
// after (kind end), so the undo is itself undone by the next undo --last.
// Unless Force, it refuses (*ChangedError, nothing written) when the run
// has not ended or the work tree is not as the run left it.
func (s *Store) Undo(ctx context.Context, in UndoInput) (UndoResult, error) {
	recs, err := s.Records(in.Run)
	if err != nil {
		return UndoResult{}, err
	}
	if in.To < 0 || in.To >= len(recs) {
		return UndoResult{}, fmt.Errorf("checkpoint #%d: the run has #1 to #%d", in.To+1, len(recs))
	}
	target, last := recs[in.To], recs[len(recs)-1]
	repo, err := s.repoOf(target)
	if err != nil {
		return UndoResult{}, err
	}
	r, err := s.open(ctx, repo)
	if err != nil {
		return UndoResult{}, err
	}
	defer r.close()
	if !in.Force {
		if err := s.unchanged(ctx, r, in.Run, last, target.Data); err != nil {
			return UndoResult{}, err
		}
	}
	before, err := s.take(ctx, r, Input{Run: in.Run, Kind: KindUndo, What: in.What, Include: target.Data})
	if err != nil {
		return UndoResult{}, fmt.Errorf("recording the work tree as it is now: %w", err)
	}
	now := before.Record
	res := UndoResult{Target: target, Before: now}
	if err := r.restore(ctx, target); err != nil {
		return res, fmt.Errorf("restoring %s: %w (the state before the undo is checkpoint #%d of run %s)", repo.Top, err, len(recs)+1, in.Run)
	}
	after, err := s.take(ctx, r, Input{Run: in.Run, Kind: KindEnd, What: "after " + in.What, Include: target.Data})
	if err != nil {
		return res, err
	}
	res.After = after.Record
	if res.Change, err = s.Diff(ctx, now, res.After); err != nil {
		return res, err
	}
	if !res.After.Same(target) {
		d, _ := s.Diff(ctx, target, res.After)
		res.Differs = d.Summary()
	}
	return res, nil
}

// unchanged refuses an undo of a run that has not ended, or whose work
// tree changed since its end (read without recording anything).
func (s *Store) unchanged(ctx context.Context, r *repoStore, run string, last Record, include []string) error {
	if last.Kind != KindEnd {
		return &ChangedError{Run: run}
	}
	st, err := r.loadState()
	if err != nil {
		return err
	}
	now, _, err := r.snapshot(ctx, &st, include, nil)
	if err != nil {
		return fmt.Errorf("reading the work tree as it is now: %w", err)
	}
	if err := r.saveState(st); err != nil {
		return err
	}
	if last.Key != r.key || last.Same(now) {
		return nil
	}
	ch, err := s.Diff(ctx, last, now)
	if err != nil {
		return err
	}
	return &ChangedError{Run: run, Ended: true, Change: ch}
}

// repoOf is the work tree a checkpoint recorded, as it is found now.
func (s *Store) repoOf(rec Record) (Repo, error) {
	repo, err := FindRepo(rec.Repo)
	if err != nil {
		return Repo{}, fmt.Errorf("the work tree of the checkpoint, %s: %w", rec.Repo, err)
	}
	if repo.Top != rec.Repo {
		return Repo{}, fmt.Errorf("%s is no longer the top of a work tree (git finds %s)", rec.Repo, repo.Top)
	}
	return repo, nil
}

// restore writes a checkpoint back: the work tree's files from the store,
// then the objects its refs and staged changes need into the repository,
// the refs, HEAD and the stash list, and the index.
func (r *repoStore) restore(ctx context.Context, target Record) error {
	// The private index holds the state just recorded: going from it to
	// the target writes what differs and removes what the target lacks.
	if _, err := r.tree().out(ctx, "read-tree", "--reset", "-u", target.Tree); err != nil {
		return fmt.Errorf("the files: %w", err)
	}
	if err := r.indexIs(target.Tree); err != nil {
		return err
	}
	want, err := r.refSet(target.Refs)
	if err != nil {
		return err
	}
	log, err := r.getBlob("logs", target.Stash)
	if err != nil {
		return fmt.Errorf("the stash list: %w", err)
	}
	want.StashLog = log
	ids := want.Tips()
	if target.Index != "" {
		ids = append(ids, target.Index)
	}
	if err := r.giveBack(ctx, ids); err != nil {
		return fmt.Errorf("the objects: %w", err)
	}
	if err := r.restoreRefs(ctx, want); err != nil {
		return fmt.Errorf("the refs: %w", err)
	}
	if err := r.restoreStash(want.StashLog); err != nil {
		return fmt.Errorf("the stash list: %w", err)
	}
	if target.Index != "" {
		if _, err := r.theirs().out(ctx, "read-tree", target.Index); err != nil {
			return fmt.Errorf("the staged changes: %w", err)
		}
		_, _ = r.theirs().out(ctx, "update-index", "-q", "--refresh")
	}
	return nil
}

// indexIs notes that the private index now holds tree.
func (r *repoStore) indexIs(tree string) error {
	st, err := r.loadState()
	if err != nil {
		return err
	}
	st.Tree = tree
	return r.saveState(st)
}

// giveBack fetches the objects into the work tree's repository from the
// store (those it already has cost nothing).
func (r *repoStore) giveBack(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	g := r.theirs()
	g.stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	_, err := g.out(ctx, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", "--stdin", r.gitDir())
	return err
}

// restoreRefs sets the repository's refs to the set, in one transaction:
// each ref of the set to its object, each ref it lacks deleted
// (laserbrain's own left alone); symbolic refs and HEAD after it.
func (r *repoStore) restoreRefs(ctx context.Context, want RefSet) error {
	have, err := ReadRefs(ctx, r.repo)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for n := range have.Refs {
		names[n] = true
	}
	for n := range want.Refs {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var tx strings.Builder
	var syms []string
	for _, n := range sorted {
		w, h := want.Refs[n], have.Refs[n]
		switch {
		case w == h:
		case w == "":
			fmt.Fprintf(&tx, "option no-deref\ndelete %s\n", n)
		case strings.HasPrefix(w, "ref: "):
			if h != "" {
				fmt.Fprintf(&tx, "option no-deref\ndelete %s\n", n)
			}
			syms = append(syms, n)
		default:
			fmt.Fprintf(&tx, "option no-deref\nupdate %s %s\n", n, w)
		}
	}
	if tx.Len() > 0 {
		g := r.theirs()
		g.stdin = strings.NewReader(tx.String())
		if _, err := g.out(ctx, "update-ref", "-m", "laserbrain undo", "--stdin"); err != nil {
			return err
		}
	}
	for _, n := range syms {
		if _, err := r.theirs().out(ctx, "symbolic-ref", "-m", "laserbrain undo", n, strings.TrimPrefix(want.Refs[n], "ref: ")); err != nil {
			return err
		}
	}
	if want.Head == have.Head {
		return nil
	}
	if t, ok := strings.CutPrefix(want.Head, "ref: "); ok {
		_, err = r.theirs().out(ctx, "symbolic-ref", "-m", "laserbrain undo", "HEAD", t)
	} else {
		_, err = r.theirs().out(ctx, "update-ref", "-m", "laserbrain undo", "--no-deref", "HEAD", want.Head)
	}
	return err
}

// restoreStash writes the stash list back as it was (its ref was set with
// the rest).
func (r *repoStore) restoreStash(log []byte) error {
	p := filepath.Join(r.repo.CommonDir, "logs", stashRef)
	if len(log) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return writeAtomic(p, log)
}
