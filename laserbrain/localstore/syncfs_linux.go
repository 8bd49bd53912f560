package localstore

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncer makes a compaction's files durable together: on Linux with one
// syncfs of their file system when they are all written — a compaction
// writes two files per run, and one flush of the file system costs a
// fraction of hundreds of fsyncs (measured in BenchmarkNewRuns) — so each
// file can be closed as soon as it is written.
type syncer struct {
	dir   string
	wrote bool
}

func newSyncer(dir string) *syncer { return &syncer{dir: dir} }

// add notes a written file (still open).
func (s *syncer) add(*os.File) error { s.wrote = true; return nil }

// done makes every file added durable.
func (s *syncer) done() error {
	if !s.wrote {
		return nil
	}
	d, err := os.Open(s.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", s.dir, err)
	}
	return nil
}
