// Package tty answers one question — is this stream a terminal? — without
// (*os.File).Fd, which puts the file in blocking mode for good: a read
// from it could then no longer be cancelled (the loop's interpreter
// cancels its reads of standard input), and the mode is shared with every
// process holding the same open file.
package tty
