//go:build !linux

package undo

import "os"

func changeTime(os.FileInfo) int64 { return 0 }

// fineTimes: only Linux's file systems are known here; elsewhere every
// checkpoint runs git add.
func fineTimes(string) bool { return false }
