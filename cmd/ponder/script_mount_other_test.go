//go:build !linux

package main

import "github.com/rogpeppe/go-internal/testscript"

func probeTmpfs() string { return "mounting a tmpfs is Linux-only" }

func cmdTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("tmpfs: Linux only; guard the script with [tmpfs]")
}
