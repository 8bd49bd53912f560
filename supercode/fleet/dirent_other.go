//go:build !linux

package fleet

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
)

// anyVisible reports whether dir holds a name that does not begin with a
// dot (a missing dir holds none).
func anyVisible(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(16)
		for _, n := range names {
			if !strings.HasPrefix(n, ".") {
				return true, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}
