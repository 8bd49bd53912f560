//go:build !unix

package undo

import "os"

func inode(os.FileInfo) uint64 { return 0 }

func links(os.FileInfo) uint64 { return 1 }
