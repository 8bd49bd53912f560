package tty

import (
	"os"

	"golang.org/x/term"
)

// Is reports whether v (a reader or writer) is a file on a terminal.
// Pipes, regular files, /dev/null and anything that is not an *os.File are
// not.
func Is(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	is := false
	_ = rc.Control(func(fd uintptr) { is = term.IsTerminal(int(fd)) })
	return is
}
