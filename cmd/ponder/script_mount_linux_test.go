//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// probeTmpfs says why a tiny tmpfs cannot be mounted here ("" when it can),
// by mounting and unmounting one.
func probeTmpfs() string {
	if os.Geteuid() != 0 {
		return "not root (mounting a tmpfs needs root)"
	}
	dir, err := os.MkdirTemp("", "ponder-tmpfs-probe")
	if err != nil {
		return err.Error()
	}
	defer os.Remove(dir)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		return fmt.Sprintf("mount(2) refused: %v", err)
	}
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
		return fmt.Sprintf("umount(2) refused: %v", err)
	}
	return ""
}

// tmpfs DIR SIZE: mount a tmpfs of SIZE (e.g. 256k) on DIR, unmounted when
// the script ends. Scripts guard it with [tmpfs].
func cmdTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: tmpfs DIR SIZE")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+args[1]); err != nil {
		ts.Fatalf("mount tmpfs on %s: %v", filepath.Base(dir), err)
	}
	ts.Defer(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
}
