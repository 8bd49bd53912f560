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
		packsDir := s.packs.dir
		if err := s.packs.load(-1); err != nil {
			return err
		}
		// Held as read for the whole compaction (writing its pack changes
		// the directory), read again after it.
		s.packs.pinned = true
		defer func() { s.packs.pinned, s.packs.loaded = false, false }()
		removeUnfinished(packsDir)
		// Which runs have files of their own, read once: nobody makes one
		// while the lock is held exclusively.
		if s.onFile, err = listOnFile(s.runsDir); err != nil {
			return err
		}
		s.onFileGen = duringCompaction
		defer func() { s.onFile = nil }()
		sy := newSyncer(s.runsDir)
		var (
			renames [][2]string
			pw      *packWriter
			buf     []byte
			moved   = map[string]bool{}
			crashed bool
		)
		defer func() {
			if pw != nil && !crashed {
				pw.abort()
			}
		}()
		stage := func(name string) error {
			err := compactStage(name)
			crashed = err != nil
			return err
		}
		toPack := func(id string, n int, steps, state []byte) error {
			if pw == nil {
				if pw, err = newPackWriter(packsDir, s.packs.nextSeq()); err != nil {
					return err
				}
			}
			return pw.add(id, n, steps, state)
		}
		for _, id := range ids {
			st, err := s.locate(id)
			if err != nil {
				return err
			}
			if st == nil || !st.fromLog() {
				continue
			}
			moved[id] = true
			if last := st.saves[0]; !st.onFile && st.packed == nil && len(st.saves) == 1 && last.steps+last.state < PackBelow {
				// A run saved once since it began, as a new run mostly
				// is: its steps and state, one after the other in the
				// log, are read together.
				if buf, err = s.log.body(last, buf); err != nil {
					return fmt.Errorf("compact run %s: %w", id, err)
				}
				if err := toPack(id, st.count, buf[:last.steps], bytes.TrimSuffix(buf[last.steps:], []byte("\n"))); err != nil {
					return fmt.Errorf("compact run %s: %w", id, err)
				}
				continue
			}
			if st.state, err = s.log.state(st.saves[len(st.saves)-1]); err != nil {
				return fmt.Errorf("compact run %s: %w", id, err)
			}
			if !st.onFile && st.size() < PackBelow {
				if buf = buf[:0]; st.packed != nil {
					if buf, err = st.packed.appendSteps(buf); err != nil {
						return fmt.Errorf("compact run %s: %w", id, err)
					}
				}
				w := bytes.NewBuffer(buf)
				if _, err := s.log.copySteps(st.saves, w); err != nil {
					return fmt.Errorf("compact run %s: %w", id, err)
				}
				buf = w.Bytes()
				if err := toPack(id, st.count, buf, st.state); err != nil {
					return fmt.Errorf("compact run %s: %w", id, err)
				}
				continue
			}
			n, err := s.compactHistory(id, st, sy)
			if err != nil {
				return fmt.Errorf("compact run %s: %w", id, err)
			}
			if st.packed != nil { // its records in the packs are no longer it
				if pw == nil {
					if pw, err = newPackWriter(packsDir, s.packs.nextSeq()); err != nil {
						return err
					}
				}
				pw.leave(id)
			}
			tmp := s.runPath(id) + ".compact"
			data := append(append([]byte(`{"run":`), st.state...), `,"history_bytes":`...)
			data = append(strconv.AppendInt(data, n, 10), "}\n"...)
			if err := writeSynced(tmp, data, sy); err != nil {
				return fmt.Errorf("compact run %s: %w", id, err)
			}
			renames = append(renames, [2]string{tmp, s.runPath(id)})
		}
		// The newest packs are folded into this one: each run's newest
		// record among them is copied over, unless the run was moved above
		// or left the packs; that it left is kept while an older pack may
		// still hold a record of it.
		fold := s.packs.toFold(s.log.size())
		if pw == nil {
			fold = nil // nothing new to pack: the packs stay as they are
		}
		keepGone := len(fold) < len(s.packs.packs)
		for k := len(fold) - 1; k >= 0; k-- {
			if err := fold[k].fold(pw, moved, keepGone); err != nil {
				return err
			}
		}
		if err := stage("pack records written"); err != nil {
			return err
		}
		if pw != nil {
			if err := pw.finish(sy); err != nil {
				return err
			}
			renames = append(renames, [2]string{pw.tmp, pw.path})
		}
		if err := sy.done(); err != nil {
			return err
		}
		if err := stage("pack written"); err != nil {
			return err
		}
		for _, r := range renames {
			if err := os.Rename(r[0], r[1]); err != nil {
				return err
			}
		}
		pw = nil
		if err := syncDir(s.runsDir); err != nil {
			return err
		}
		if len(fold) > 0 || len(renames) > 0 {
			if _, err := os.Stat(packsDir); err == nil {
				if err := syncDir(packsDir); err != nil {
					return err
				}
			}
		}
		if err := stage("pack in place"); err != nil {
			return err
		}
		for _, p := range fold {
			if err := os.Remove(p.path); err != nil {
				return err
			}
		}
		if err := stage("folded packs removed"); err != nil {
			return err
		}
		return s.log.replaceWithEmpty()
	})
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
