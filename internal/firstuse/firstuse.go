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
