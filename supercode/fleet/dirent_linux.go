package fleet

import (
	"io/fs"
	"strings"
	"syscall"
)

// anyVisible reports whether dir holds a name that does not begin with a
// dot (a missing dir holds none). Every gate call asks it of the halts in
// force, so it reads the directory with plain system calls into a buffer
// of its own: os.Open would register the directory with the runtime's
// poller first, and Readdirnames takes an 8 KB buffer from a pool, both
// costs a process that asks once pays in full.
func anyVisible(dir string) (bool, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err == syscall.ENOENT {
		return false, nil
	}
	if err != nil {
		return false, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(fd)
	var buf [2048]byte
	var names [16]string
	for {
		n, err := syscall.Getdents(fd, buf[:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false, &fs.PathError{Op: "getdents", Path: dir, Err: err}
		}
		if n == 0 {
			return false, nil
		}
		_, _, found := syscall.ParseDirent(buf[:n], -1, names[:0])
		for _, name := range found {
			if !strings.HasPrefix(name, ".") {
				return true, nil
			}
		}
	}
}
