package undo

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
)

// Blob is a file as a checkpoint recorded it: git's id of its content and
// its size.
type Blob struct {
	ID   []byte
	Size int64
}

// StartFiles are the files of the work tree at top as the run's first
// checkpoint of it recorded them (before the agent's first call that
// could write there), by slash-separated path from top: what the run
// found, whatever was since staged or committed. ok is false when the run
// has no checkpoint of that work tree.
func (s *Store) StartFiles(ctx context.Context, run, top string) (files map[string]Blob, ok bool, err error) {
	recs, err := s.Records(run)
	if errors.Is(err, ErrNoCheckpoints) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for _, rec := range recs {
		if rec.Repo == top && rec.Tree != "" {
			files, err := s.treeFiles(ctx, rec.Key, rec.Tree)
			return files, err == nil, err
		}
	}
	return nil, false, nil
}

// treeFiles lists a checkpoint's tree. A tree never changes, so what was
// listed once is kept (for the few trees a long-lived process asks of).
func (s *Store) treeFiles(ctx context.Context, key, tree string) (map[string]Blob, error) {
	id := s.Dir + "\x00" + tree
	listed.Lock()
	files, ok := listed.trees[id]
	listed.Unlock()
	if ok {
		return files, nil
	}
	r := &repoStore{key: key, dir: s.repoDir(key)}
	out, err := r.own().out(ctx, "ls-tree", "-r", "-l", "-z", "--full-tree", tree)
	if err != nil {
		return nil, err
	}
	files = map[string]Blob{}
	for _, e := range bytes.Split(out, []byte{0}) {
		// <mode> SP blob SP <id> SP+ <size> TAB <path>
		meta, path, found := bytes.Cut(e, []byte{'\t'})
		f := bytes.Fields(meta)
		if !found || len(f) != 4 || string(f[1]) != "blob" || bytes.HasPrefix(f[0], []byte("12")) {
			continue
		}
		sum, err1 := hex.DecodeString(string(f[2]))
		size, err2 := strconv.ParseInt(string(f[3]), 10, 64)
		if err1 == nil && err2 == nil {
			files[string(path)] = Blob{ID: sum, Size: size}
		}
	}
	listed.Lock()
	if len(listed.trees) >= maxListedTrees {
		listed.trees = map[string]map[string]Blob{}
	}
	listed.trees[id] = files
	listed.Unlock()
	return files, nil
}

const maxListedTrees = 8

var listed = struct {
	sync.Mutex
	trees map[string]map[string]Blob
}{trees: map[string]map[string]Blob{}}
