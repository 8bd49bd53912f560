// Package firstuse holds values built the first time they are needed.
//
// sync.OnceValue does the same, but calling it is work done at package
// init (it allocates the closure and its state), paid by every process
// that links the package; a hook runs as a process per tool call. A
// Value is a plain struct, so a package-level one is laid out by the
// compiler and its package init does nothing for it.
package firstuse

import "sync"

// Value is a value built by New on the first Get. Declare it at package
// level with New set, and do not copy it after first use.
type Value[T any] struct {
	once sync.Once
	New  func() T
	v    T
}

// Get is the value, built on the first call; calls from several goroutines
// wait for the one building it.
func (l *Value[T]) Get() T {
	l.once.Do(func() { l.v = l.New() })
	return l.v
}
