package slotfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync waits for f's data (not its times) to reach the disk.
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
