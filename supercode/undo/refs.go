package undo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ownRefs are the refs laserbrain itself keeps in a repository (the loop's
// checkpoints): a checkpoint neither records nor restores them, so an undo
// never takes back a checkpoint the loop still needs.
const ownRefs = "refs/laserkit/"

// stashRef is the ref whose reflog is the stash list.
const stashRef = "refs/stash"

// RefSet is a repository's refs as a checkpoint records them: HEAD (a
// symbolic "ref: refs/heads/x" or an object id), every ref under refs/ but
// laserbrain's own, each an object id or "ref: target", and the stash's
// reflog as git wrote it (the stash list: git stash drop edits it).
type RefSet struct {
	Head     string
	Refs     map[string]string
	StashLog []byte
}

// Text is the set as one text, the form a checkpoint keeps: HEAD first,
// then each ref in name order, "TARGET NAME" a line.
func (s RefSet) Text() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s HEAD\n", s.Head)
	names := make([]string, 0, len(s.Refs))
	for n := range s.Refs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", s.Refs[n], n)
	}
	return b.Bytes()
}

// parseRefText reads what Text wrote.
func parseRefText(data []byte) (RefSet, error) {
	s := RefSet{Refs: map[string]string{}}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		k := strings.LastIndexByte(line, ' ')
		if k < 0 {
			return RefSet{}, fmt.Errorf("line %d: %q is not TARGET NAME", i+1, line)
		}
		target, name := line[:k], line[k+1:]
		if name == "HEAD" {
			s.Head = target
			continue
		}
		s.Refs[name] = target
	}
	if s.Head == "" {
		return RefSet{}, errors.New("no HEAD")
	}
	return s, nil
}

// Tips are the objects the set needs kept: every ref's object, a detached
// HEAD's, and each stash entry's commit (the reflog's new ids).
func (s RefSet) Tips() []string {
	seen := map[string]bool{}
	var out []string
	add := func(id string) {
		if isOID(id) && !isZero(id) && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	add(s.Head)
	for _, t := range s.Refs {
		add(t)
	}
	for _, e := range stashEntries(s.StashLog) {
		add(e)
	}
	sort.Strings(out)
	return out
}

// stashEntries are the commits a reflog names, oldest first.
func stashEntries(log []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && isOID(f[1]) {
			out = append(out, f[1])
		}
	}
	return out
}

// ReadRefs reads a repository's refs the way git's files backend keeps
// them — packed-refs, then the loose refs over them, HEAD from the work
// tree's own git directory — without running git. A repository keeping
// its refs in a reftable is read through git for-each-ref.
func ReadRefs(ctx context.Context, r Repo) (RefSet, error) {
	s := RefSet{Refs: map[string]string{}}
	head, err := os.ReadFile(filepath.Join(r.GitDir, "HEAD"))
	if err != nil {
		return RefSet{}, fmt.Errorf("reading HEAD: %w", err)
	}
	s.Head = strings.TrimSpace(string(head))
	if _, err := os.Stat(filepath.Join(r.CommonDir, "reftable")); err == nil {
		if err := readRefsWithGit(ctx, r, &s); err != nil {
			return RefSet{}, err
		}
	} else {
		if err := readPacked(filepath.Join(r.CommonDir, "packed-refs"), s.Refs); err != nil {
			return RefSet{}, err
		}
		if err := readLoose(r.CommonDir, "refs", s.Refs); err != nil {
			return RefSet{}, err
		}
	}
	log, err := os.ReadFile(filepath.Join(r.CommonDir, "logs", stashRef))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return RefSet{}, fmt.Errorf("reading the stash list: %w", err)
	}
	s.StashLog = log
	return s, nil
}

func readPacked(path string, refs map[string]string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading packed-refs: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		id, name, ok := strings.Cut(line, " ")
		if ok && isOID(id) && keep(name) {
			refs[name] = id
		}
	}
	return nil
}

// readLoose reads the loose refs under dir/rel into refs, over the packed
// ones.
func readLoose(dir, rel string, refs map[string]string) error {
	root := filepath.Join(dir, rel)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walked: it is not a ref now
			}
			return err
		}
		name := filepath.ToSlash(p[len(dir)+1:])
		if d.IsDir() {
			if name+"/" == ownRefs {
				return filepath.SkipDir
			}
			return nil
		}
		if !keep(name) || strings.HasSuffix(name, ".lock") {
			return nil
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		t := strings.TrimSpace(string(b))
		if isOID(t) || strings.HasPrefix(t, "ref: ") {
			refs[name] = t
		}
		return nil
	})
}

func readRefsWithGit(ctx context.Context, r Repo, s *RefSet) error {
	out, err := gitRun{dir: r.Top}.out(ctx, "for-each-ref", "--format=%(objectname) %(refname) %(symref)")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !keep(f[1]) {
			continue
		}
		if len(f) == 3 {
			s.Refs[f[1]] = "ref: " + f[2]
		} else {
			s.Refs[f[1]] = f[0]
		}
	}
	return nil
}

// keep: a ref a checkpoint records (laserbrain's own are left alone).
func keep(name string) bool {
	return strings.HasPrefix(name, "refs/") && !strings.HasPrefix(name, ownRefs)
}

func isOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func isZero(s string) bool { return strings.Trim(s, "0") == "" }
