// Package scan enumerates the files of an audit's scope — what is on disk:
// inside a git work tree the files git does not ignore, tracked or not (git
// ls-files --cached --others --exclude-standard -z), else a recursive walk.
// Paths come back relative to the scanned directory, with '/', as the
// file system's bytes (not necessarily UTF-8), sorted bytewise. It also
// asks git what it knows of names no longer on disk (Known, Hashes): a
// file in the last commit or the index existed, which is what tells a
// rename from a phantom.
package scan
