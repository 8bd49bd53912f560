// Package firstuse holds values built the first time they are needed.
//
// sync.OnceValue does the same, but calling it is work done at package
// init (it allocates the closure and its state), paid by every process
// that links the package; a hook runs as a process per tool call. A
// Value is a plain struct, so a package-level one is laid out by the
// compiler and its package init does nothing for it.
package firstuse
