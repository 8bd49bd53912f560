package undo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/internal/jsonl"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// Kind is what a checkpoint stands before.
type Kind string

// The kinds of checkpoint.
const (
	// KindStart is the run's start, before the agent's first call.
	KindStart Kind = "start"
	// KindCall stands before one call that may write.
	KindCall Kind = "call"
	// KindUndo stands before an undo: undoing it takes the undo back.
	KindUndo Kind = "undo"
	// KindEnd is the state a run (or an undo) left: nothing follows it.
	KindEnd Kind = "end"
)

// Record is one checkpoint of a run: what it stands before, and the state
// of the work tree it recorded, by the names the work tree's part of the
// store keeps it under.
type Record struct {
	// Seq is the checkpoint's place in its run's list: #1 is the first.
	Seq  int       `json:"seq"`
	Kind Kind      `json:"kind"`
	At   time.Time `json:"at"`
	// Call is the call's id (its tool_use_id) when the client gave one,
	// Tool its tool, What its command lines or files (an undo: its command).
	Call string `json:"call,omitempty"`
	Tool string `json:"tool,omitempty"`
	What string `json:"what,omitempty"`
	// Repo is the work tree's top, Key its part of the store.
	Repo string `json:"repo"`
	Key  string `json:"key"`
	// Tree is the work tree as a git tree: tracked files as they are on
	// disk, untracked files that are not ignored, and the named data.
	Tree string `json:"tree"`
	// Index is the repository's index (staged changes) as a tree, "" when
	// it has none or it could not be read (Note says why).
	Index string `json:"index,omitempty"`
	// Refs names the ref set (HEAD, every branch, tag and other ref but
	// laserbrain's own), Stash the stash list ("" when empty).
	Refs  string `json:"refs"`
	Stash string `json:"stash,omitempty"`
	// Data are the ignored paths the project policy named for it.
	Data []string `json:"data,omitempty"`
	// Changed is what changed since checkpoint #Since of the same run, the
	// work tree's previous one: what the call it stood before did (its
	// paths capped at MaxListed a kind). nil when the previous checkpoint
	// of the work tree was another run's.
	Changed *Change `json:"changed,omitempty"`
	Since   int     `json:"since,omitempty"`
	// Note says what the checkpoint could not record.
	Note string `json:"note,omitempty"`
}

// Same reports whether two checkpoints recorded the same state: files,
// named data, staged changes, refs and stash.
func (r Record) Same(o Record) bool {
	return r.Key == o.Key && r.Tree == o.Tree && r.Index == o.Index && r.Refs == o.Refs && r.Stash == o.Stash
}

func (s *Store) runPath(run string) string { return filepath.Join(s.Dir, "runs", run+".jsonl") }

// appendRecord adds a checkpoint to its run's list, one line, numbered
// after the last; a line a killed writer left unfinished is cut first.
func (s *Store) appendRecord(run string, rec *Record) error {
	if err := fleet.ValidateRunID(run); err != nil {
		return err
	}
	p := s.runPath(run)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	lock, err := fsx.LockFile(p+".lock", LockTimeout)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if err := jsonl.CutTorn(p); err != nil {
		return err
	}
	n, err := s.count(p)
	if err != nil {
		return err
	}
	rec.Seq = n + 1
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	if fi, err := os.Stat(p); err == nil {
		// Fixed width, written in place: a torn write leaves a size that
		// is not the list's, and count reads the list instead.
		_ = writeInPlace(p+".seq", []byte(fmt.Sprintf("%020d %020d\n", rec.Seq, fi.Size())))
	}
	return nil
}

// count is how many checkpoints the run's list holds: what its .seq file
// says when the list is the size it noted, else counted.
func (s *Store) count(p string) (int, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n int
	var size int64
	if b, err := os.ReadFile(p + ".seq"); err == nil {
		if _, err := fmt.Sscanf(string(b), "%d %d", &n, &size); err == nil && size == fi.Size() {
			return n, nil
		}
	}
	n = 0
	_, err = jsonl.Scan(p, jsonl.Start, func([]byte, int) error { n++; return nil })
	return n, err
}

// CallName names the call a checkpoint stands before, as undo --to takes
// it: its id, else its place in the run's list (#N).
func CallName(r Record) string {
	if r.Call != "" {
		return r.Call
	}
	return fmt.Sprintf("#%d", r.Seq)
}

// Command is the command that goes back to before a checkpoint's call.
func Command(run string, r Record) string {
	return fmt.Sprintf("laserbrain undo --run %s --to %s", run, CallName(r))
}

func nowUTC() time.Time { return time.Now().UTC() }

// ErrNoCheckpoints: the run has no checkpoint in this store.
var ErrNoCheckpoints = errors.New("no checkpoints")

// Records are a run's checkpoints, in the order they were taken.
func (s *Store) Records(run string) ([]Record, error) {
	if err := fleet.ValidateRunID(run); err != nil {
		return nil, err
	}
	recs, err := jsonl.ReadAll[Record](s.runPath(run))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(recs) == 0) {
		return nil, fmt.Errorf("run %s: %w in %s", run, ErrNoCheckpoints, s.Dir)
	}
	return recs, err
}
