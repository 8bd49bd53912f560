package laserbrain

import "sync"

// onceValue is a value computed on first use, as sync.OnceValue computes
// one, but free until then: a package var holding sync.OnceValue(f)
// allocates its closures in the package's init, in every process, and a
// hook process is one per tool call. The zero onceValue is ready, and get's
// f is a static function, so declaring one costs nothing.
//
// Unlike sync.OnceValue, a panic in f is not repeated by later calls; these
// values are compiled patterns and embedded data, whose f does not fail.
type onceValue[T any] struct {
	once sync.Once
	v    T
}

// get returns the value, computing it with f on the first call.
func (o *onceValue[T]) get(f func() T) T {
	o.once.Do(func() { o.v = f() })
	return o.v
}
