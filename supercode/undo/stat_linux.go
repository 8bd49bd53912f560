package undo

import (
	"os"
	"syscall"
)

// changeTime is the entry's ctime, which every write, rename, link count
// and mode change sets to the clock and nothing sets back.
func changeTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}

// fineTimes: the file system holding dir keeps times to the nanosecond,
// so two writes a tick of the kernel's clock apart leave different times
// (the magic numbers of statfs(2): ext2/3/4, XFS, Btrfs, tmpfs, overlayfs,
// F2FS, ZFS).
func fineTimes(dir string) bool {
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) != nil {
		return false
	}
	switch uint32(fs.Type) {
	case 0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x794C7630, 0xF2F52010, 0x2FC12FC1:
		return true
	}
	return false
}
