package undo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// quiet is how a checkpoint tells, without a git process, that the work
// tree is as the last git add left it: every entry of every directory git
// could add from (the work tree less .git, the store, and the directories
// an ignore pattern names), with its type, size, times and inode, summed.
// A file written, created, removed, renamed or changed in mode changes its
// own ctime or its directory's mtime; a directory new anywhere changes its
// parent's. Equal sums: git add would find nothing, so the checkpoint
// records the last tree.
type quiet struct {
	// Sum is the walk's sum after the last git add; "" when it cannot be
	// trusted (an entry changed within racyWindow of that git add began:
	// a later change could leave the same times).
	Sum string `json:"sum,omitempty"`
	// Pruned are the directories an ignore pattern names, as git status
	// listed them, relative to the top.
	Pruned []string `json:"pruned,omitempty"`
	// Rules sums what the ignore rules are read from (every .gitignore
	// walked, the repository's exclude and configuration, the user's):
	// while it holds, Pruned does.
	Rules string `json:"rules,omitempty"`
	// With sums the named data the snapshot was taken with.
	With string `json:"with,omitempty"`
	// Big counts down the checkpoints before the next walk of a tree
	// that could not be walked (too large, nested, coarse-timed).
	Big int `json:"big,omitempty"`

	walked string // a walk's sum, racy or not
}

// racyWindow: an entry whose mtime or ctime is this close to (or after)
// the start of the git add the sum stands for may have changed again in
// the same tick of the file system's clock, leaving its times as they
// were; such a sum is not kept. Far above the kernel's coarse clock tick
// (at most 10 ms).
const racyWindow = 100 * time.Millisecond

// maxQuietEntries bounds the walk: a larger tree is left to git, whose
// index compares its stat data (in threads) for less than a walk costs.
const maxQuietEntries = 2000

// walkSum is the sum of the work tree as described on quiet, skipping
// pruned; rules sums the ignore rules' files it met; racy when an entry's
// time is at or after since (zero: not asked); ok is false when the tree
// cannot be summed (too large, a repository nested in it, a file system
// whose times are coarse).
func (r *repoStore) walkSum(pruned []string, since time.Time) (sum, rules string, racy, ok bool) {
	if !fineTimes(r.repo.Top) {
		return "", "", false, false
	}
	skip := make(map[string]bool, len(pruned)+1)
	for _, p := range pruned {
		skip[p] = true
	}
	if r.exclude != "" {
		skip[r.exclude] = true
	}
	w := walker{top: r.repo.Top, skip: skip, since: since.UnixNano(), sum: sha256.New(), rules: sha256.New()}
	if !w.dir("") {
		return "", "", false, false
	}
	for _, p := range r.ruleFiles() {
		w.file(w.rules, p)
	}
	return hex.EncodeToString(w.sum.Sum(nil)), hex.EncodeToString(w.rules.Sum(nil)), w.racy, true
}

// ruleFiles are the files outside the work tree git reads ignore rules or
// configuration from for git add.
func (r *repoStore) ruleFiles() []string {
	files := []string{filepath.Join(r.repo.CommonDir, "info", "exclude"), filepath.Join(r.repo.CommonDir, "config"), filepath.Join(r.repo.GitDir, "config.worktree")}
	home := os.Getenv("HOME")
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"), filepath.Join(xdg, "git", "ignore"))
	}
	return append(files, "/etc/gitconfig")
}

// walker sums a tree's entries in name order.
type walker struct {
	top        string
	skip       map[string]bool
	since      int64
	sum, rules hash.Hash
	n          int
	racy       bool
	buf        []byte
}

// dir sums the directory at rel ("" the top) and what is below it; false
// when the walk must give up.
func (w *walker) dir(rel string) bool {
	abs := filepath.Join(w.top, filepath.FromSlash(rel))
	ents, err := os.ReadDir(abs)
	if err != nil {
		return false
	}
	for _, e := range ents {
		name := e.Name()
		if name == ".git" {
			if rel != "" {
				return false // a repository of its own: git add records it its way
			}
			continue
		}
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		if w.skip[p] {
			continue
		}
		if w.n++; w.n > maxQuietEntries {
			return false
		}
		fi := w.entry(w.sum, p)
		if name == ".gitignore" {
			w.entry(w.rules, p)
		}
		if fi != nil && fi.IsDir() && !w.dir(p) {
			return false
		}
	}
	return true
}

// entry adds the entry at rel to h and returns what lstat said of it (nil
// when it is gone: that too is summed).
func (w *walker) entry(h hash.Hash, rel string) os.FileInfo {
	fi, err := os.Lstat(filepath.Join(w.top, filepath.FromSlash(rel)))
	w.add(h, rel, fi, err)
	return fi
}

// file adds a file outside the tree to h.
func (w *walker) file(h hash.Hash, abs string) {
	fi, err := os.Lstat(abs)
	w.add(h, abs, fi, err)
}

func (w *walker) add(h hash.Hash, name string, fi os.FileInfo, err error) {
	b := append(w.buf[:0], name...)
	b = append(b, 0)
	if err != nil {
		b = append(b, '-')
	} else {
		mtime, ctime := fi.ModTime().UnixNano(), changeTime(fi)
		if w.since != 0 && (mtime >= w.since || ctime >= w.since) {
			w.racy = true
		}
		for _, v := range []uint64{uint64(fi.Mode()), uint64(fi.Size()), uint64(mtime), uint64(ctime), inode(fi)} {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	w.buf = b
	_, _ = h.Write(b)
}

// look walks the work tree before a checkpoint's git add, at the time at,
// through the last mark's pruned directories: what the new mark will be
// if git add runs (nil: there is no last mark to walk by). A tree too
// large, nested or coarse-timed is walked again only every bigRetry
// checkpoints.
func (r *repoStore) look(last *quiet, with string, at time.Time) *quiet {
	if last == nil {
		return nil
	}
	if last.Big > 1 {
		return &quiet{Big: last.Big - 1, Pruned: last.Pruned, Rules: last.Rules, With: with}
	}
	sum, rules, racy, ok := r.walkSum(last.Pruned, at.Add(-racyWindow))
	if !ok {
		return &quiet{Big: bigRetry, With: with}
	}
	return &quiet{Sum: trusted(sum, racy), walked: sum, Pruned: last.Pruned, Rules: rules, With: with}
}

// bigRetry is how many checkpoints a tree that could not be walked goes
// to git before the next walk.
const bigRetry = 50

// unchanged: the walk before git add found the tree as the last mark
// left it, so git add would find nothing.
func unchanged(last, now *quiet) bool {
	return last != nil && now != nil && last.Sum != "" && last.Big == 0 && now.Big == 0 &&
		now.walked == last.Sum && now.Rules == last.Rules && now.With == last.With
}

// mark is the mark a checkpoint leaves after its git add, begun at at
// (now: the walk before it): that walk, while the ignore rules it read
// are the last mark's; else the directories git now says are ignored,
// and a walk by them.
func (r *repoStore) mark(ctx context.Context, last, now *quiet, with string, at time.Time) *quiet {
	if now != nil && now.Big == 0 && last != nil && last.Big == 0 && now.Rules == last.Rules {
		return now
	}
	if now != nil && now.Big > 0 && now.Big < bigRetry {
		return now // not walked this time
	}
	pruned, err := r.ignoredDirs(ctx)
	if err != nil {
		return nil
	}
	sum, rules, racy, ok := r.walkSum(pruned, at.Add(-racyWindow))
	if !ok {
		return &quiet{Big: bigRetry, With: with}
	}
	return &quiet{Sum: trusted(sum, racy), Pruned: pruned, Rules: rules, With: with}
}

func trusted(sum string, racy bool) string {
	if racy {
		return ""
	}
	return sum
}

// ignoredDirs are the directories an ignore pattern names, which git add
// never descends into: git status lists each as "!! DIR/" (matching mode
// names a directory only when a pattern matches it, not when all it holds
// is ignored).
func (r *repoStore) ignoredDirs(ctx context.Context) ([]string, error) {
	out, err := r.tree().out(ctx, "status", "--porcelain=v1", "-z", "--ignored=matching", "--untracked-files=normal", "--no-renames")
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, rec := range bytes.Split(out, []byte{0}) {
		p, ok := strings.CutPrefix(string(rec), "!! ")
		if ok && strings.HasSuffix(p, "/") {
			dirs = append(dirs, strings.TrimSuffix(p, "/"))
		}
	}
	return dirs, nil
}

// withSum names the named data a snapshot is taken with.
func withSum(include []string) string {
	if len(include) == 0 {
		return ""
	}
	s := sha256.Sum256([]byte(strings.Join(include, "\x00")))
	return hex.EncodeToString(s[:8])
}
