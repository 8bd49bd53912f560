package localstore

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Compact moves every run in the run log out of it and empties the log: a
// small run (under PackBelow, with no files of its own) into one new pack
// with the other small ones, any other run into its own files. Writers
// wait meanwhile; runs held open elsewhere stay held and go on saving into
// the new log.
//
// Each run's own history is cut back to its committed length and extended
// by its steps in the log (after its steps in a pack, for a run leaving
// one), copied a window at a time, its new state written beside the old,
// and both files closed before the next run; a packed run is held in
// memory only while its record is written. However many runs and steps the
// log holds, a compaction keeps a bounded buffer and three files open.
// Then every file written is made durable at once (one syncfs on Linux),
// the new pack and the states renamed into place, the directory synced,
// the packs folded into the new one removed, and the log replaced by an
// empty one. A crash at any point leaves each run readable: an unfinished
// pack has its temporary name and is not read; a folded pack goes only
// once the pack holding its runs is in place; the log is dropped last, and
// its records that are already in a pack or on file no longer chain and
// are passed over.
func (s *Store) Compact() error {
	return s.log.withLock(true, func() error {
		ids, err := s.log.ids()
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		// A fresh view of the packs: another process may have cut a
		// compaction short since this one last read them.
		if err := s.packs.load(-1); err != nil {
			return err
		}
		// Held as read for the whole compaction (writing its pack changes
		// the directory), read again after it.
		s.packs.pinned = true
		defer func() { s.packs.pinned, s.packs.loaded = false, false }()
		removeUnfinished(s.packs.dir)
		// Which runs have files of their own, read once: nobody makes one
		// while the lock is held exclusively.
		if s.onFile, err = listOnFile(s.runsDir); err != nil {
			return err
		}
		s.onFileGen = duringCompaction
		defer func() { s.onFile = nil }()
		c := &compaction{s: s, packsDir: s.packs.dir, sy: newSyncer(s.runsDir), moved: map[string]bool{}}
		defer func() {
			if c.pw != nil && !c.crashed {
				c.pw.abort()
			}
		}()
		for _, id := range ids {
			if err := c.move(id); err != nil {
				return err
			}
		}
		return c.finish()
	})
}

// compaction is one Compact as it goes: the pack it writes, the run files
// it will rename into place, and the runs it moved out of the log.
type compaction struct {
	s        *Store
	packsDir string
	sy       *syncer
	renames  [][2]string
	pw       *packWriter
	buf      []byte
	moved    map[string]bool
	crashed  bool // a test cut it short, as a crash would
}

func (c *compaction) stage(name string) error {
	err := compactStage(name)
	c.crashed = err != nil
	return err
}

// writer is the new pack, started at its first use.
func (c *compaction) writer() (*packWriter, error) {
	if c.pw == nil {
		pw, err := newPackWriter(c.packsDir, c.s.packs.nextSeq())
		if err != nil {
			return nil, err
		}
		c.pw = pw
	}
	return c.pw, nil
}

func (c *compaction) pack(id string, n int, steps, state []byte) error {
	pw, err := c.writer()
	if err != nil {
		return err
	}
	return pw.add(id, n, steps, state)
}

// move takes run id out of the log, if it is there: into the new pack
// when it is small, else into a file of its own.
func (c *compaction) move(id string) error {
	s := c.s
	st, err := s.locate(id)
	if err != nil {
		return err
	}
	if st == nil || !st.fromLog() {
		return nil
	}
	c.moved[id] = true
	if err := c.moveRun(id, st); err != nil {
		return fmt.Errorf("compact run %s: %w", id, err)
	}
	return nil
}

func (c *compaction) moveRun(id string, st *stored) error {
	s := c.s
	var err error
	if last := st.saves[0]; !st.onFile && st.packed == nil && len(st.saves) == 1 && last.steps+last.state < PackBelow {
		// A run saved once since it began, as a new run mostly is: its
		// steps and state, one after the other in the log, are read
		// together.
		if c.buf, err = s.log.body(last, c.buf); err != nil {
			return err
		}
		return c.pack(id, st.count, c.buf[:last.steps], bytes.TrimSuffix(c.buf[last.steps:], []byte("\n")))
	}
	if st.state, err = s.log.state(st.saves[len(st.saves)-1]); err != nil {
		return err
	}
	if !st.onFile && st.size() < PackBelow {
		if c.buf = c.buf[:0]; st.packed != nil {
			if c.buf, err = st.packed.appendSteps(c.buf); err != nil {
				return err
			}
		}
		w := bytes.NewBuffer(c.buf)
		if _, err := s.log.copySteps(st.saves, w); err != nil {
			return err
		}
		c.buf = w.Bytes()
		return c.pack(id, st.count, c.buf, st.state)
	}
	n, err := s.compactHistory(id, st, c.sy)
	if err != nil {
		return err
	}
	if st.packed != nil { // its records in the packs are no longer it
		pw, err := c.writer()
		if err != nil {
			return err
		}
		pw.leave(id)
	}
	tmp := s.runPath(id) + ".compact"
	data := append(append([]byte(`{"run":`), st.state...), `,"history_bytes":`...)
	data = append(strconv.AppendInt(data, n, 10), "}\n"...)
	if err := writeSynced(tmp, data, c.sy); err != nil {
		return err
	}
	c.renames = append(c.renames, [2]string{tmp, s.runPath(id)})
	return nil
}

// finish folds the newest packs into the new one, puts the pack and the
// run files in place, removes the folded packs and empties the log, each
// step durable before the next.
func (c *compaction) finish() error {
	s := c.s
	// The newest packs are folded into this one: each run's newest record
	// among them is copied over, unless the run was moved above or left
	// the packs; that it left is kept while an older pack may still hold
	// a record of it.
	fold := s.packs.toFold(s.log.size())
	if c.pw == nil {
		fold = nil // nothing new to pack: the packs stay as they are
	}
	keepGone := len(fold) < len(s.packs.packs)
	for k := len(fold) - 1; k >= 0; k-- {
		if err := fold[k].fold(c.pw, c.moved, keepGone); err != nil {
			return err
		}
	}
	if err := c.stage("pack records written"); err != nil {
		return err
	}
	if c.pw != nil {
		if err := c.pw.finish(c.sy); err != nil {
			return err
		}
		c.renames = append(c.renames, [2]string{c.pw.tmp, c.pw.path})
	}
	if err := c.sy.done(); err != nil {
		return err
	}
	if err := c.stage("pack written"); err != nil {
		return err
	}
	for _, r := range c.renames {
		if err := os.Rename(r[0], r[1]); err != nil {
			return err
		}
	}
	c.pw = nil
	if err := syncDir(s.runsDir); err != nil {
		return err
	}
	if len(fold) > 0 || len(c.renames) > 0 {
		if _, err := os.Stat(c.packsDir); err == nil {
			if err := syncDir(c.packsDir); err != nil {
				return err
			}
		}
	}
	if err := c.stage("pack in place"); err != nil {
		return err
	}
	for _, p := range fold {
		if err := os.Remove(p.path); err != nil {
			return err
		}
	}
	if err := c.stage("folded packs removed"); err != nil {
		return err
	}
	return s.log.replaceWithEmpty()
}

// compactCrashAt is where a test cuts a compaction short, as a crash would
// (leaving what is on disk as it is); nil in use.
var compactCrashAt func(stage string) bool

func compactStage(stage string) error {
	if compactCrashAt != nil && compactCrashAt(stage) {
		return fmt.Errorf("compaction cut short at %q", stage)
	}
	return nil
}

// compactHistory extends run id's history file by its steps in the log
// and returns the file's committed length after them.
func (s *Store) compactHistory(id string, st *stored, sy *syncer) (int64, error) {
	n := st.historyBytes
	hf, err := os.OpenFile(s.historyPath(id), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer hf.Close()
	// Cut back only a file longer than its committed length: ext4 flushes
	// a file truncated to zero when it is closed.
	if fi, err := hf.Stat(); err != nil {
		return 0, err
	} else if fi.Size() != n {
		if err := hf.Truncate(n); err != nil {
			return 0, err
		}
	}
	if _, err := hf.Seek(n, 0); err != nil {
		return 0, err
	}
	if st.packed != nil { // leaving its pack: its steps there first
		steps, err := st.packed.appendSteps(nil)
		if err != nil {
			return 0, err
		}
		if _, err := hf.Write(steps); err != nil {
			return 0, err
		}
		n += int64(len(steps))
	}
	copied, err := s.log.copySteps(st.saves, hf)
	if err != nil {
		return 0, err
	}
	if err := sy.add(hf); err != nil {
		return 0, err
	}
	return n + copied, hf.Close()
}

// writeSynced writes a new file at path, made durable through sy.
func writeSynced(path string, data []byte, sy *syncer) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := sy.add(f); err != nil {
		return err
	}
	return f.Close()
}

// listOnFile lists the runs in dir that have files of their own.
func listOnFile(dir string) (map[string]bool, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".json"); ok {
			out[id] = true
		}
	}
	return out, nil
}
