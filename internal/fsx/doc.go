// Package fsx holds the two file-system disciplines every store here follows:
// a file is replaced whole or not at all (temp file, fsync, rename, fsync of
// the directory), and two processes that can meet on the same files take an
// advisory lock first.
package fsx
