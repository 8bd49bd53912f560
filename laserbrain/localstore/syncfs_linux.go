package localstore

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncFiles makes files durable with one syncfs of their file system: a
// compaction writes two files per run, and one flush of the file system
// costs a fraction of hundreds of fsyncs (measured in BenchmarkNewRuns).
func syncFiles(files []*os.File) error {
	if len(files) == 0 {
		return nil
	}
	if err := unix.Syncfs(int(files[0].Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", files[0].Name(), err)
	}
	return nil
}
