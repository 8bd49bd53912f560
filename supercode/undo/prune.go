package undo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/jsonl"
)

// RunInfo is one run's checkpoints, in short.
type RunInfo struct {
	Run         string
	First, Last Record
	Count       int
	Bytes       int64 // the list's size
}

// Runs are the runs the store holds checkpoints of.
func (s *Store) Runs() ([]RunInfo, error) {
	dir := filepath.Join(s.Dir, "runs")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []RunInfo
	for _, e := range ents {
		run, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() {
			continue
		}
		info := RunInfo{Run: run}
		if fi, err := e.Info(); err == nil {
			info.Bytes = fi.Size()
		}
		_, err := jsonl.Decode(filepath.Join(dir, e.Name()), jsonl.Start, func(r Record, _ int) error {
			if info.Count == 0 {
				info.First = r
			}
			info.Last = r
			info.Count++
			return nil
		})
		if err != nil {
			return nil, err
		}
		if info.Count > 0 {
			out = append(out, info)
		}
	}
	return out, nil
}

// PruneInput bounds what is kept.
type PruneInput struct {
	// KeepRuns is how many runs' checkpoints are kept per work tree, the
	// newest; MaxAge removes any run whose last checkpoint is older (0:
	// no bound by age).
	KeepRuns int
	MaxAge   time.Duration
	// Only prunes the work tree with this top ("": every one).
	Only string
	// DryRun says what would go, removing nothing.
	DryRun bool
	Now    time.Time
}

// PruneResult is what prune removed (or would).
type PruneResult struct {
	Removed []RunInfo
	Kept    int
	Freed   int64 // bytes the store no longer takes
}

// Prune removes the checkpoints of the runs past the bounds, then the
// objects, ref sets and stash lists no checkpoint kept needs (git gc in
// each work tree's store, under its lock). A run that has not ended is
// kept while it is younger than MaxAge: it may still be taking them.
func (s *Store) Prune(ctx context.Context, in PruneInput) (PruneResult, error) {
	runs, err := s.Runs()
	if err != nil {
		return PruneResult{}, err
	}
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	byKey := map[string][]RunInfo{}
	for _, r := range runs {
		byKey[r.Last.Key] = append(byKey[r.Last.Key], r)
	}
	var res PruneResult
	for key, rs := range byKey {
		if in.Only != "" && rs[0].Last.Repo != in.Only {
			res.Kept += len(rs)
			continue
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].Last.At.After(rs[j].Last.At) })
		var keep []RunInfo
		for i, r := range rs {
			old := in.MaxAge > 0 && in.Now.Sub(r.Last.At) > in.MaxAge
			if !old && (i < in.KeepRuns || in.KeepRuns <= 0 || r.Last.Kind != KindEnd) {
				keep = append(keep, r)
				continue
			}
			res.Removed = append(res.Removed, r)
		}
		res.Kept += len(keep)
		if in.DryRun || len(keep) == len(rs) {
			continue
		}
		freed, err := s.pruneRepo(ctx, key, rs, keep)
		if err != nil {
			return res, err
		}
		res.Freed += freed
	}
	return res, nil
}

// pruneRepo removes the runs of one work tree not kept, and what only they
// needed.
func (s *Store) pruneRepo(ctx context.Context, key string, all, keep []RunInfo) (int64, error) {
	before := duBytes(s.repoDir(key))
	r := &repoStore{key: key, dir: s.repoDir(key)}
	repo, err := FindRepo(all[0].Last.Repo)
	if err != nil {
		repo = Repo{Top: all[0].Last.Repo}
	}
	r.repo = repo
	lock, err := fsx.LockFile(filepath.Join(r.dir, "lock"), LockTimeout)
	if err != nil {
		return 0, err
	}
	r.lock = lock
	defer r.close()
	kept := map[string]bool{}
	for _, k := range keep {
		kept[k.Run] = true
	}
	for _, ri := range all {
		if kept[ri.Run] {
			continue
		}
		before += ri.Bytes
		for _, ext := range []string{".jsonl", ".jsonl.seq", ".jsonl.lock"} {
			if err := os.Remove(filepath.Join(s.Dir, "runs", ri.Run+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return 0, err
			}
		}
	}
	if len(keep) == 0 {
		if err := r.empty(); err != nil {
			return 0, err
		}
		return before - duBytes(r.dir), nil
	}
	if err := s.collect(ctx, r, keep); err != nil {
		return 0, err
	}
	return before - duBytes(r.dir), nil
}

// collect keeps, in the work tree's store, what the kept runs' checkpoints
// and the private index need, and removes the rest.
func (s *Store) collect(ctx context.Context, r *repoStore, keep []RunInfo) error {
	roots := map[string]bool{}
	blobs := map[string]bool{}
	st, err := r.loadState()
	if err != nil {
		return err
	}
	recs := []Record{st.Last, {Tree: st.Tree, Index: st.Index, Refs: st.Refs, Stash: st.Stash}}
	for _, k := range keep {
		rs, err := s.Records(k.Run)
		if err != nil {
			return err
		}
		recs = append(recs, rs...)
	}
	for _, rec := range recs {
		for _, id := range []string{rec.Tree, rec.Index} {
			if id != "" {
				roots[id] = true
			}
		}
		blobs["sets/"+rec.Refs], blobs["logs/"+rec.Stash] = true, true
		set, err := r.refSet(rec.Refs)
		if err != nil {
			continue
		}
		set.StashLog, _ = r.getBlob("logs", rec.Stash)
		for _, t := range set.Tips() {
			roots[t] = true
		}
	}
	if err := r.keepOnly(ctx, roots); err != nil {
		return err
	}
	for _, kind := range []string{"sets", "logs"} {
		ents, _ := os.ReadDir(filepath.Join(r.dir, kind))
		for _, e := range ents {
			if !blobs[kind+"/"+e.Name()] {
				_ = os.Remove(filepath.Join(r.dir, kind, e.Name()))
			}
		}
	}
	return nil
}

// keepOnly makes the store's refs exactly one per root, then lets git gc
// remove every object no root reaches.
func (r *repoStore) keepOnly(ctx context.Context, roots map[string]bool) error {
	var tx strings.Builder
	held := r.heldRefs()
	for name := range held {
		if id, ok := strings.CutPrefix(name, "refs/laserkit/tips/"); ok && roots[id] {
			continue
		}
		fmt.Fprintf(&tx, "delete %s\n", name)
	}
	for id := range roots {
		if !held[tipRef(id)] {
			fmt.Fprintf(&tx, "update %s %s\n", tipRef(id), id)
		}
	}
	g := r.own()
	g.stdin = strings.NewReader(tx.String())
	if _, err := g.out(ctx, "update-ref", "--stdin"); err != nil {
		return err
	}
	_, err := r.own().out(ctx, "gc", "--quiet", "--prune=now")
	return err
}

// empty removes everything a work tree's store holds but its lock: no run
// keeps a checkpoint of it.
func (r *repoStore) empty() error {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Name() == "lock" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(r.dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// Usage is what the store takes on disk: bytes, work trees and runs.
type Usage struct {
	Bytes int64
	Repos int
	Runs  int
}

// DiskUsage measures the store.
func (s *Store) DiskUsage() (Usage, error) {
	var u Usage
	if _, err := os.Stat(s.Dir); errors.Is(err, fs.ErrNotExist) {
		return u, nil
	}
	u.Bytes = duBytes(s.Dir)
	repos, _ := os.ReadDir(filepath.Join(s.Dir, "repos"))
	u.Repos = len(repos)
	runs, err := os.ReadDir(filepath.Join(s.Dir, "runs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return u, err
	}
	for _, e := range runs {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			u.Runs++
		}
	}
	return u, nil
}

// duBytes is what the files under dir take.
func duBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
