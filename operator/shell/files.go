package shell

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// openNoBlock opens a file for reading without blocking on a FIFO or a
// device that never answers (the analysis has a time budget).
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

func limitReader(r io.Reader, n int64) io.Reader { return io.LimitReader(r, n) }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func fmtSscan(s string, v any) (int, error) { return fmt.Sscan(s, v) }
