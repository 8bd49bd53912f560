//go:build !linux

package slotfile

import "os"

// datasync waits for f to reach the disk.
func datasync(f *os.File) error { return f.Sync() }
