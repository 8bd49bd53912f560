package undo

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Change is what changed between two checkpoints of a work tree.
type Change struct {
	// Added, Modified and Deleted are the paths (work tree and named data
	// alike) whose content appeared, changed or went away; a change kept
	// in a checkpoint lists the first MaxListed of each, Files counts them
	// all.
	Added    []string `json:"added,omitempty"`
	Modified []string `json:"modified,omitempty"`
	Deleted  []string `json:"deleted,omitempty"`
	Files    Files    `json:"files"`
	// LostBytes is what the deleted and overwritten files held before.
	LostBytes int64 `json:"lost_bytes,omitempty"`
	// Data are the named data (the policy's "undo.include") among them.
	Data []string `json:"data,omitempty"`
	// Refs are the refs that moved, appeared or went away (HEAD too).
	Refs []RefMove `json:"refs,omitempty"`
	// Stash: the stash list changed, from StashBefore entries to
	// StashAfter.
	Stash       bool `json:"stash,omitempty"`
	StashBefore int  `json:"stash_before,omitempty"`
	StashAfter  int  `json:"stash_after,omitempty"`
	// Index: the staged changes changed.
	Index bool `json:"index,omitempty"`
}

// Files counts the paths a change added, modified and deleted.
type Files struct {
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
}

// MaxListed bounds the paths of each kind a checkpoint keeps of a change.
const MaxListed = 20

// RefMove is one ref's change: From "" when it appeared, To "" when it
// went away.
type RefMove struct {
	Name string `json:"name"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// Empty reports whether nothing changed.
func (c Change) Empty() bool {
	return c.Files.Added+c.Files.Modified+c.Files.Deleted+len(c.Refs) == 0 && !c.Stash && !c.Index
}

// Lost is how many files were deleted or overwritten.
func (c Change) Lost() int { return c.Files.Modified + c.Files.Deleted }

// Capped is the change with at most MaxListed paths of each kind listed.
func (c Change) Capped() Change {
	for _, l := range []*[]string{&c.Added, &c.Modified, &c.Deleted, &c.Data} {
		if len(*l) > MaxListed {
			*l = (*l)[:MaxListed]
		}
	}
	return c
}

// Whole reports whether every path is listed.
func (c Change) Whole() bool {
	return len(c.Added) == c.Files.Added && len(c.Modified) == c.Files.Modified && len(c.Deleted) == c.Files.Deleted
}

// Summary is the change in a few words: "3 added, 1 modified, 12 deleted
// (40 KiB lost); refs: refs/heads/x deleted; stash 2 → 1; staged changes".
func (c Change) Summary() string {
	if c.Empty() {
		return "nothing"
	}
	var parts []string
	var files []string
	for _, f := range []struct {
		n    int
		what string
	}{{c.Files.Added, "added"}, {c.Files.Modified, "modified"}, {c.Files.Deleted, "deleted"}} {
		if f.n > 0 {
			files = append(files, fmt.Sprintf("%d %s", f.n, f.what))
		}
	}
	if len(files) > 0 {
		s := strings.Join(files, ", ")
		if c.LostBytes > 0 {
			s += " (" + SizeText(c.LostBytes) + " lost)"
		}
		parts = append(parts, s)
	}
	if len(c.Data) > 0 {
		parts = append(parts, "named data: "+strings.Join(c.Data, ", "))
	}
	if len(c.Refs) > 0 {
		var rs []string
		for _, m := range c.Refs {
			rs = append(rs, m.Text())
		}
		parts = append(parts, "refs: "+strings.Join(rs, ", "))
	}
	if c.Stash {
		parts = append(parts, fmt.Sprintf("stash %d → %d", c.StashBefore, c.StashAfter))
	}
	if c.Index {
		parts = append(parts, "staged changes")
	}
	return strings.Join(parts, "; ")
}

// Text is the move in words.
func (m RefMove) Text() string {
	switch {
	case m.From == "":
		return m.Name + " created"
	case m.To == "":
		return m.Name + " deleted"
	}
	return m.Name + " moved"
}

// SizeText is a byte count in words: "40.0 KiB".
func SizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// rawEntry is one line of git's raw diff (or ls-tree) output.
type rawEntry struct {
	oldMode, newMode string
	oldID, newID     string
	status           byte
	path             string
}

// parseRaw reads diff-tree -z --raw (or, listing, ls-tree -z) output.
func parseRaw(out []byte, listing bool) []rawEntry {
	fields := bytes.Split(out, []byte{0})
	var es []rawEntry
	for i := 0; i < len(fields); i++ {
		f := string(fields[i])
		if listing {
			meta, path, ok := strings.Cut(f, "\t")
			w := strings.Fields(meta)
			if ok && len(w) == 3 {
				es = append(es, rawEntry{newMode: w[0], newID: w[2], status: 'A', path: path})
			}
			continue
		}
		if !strings.HasPrefix(f, ":") || i+1 >= len(fields) {
			continue
		}
		w := strings.Fields(f[1:])
		i++
		if len(w) < 5 || w[4] == "" {
			continue
		}
		es = append(es, rawEntry{oldMode: w[0], newMode: w[1], oldID: w[2], newID: w[3], status: w[4][0], path: string(fields[i])})
	}
	return es
}

// sizes are the sizes of objects named by id or by TREE:PATH ("missing"
// ones left out).
func (r *repoStore) sizes(ctx context.Context, names []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(names) == 0 {
		return out, nil
	}
	g := r.own()
	g.stdin = strings.NewReader(strings.Join(names, "\x00") + "\x00")
	b, err := g.out(ctx, "cat-file", "-z", "--batch-check=%(objectsize)")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i, line := range lines {
		if i >= len(names) {
			break
		}
		if n, err := strconv.ParseInt(line, 10, 64); err == nil {
			out[names[i]] = n
		}
	}
	return out, nil
}

// pathFiles is what the paths git add reported changed since the last
// checkpoint (prev): each added, modified or deleted by what the private
// index held before (its copy at index.prev, read without a git process).
func (r *repoStore) pathFiles(prev state, paths []string, include []string) Change {
	var c Change
	if len(paths) > 0 {
		wanted := make(map[string]bool, len(paths))
		for _, p := range paths {
			wanted[p] = true
		}
		old, err := readIndexSizes(r.indexPath()+".prev", len(prev.Tree)/2, wanted)
		if err != nil {
			old = map[string]entrySize{} // no copy (a first index): every path reads as new
		}
		for _, p := range paths {
			e, was := old[p]
			exists := r.exists(p)
			switch {
			case !was && exists:
				c.Added = append(c.Added, p)
			case was && exists:
				c.Modified, c.LostBytes = append(c.Modified, p), c.LostBytes+e.Size
			case was:
				c.Deleted, c.LostBytes = append(c.Deleted, p), c.LostBytes+e.Size
			}
		}
	}
	c.Data = named(paths, include)
	return c
}

// refsChange adds to c the refs and the stash list's change since the
// last checkpoint (prev).
func (r *repoStore) refsChange(c *Change, prev state, refs RefSet, refsID, stashID string) error {
	if refsID != prev.Refs {
		old, err := r.refSet(prev.Refs)
		if err != nil {
			return err
		}
		c.Refs = moves(old, refs)
	}
	if stashID != prev.Stash {
		oldLog, _ := r.getBlob("logs", prev.Stash)
		c.Stash, c.StashBefore, c.StashAfter = true, len(stashEntries(oldLog)), len(stashEntries(refs.StashLog))
	}
	return nil
}

func (r *repoStore) exists(p string) bool {
	_, err := lstat(r.repo.Top, p)
	return err == nil
}

func (r *repoStore) refSet(id string) (RefSet, error) {
	if id == "" {
		return RefSet{Refs: map[string]string{}}, nil
	}
	b, err := r.getBlob("sets", id)
	if err != nil {
		return RefSet{}, fmt.Errorf("the ref set %s: %w", id, err)
	}
	return parseRefText(b)
}

// moves are the refs that differ between two sets, HEAD first.
func moves(a, b RefSet) []RefMove {
	var out []RefMove
	if a.Head != b.Head {
		out = append(out, RefMove{Name: "HEAD", From: a.Head, To: b.Head})
	}
	both := map[string]string{}
	maps.Copy(both, a.Refs)
	maps.Copy(both, b.Refs)
	for _, n := range slices.Sorted(maps.Keys(both)) {
		if a.Refs[n] != b.Refs[n] {
			out = append(out, RefMove{Name: n, From: a.Refs[n], To: b.Refs[n]})
		}
	}
	return out
}

// named are the paths that are, or lie under, a named data path.
func named(paths, include []string) []string {
	var out []string
	for _, p := range paths {
		for _, inc := range include {
			if p == inc || strings.HasPrefix(p, strings.TrimSuffix(inc, "/")+"/") {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// sort orders the paths and counts them.
func (c *Change) sort() {
	for _, s := range [][]string{c.Added, c.Modified, c.Deleted, c.Data} {
		sort.Strings(s)
	}
	c.Files = Files{Added: len(c.Added), Modified: len(c.Modified), Deleted: len(c.Deleted)}
}

// Diff is what changed from checkpoint a to checkpoint b of one work tree.
func (s *Store) Diff(ctx context.Context, a, b Record) (Change, error) {
	if a.Key != b.Key {
		return Change{}, fmt.Errorf("the checkpoints are of two work trees (%s, %s)", a.Repo, b.Repo)
	}
	r := &repoStore{repo: Repo{Top: a.Repo}, key: a.Key, dir: s.repoDir(a.Key)}
	var c Change
	if a.Tree != b.Tree {
		var err error
		if c, err = r.treeFiles(ctx, a.Tree, b.Tree, b.Data); err != nil {
			return Change{}, err
		}
	}
	if a.Refs != b.Refs {
		ra, err := r.refSet(a.Refs)
		if err != nil {
			return Change{}, err
		}
		rb, err := r.refSet(b.Refs)
		if err != nil {
			return Change{}, err
		}
		c.Refs = moves(ra, rb)
	}
	if a.Stash != b.Stash {
		la, _ := r.getBlob("logs", a.Stash)
		lb, _ := r.getBlob("logs", b.Stash)
		c.Stash, c.StashBefore, c.StashAfter = true, len(stashEntries(la)), len(stashEntries(lb))
	}
	c.Index = a.Index != b.Index
	c.sort()
	return c, nil
}

// treeFiles is what the files changed from tree a to tree b (include: the
// named data among them).
func (r *repoStore) treeFiles(ctx context.Context, a, b string, include []string) (Change, error) {
	var c Change
	if a == b {
		return c, nil
	}
	out, err := r.own().out(ctx, "diff-tree", "-r", "-z", "--raw", "--no-renames", a, b)
	if err != nil {
		return Change{}, err
	}
	var lost, paths []string
	for _, e := range parseRaw(out, false) {
		paths = append(paths, e.path)
		switch e.status {
		case 'A':
			c.Added = append(c.Added, e.path)
		case 'D':
			c.Deleted, lost = append(c.Deleted, e.path), append(lost, e.oldID)
		default:
			c.Modified, lost = append(c.Modified, e.path), append(lost, e.oldID)
		}
	}
	sz, err := r.sizes(ctx, lost)
	if err != nil {
		return Change{}, err
	}
	for _, id := range lost {
		c.LostBytes += sz[id]
	}
	c.Data = named(paths, include)
	return c, nil
}
