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
// Each run's history is cut back to its committed length and extended,
// its new state written beside the old; then every file written is synced
// at once (one syncfs on Linux), the states renamed into place, the
// directory synced, and the log replaced by an empty one. A crash at any point leaves each run
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
		var files []*os.File
		defer func() {
			for _, f := range files {
				f.Close()
			}
		}()
		var renames [][2]string
		for _, id := range ids {
			st, err := s.lookup(id, true)
			if err != nil {
				return err
			}
			if st == nil || !st.fromLog {
				continue
			}
			n := st.historyBytes
			if len(st.logSteps) > 0 {
				hf, err := os.OpenFile(s.historyPath(id), os.O_WRONLY|os.O_CREATE, 0o644)
				if err != nil {
					return err
				}
				files = append(files, hf)
				buf := st.logSteps
				if err := hf.Truncate(n); err != nil {
					return fmt.Errorf("compact run %s: %w", id, err)
				}
				if _, err := hf.WriteAt(buf, n); err != nil {
					return fmt.Errorf("compact run %s: %w", id, err)
				}
				n += int64(len(buf))
			}
			tmp := s.runPath(id) + ".compact"
			sf, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			files = append(files, sf)
			data := append(append([]byte(`{"run":`), st.state...), `,"history_bytes":`...)
			data = append(strconv.AppendInt(data, n, 10), "}\n"...)
			if _, err := sf.Write(data); err != nil {
				return fmt.Errorf("compact run %s: %w", id, err)
			}
			renames = append(renames, [2]string{tmp, s.runPath(id)})
		}
		if err := syncFiles(files); err != nil {
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
