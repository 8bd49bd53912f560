package undo

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// treeModel is a checkpoint's tree as git stores it, held in memory by a
// watch so that the next checkpoint can write the few trees above the
// paths that changed: per directory ("" the top), its entries in git's
// order.
type treeModel struct {
	root   string
	raw    int // an object name's length in bytes (20 SHA-1, 32 SHA-256)
	dirs   map[string]*treeDir
	copied map[string]bool // directories whose entries this copy owns
}

type treeDir struct {
	ents []treeEnt
}

type treeEnt struct {
	name string
	mode uint32 // 0o40000 a tree, 0o160000 a commit, else a blob's
	id   []byte
	size int64
}

const (
	modeTree    = 0o40000
	modeGitlink = 0o160000
	modeLink    = 0o120000
)

func (d *treeDir) find(name string) int {
	for i := range d.ents {
		if d.ents[i].name == name {
			return i
		}
	}
	return -1
}

// loadModel reads tree id from the store (one git ls-tree).
func (r *repoStore) loadModel(ctx context.Context, id string) (*treeModel, error) {
	out, err := r.own().out(ctx, "ls-tree", "-r", "-t", "-l", "-z", "--full-tree", id)
	if err != nil {
		return nil, err
	}
	m := &treeModel{root: id, raw: len(id) / 2, dirs: map[string]*treeDir{"": {}}}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("ls-tree: %q", rec)
		}
		mode, err := strconv.ParseUint(f[0], 8, 32)
		if err != nil {
			return nil, fmt.Errorf("ls-tree: %q", rec)
		}
		raw, err := hex.DecodeString(f[2])
		if err != nil || len(raw) != m.raw {
			return nil, fmt.Errorf("ls-tree: %q", rec)
		}
		size, _ := strconv.ParseInt(f[3], 10, 64)
		rel := string(p)
		parent := m.dirs[dirOf(rel)]
		if parent == nil {
			return nil, fmt.Errorf("ls-tree: %s listed before its directory", rel)
		}
		parent.ents = append(parent.ents, treeEnt{name: path.Base(rel), mode: uint32(mode), id: raw, size: size})
		if mode == modeTree {
			m.dirs[rel] = &treeDir{}
		}
	}
	return m, nil
}

func dirOf(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// fastChange is what the paths a watch handed a checkpoint changed.
type fastChange struct {
	modified, deleted []string
	lost              int64
	linked            []string // files found with more than one link
	pack              string   // the pack written, less its extension
}

// errDoubt: the paths cannot be applied to the tree in memory; the
// checkpoint goes the whole way.
type errDoubt struct{ why string }

func (e errDoubt) Error() string { return e.why }

// apply brings a copy of the model to the work tree at the given paths,
// writing the blobs and trees it made into the store as one pack (a file
// per object would cost the file system an inode each), and returns the
// copy and what changed. A path it cannot vouch for (new, a directory, a
// rule file, a special file) is an errDoubt.
func (m *treeModel) apply(r *repoStore, paths []string) (*treeModel, fastChange, error) {
	var fc fastChange
	next := m.clone()
	touched := map[string]bool{}
	pk := &packer{raw: m.raw}
	sort.Strings(paths)
	for _, p := range paths {
		if r.exclude != "" && (p == r.exclude || strings.HasPrefix(p, r.exclude+"/")) {
			continue
		}
		base := path.Base(p)
		if base == ".gitignore" || base == ".git" {
			return nil, fc, errDoubt{"an ignore rule or a repository changed: " + p}
		}
		d := next.writable(dirOf(p))
		fi, err := lstat(r.repo.Top, p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if d == nil {
				continue // under nothing recorded: nothing to take away
			}
			i := d.find(base)
			if i < 0 {
				continue
			}
			if d.ents[i].mode == modeTree || d.ents[i].mode == modeGitlink {
				return nil, fc, errDoubt{"a directory went away: " + p}
			}
			fc.deleted, fc.lost = append(fc.deleted, p), fc.lost+d.ents[i].size
			d.ents = slices.Delete(d.ents, i, i+1)
			touched[dirOf(p)] = true
			continue
		case err != nil:
			return nil, fc, errDoubt{err.Error()}
		case fi.IsDir():
			return nil, fc, errDoubt{"a directory: " + p}
		case !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0:
			return nil, fc, errDoubt{"neither a file nor a link: " + p}
		}
		i := -1
		if d != nil {
			i = d.find(base)
		}
		if i < 0 || d.ents[i].mode == modeTree || d.ents[i].mode == modeGitlink {
			return nil, fc, errDoubt{"a path the last checkpoint did not record as a file: " + p}
		}
		if links(fi) > 1 {
			fc.linked = append(fc.linked, p)
		}
		mode, data, err := blobOf(r.repo.Top, p, fi)
		if err != nil {
			return nil, fc, errDoubt{err.Error()}
		}
		id := pk.add(objBlob, data)
		e := &d.ents[i]
		if e.mode == mode && bytes.Equal(e.id, id) {
			continue
		}
		fc.modified, fc.lost = append(fc.modified, p), fc.lost+e.size
		e.mode, e.id, e.size = mode, id, int64(len(data))
		touched[dirOf(p)] = true
	}
	if len(touched) == 0 {
		return m, fc, nil
	}
	if err := next.writeTrees(pk, touched); err != nil {
		return nil, fc, err
	}
	var err error
	if fc.pack, err = pk.write(filepath.Join(r.gitDir(), "objects", "pack")); err != nil {
		return nil, fc, err
	}
	return next, fc, nil
}

// clone copies the directory table; a directory's entries are copied
// when first changed (writable), so the model the watch holds stays as it
// was until the checkpoint is taken.
func (m *treeModel) clone() *treeModel {
	c := &treeModel{root: m.root, raw: m.raw, dirs: make(map[string]*treeDir, len(m.dirs)), copied: map[string]bool{}}
	for k, d := range m.dirs {
		c.dirs[k] = d
	}
	return c
}

// writable is directory d's entries, copied first if this model shares
// them (nil when there is no such directory).
func (m *treeModel) writable(d string) *treeDir {
	node := m.dirs[d]
	if node == nil || m.copied[d] {
		return node
	}
	node = &treeDir{ents: slices.Clone(node.ents)}
	m.dirs[d], m.copied[d] = node, true
	return node
}

// blobOf is the mode and content git add records for the file at p: a
// link's target, a file's bytes (executable when its owner may run it).
func blobOf(top, p string, fi os.FileInfo) (uint32, []byte, error) {
	abs := filepath.Join(top, filepath.FromSlash(p))
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, err := os.Readlink(abs)
		return modeLink, []byte(t), err
	}
	data, err := os.ReadFile(abs)
	if fi.Mode().Perm()&0o100 != 0 {
		return 0o100755, data, err
	}
	return 0o100644, data, err
}

// writeTrees packs the changed directories and every one above them,
// deepest first; a directory left empty goes from its parent, as git
// records none.
func (m *treeModel) writeTrees(pk *packer, touched map[string]bool) error {
	for d := range touched {
		for p := d; p != ""; {
			p = dirOf(p)
			touched[p] = true
		}
	}
	order := make([]string, 0, len(touched))
	for d := range touched {
		order = append(order, d)
	}
	depth := func(d string) int {
		if d == "" {
			return 0
		}
		return strings.Count(d, "/") + 1
	}
	sort.Slice(order, func(i, j int) bool { return depth(order[i]) > depth(order[j]) })
	var buf bytes.Buffer
	for _, d := range order {
		node := m.writable(d)
		if node == nil {
			continue
		}
		var id []byte
		if len(node.ents) > 0 || d == "" {
			buf.Reset()
			for _, e := range node.ents {
				buf.WriteString(strconv.FormatUint(uint64(e.mode), 8))
				buf.WriteByte(' ')
				buf.WriteString(e.name)
				buf.WriteByte(0)
				buf.Write(e.id)
			}
			id = pk.add(objTree, bytes.Clone(buf.Bytes()))
		}
		if d == "" {
			m.root = hex.EncodeToString(id)
			continue
		}
		parent := m.writable(dirOf(d))
		i := parent.find(path.Base(d))
		if i < 0 {
			return fmt.Errorf("the tree in memory lacks %s", d)
		}
		if id == nil {
			parent.ents = slices.Delete(parent.ents, i, i+1)
			delete(m.dirs, d)
			continue
		}
		parent.ents[i].id = id
	}
	return nil
}
