package localstore

import (
	"fmt"
	"os"
	"strconv"
)

// Compact writes every run in the run log to its own files and empties
// the log. Writers wait meanwhile; runs held open elsewhere stay held and
// go on saving into the new log.
//
// Each run's history is cut back to its committed length and extended by
// its steps in the log, copied a window at a time, its new state written
// beside the old, and both files closed before the next run: however many
// runs and steps the log holds, a compaction keeps a bounded buffer and two
// files open. Then every file written is made durable at once (one syncfs
// on Linux), the states renamed into place, the directory synced, and the
// log replaced by an empty one. A crash at any point leaves each run
// readable: the log is dropped last, and its records that are already on
// file no longer chain onto the files and are passed over.
func (s *Store) Compact() error {
	return s.log.withLock(true, func() error {
		ids, err := s.log.ids()
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		sy := newSyncer(s.runsDir)
		var renames [][2]string
		for _, id := range ids {
			st, err := s.lookup(id)
			if err != nil {
				return err
			}
			if st == nil || !st.fromLog() {
				continue
			}
			n, err := s.compactHistory(id, st, sy)
			if err != nil {
				return fmt.Errorf("compact run %s: %w", id, err)
			}
			tmp := s.runPath(id) + ".compact"
			data := append(append([]byte(`{"run":`), st.state...), `,"history_bytes":`...)
			data = append(strconv.AppendInt(data, n, 10), "}\n"...)
			if err := writeSynced(tmp, data, sy); err != nil {
				return fmt.Errorf("compact run %s: %w", id, err)
			}
			renames = append(renames, [2]string{tmp, s.runPath(id)})
		}
		if err := sy.done(); err != nil {
			return err
		}
		for _, r := range renames {
			if err := os.Rename(r[0], r[1]); err != nil {
				return err
			}
		}
		if err := syncDir(s.runsDir); err != nil {
			return err
		}
		return s.log.replaceWithEmpty()
	})
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
	if err := hf.Truncate(n); err != nil {
		return 0, err
	}
	if _, err := hf.Seek(n, 0); err != nil {
		return 0, err
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
