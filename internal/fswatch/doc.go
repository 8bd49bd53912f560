// Package fswatch turns changes under a few directory trees into one
// coalescing signal, through the kernel's file notifications (fsnotify):
// a reader that must follow files other processes write wakes when they
// change instead of reading them again on a timer. A tree that does not
// exist yet is picked up when it is created.
package fswatch
