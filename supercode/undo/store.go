package undo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/laserbrain/localstore"
)

// waitDelay bounds how long a git process killed at its context's end may
// hold its pipes.
const waitDelay = time.Second

// LockTimeout is how long a checkpoint waits for another one of the same
// work tree (two hooks of one run, two runs on one repository).
var LockTimeout = 10 * time.Second

// Store is where checkpoints live: a directory of the laserbrain home,
// which a confined agent cannot write. Per work tree it keeps an object
// store of its own (a bare git repository holding every object a
// checkpoint needs, so nothing done to the work tree's repository takes
// one), the private index its snapshots are made through, and the ref sets
// and stash lists it read; per run, the run's checkpoints in order.
type Store struct {
	Dir string
}

// DefaultDir is the store's directory in the laserbrain home.
func DefaultDir() (string, error) { return localstore.InHome("undo") }

// Default is the store in the laserbrain home.
func Default() (*Store, error) {
	d, err := DefaultDir()
	if err != nil {
		return nil, err
	}
	return &Store{Dir: d}, nil
}

func (s *Store) repoDir(key string) string { return filepath.Join(s.Dir, "repos", key) }

func lstat(top, p string) (os.FileInfo, error) {
	return os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
}

// repoKey names a work tree's part of the store.
func repoKey(top string) string {
	sum := sha256.Sum256([]byte(top))
	return hex.EncodeToString(sum[:8])
}

// repoStore is one work tree's part of the store, held under its lock.
type repoStore struct {
	repo Repo
	key  string
	dir  string // <store>/repos/<key>
	lock *fsx.Lock
	// exclude is the laserbrain home, relative to the work tree's top,
	// when it lies inside it: a snapshot never records the store itself.
	exclude string
}

func (r *repoStore) gitDir() string    { return filepath.Join(r.dir, "git") }
func (r *repoStore) indexPath() string { return filepath.Join(r.dir, "index") }

// own is git on the store's own repository.
func (r *repoStore) own(env ...string) gitRun {
	return gitRun{dir: r.dir, env: append([]string{"GIT_DIR=" + r.gitDir()}, env...)}
}

// tree is git on the store's repository with the work tree and the private
// index: what snapshots and restores the files.
func (r *repoStore) tree() gitRun {
	g := r.own("GIT_WORK_TREE="+r.repo.Top, "GIT_INDEX_FILE="+r.indexPath())
	g.dir = r.repo.Top // paths are the work tree's, from its top
	return g
}

// theirs is git on the work tree's own repository.
func (r *repoStore) theirs(env ...string) gitRun {
	return gitRun{dir: r.repo.Top, env: append([]string{"GIT_DIR=" + r.repo.GitDir, "GIT_WORK_TREE=" + r.repo.Top}, env...)}
}

// open takes the work tree's lock, creating its part of the store the
// first time.
func (s *Store) open(ctx context.Context, repo Repo) (*repoStore, error) {
	key := repoKey(repo.Top)
	r := &repoStore{repo: repo, key: key, dir: s.repoDir(key)}
	lock, err := fsx.LockFile(filepath.Join(r.dir, "lock"), LockTimeout)
	if err != nil {
		return nil, err
	}
	r.lock = lock
	if rel, err := filepath.Rel(repo.Top, filepath.Dir(s.Dir)); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		r.exclude = filepath.ToSlash(rel)
	}
	if err := r.init(ctx); err != nil {
		_ = lock.Unlock()
		return nil, err
	}
	// A git this store ran and that was killed (a hook's deadline) can
	// leave its lock behind; nothing else writes here while we hold ours.
	_ = os.Remove(r.indexPath() + ".lock")
	return r, nil
}

func (r *repoStore) close() { _ = r.lock.Unlock() }

// storeAttributes makes every file go into the store and come back out as
// its bytes are: no end-of-line conversion, filter or encoding, whatever
// the work tree's .gitattributes say (the store's info/attributes wins).
const storeAttributes = "* -text -filter -ident -working-tree-encoding -crlf\n"

// storeConfig is the store repository's own configuration, beside what
// git init writes.
const storeConfig = `[core]
	logAllRefUpdates = false
	autocrlf = false
	safecrlf = false
	symlinks = true
	fileMode = true
	untrackedCache = false
[gc]
	auto = 0
[maintenance]
	auto = false
[uploadpack]
	allowAnySHA1InWant = true
`

// init creates the store's repository for the work tree, in the object
// format of the work tree's own.
func (r *repoStore) init(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(r.gitDir(), "info", "attributes")); err == nil {
		return nil
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(r.dir, "git-new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	format, err := r.theirs().out(ctx, "rev-parse", "--show-object-format")
	if err != nil {
		return err
	}
	if _, err := (gitRun{dir: r.dir}).out(ctx, "init", "-q", "--bare", "--template=", "--object-format="+strings.TrimSpace(string(format)), tmp); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(tmp, "config"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(storeConfig)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	if err := os.MkdirAll(filepath.Join(tmp, "info"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "info", "attributes"), []byte(storeAttributes), 0o644); err != nil {
		return err
	}
	meta, _ := json.MarshalIndent(r.repo, "", "  ")
	if err := fsx.WriteFile(filepath.Join(r.dir, "repo.json"), append(meta, '\n'), 0o644); err != nil {
		return err
	}
	_ = os.RemoveAll(r.gitDir()) // a half-made store of a process killed before
	return os.Rename(tmp, r.gitDir())
}

// putBlob keeps data in the store's directory kind under its SHA-256 and
// returns that name.
func (r *repoStore) putBlob(kind string, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	id := hex.EncodeToString(sum[:])
	p := filepath.Join(r.dir, kind, id)
	if _, err := os.Stat(p); err == nil {
		return id, nil
	}
	return id, writeAtomic(p, data)
}

func (r *repoStore) getBlob(kind, id string) ([]byte, error) {
	if id == "" {
		return nil, nil
	}
	return os.ReadFile(filepath.Join(r.dir, kind, id))
}

// fileStat is what tells a file changed without reading it.
type fileStat struct {
	Size  int64 `json:"size"`
	MTime int64 `json:"mtime_ns"`
	Ino   uint64
	Gone  bool `json:"gone,omitempty"`
}

func statOf(path string) fileStat {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{Gone: true}
	}
	return fileStat{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Ino: inode(fi)}
}

// state is what the last checkpoint of a work tree found, so the next one
// does only what changed since.
type state struct {
	Tree     string   `json:"tree"`
	Index    string   `json:"index"`
	IndexAt  fileStat `json:"index_stat"`
	Refs     string   `json:"refs"`
	Stash    string   `json:"stash"`
	Exclude  fileStat `json:"exclude_stat"`
	Included []string `json:"included,omitempty"` // named data the private index tracks
	// Quiet tells that the work tree has not changed since the last git
	// add without running git (nil: run it).
	Quiet *quiet `json:"quiet,omitempty"`
	// IndexBehind: the tree was written from a watch's paths, not through
	// the private index, which still holds an earlier state.
	IndexBehind bool `json:"index_behind,omitempty"`
	// Last is the work tree's last checkpoint, of run LastRun.
	Last    Record `json:"last"`
	LastRun string `json:"last_run,omitempty"`
}

func (r *repoStore) loadState() (state, error) {
	var st state
	b, err := os.ReadFile(filepath.Join(r.dir, "state.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if body, ok := sealed(b); ok {
		b = body
	}
	if err := json.Unmarshal(b, &st); err != nil {
		// A damaged state costs a full snapshot, never a wrong one.
		return state{}, nil
	}
	return st, nil
}

func (r *repoStore) saveState(st state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return writeInPlace(filepath.Join(r.dir, "state.json"), seal(b))
}

// seal is a one-line JSON document followed by a line of its SHA-256, so
// that a state written over in place and torn reads as damaged.
func seal(doc []byte) []byte {
	sum := sha256.Sum256(doc)
	out := append(append(make([]byte, 0, len(doc)+66), doc...), '\n')
	out = hex.AppendEncode(out, sum[:])
	return append(out, '\n')
}

// sealed is the document seal wrapped, when b is one and its sum holds;
// ok is false for anything else (an earlier version's plain JSON, which
// its parse then judges; a torn write, which no parse takes: the sum line
// is not JSON).
func sealed(b []byte) ([]byte, bool) {
	doc, rest, found := bytes.Cut(b, []byte{'\n'})
	if !found || len(rest) != 65 || rest[64] != '\n' {
		return nil, false
	}
	sum := sha256.Sum256(doc)
	if hex.EncodeToString(sum[:]) != string(rest[:64]) {
		return []byte("torn"), true
	}
	return doc, true
}

// writeInPlace writes data over the file at path from its start and cuts
// it there: a file the work tree's lock guards, rewritten at every
// checkpoint, whose readers tell a torn one (a crash of the machine
// mid-write) from a whole one. It spares the new inode a write through a
// rename costs on every call (the file system's inode allocation, under
// churn, is most of a quiet checkpoint's time).
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	}
	if err != nil {
		return err
	}
	_, werr := f.WriteAt(data, 0)
	if werr == nil {
		werr = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// writeAtomic replaces path with data through a rename, without a sync: a
// checkpoint's files are as durable as the objects git writes beside them
// (which git does not sync either), and a hook does not wait on the disk.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}
