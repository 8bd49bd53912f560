// Package scan enumerates the files of an audit's scope: the tracked files of
// a git work tree (git ls-files -z), or a recursive walk outside one. Paths
// come back relative to the scanned directory, with '/', sorted bytewise.
package scan
