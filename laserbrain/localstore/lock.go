package localstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
)

// The reference guards contexts.json with a marker file created with
// O_CREAT|O_EXCL next to it (contexts.json.lock), polled every 5 ms, and
// steals a marker older than 10 s. Taking the same marker lets a Python
// process and this one share the file. Our own processes first take an
// advisory lock, so among themselves they queue on the kernel and never
// wait out a steal.
const (
	markerPoll  = 5 * time.Millisecond
	markerStale = 10 * time.Second
)

// lockShared takes both locks for path and returns the release function.
func lockShared(path string) (func(), error) {
	fl, err := fsx.LockFile(path+".flock", LockTimeout)
	if err != nil {
		return nil, err
	}
	marker := path + ".lock"
	deadline := time.Now().Add(LockTimeout + markerStale)
	for {
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(marker); fl.Unlock() }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			fl.Unlock()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if fi, statErr := os.Stat(marker); statErr == nil && (time.Since(fi.ModTime()) > markerStale || markerDead(marker)) {
			os.Remove(marker) // abandoned by a process that died holding it
			continue
		}
		if time.Now().After(deadline) {
			fl.Unlock()
			return nil, fmt.Errorf("lock %s: %s is held by another process", path, marker)
		}
		time.Sleep(markerPoll)
	}
}

// markerDead reports whether the process that wrote a marker (its pid,
// the marker's first line, as both this package and the reference write
// it) is gone from this machine: the marker is abandoned now, and a hook
// need not wait out markerStale for it. A marker without a readable pid is
// left to markerStale.
func markerDead(marker string) bool {
	b, err := os.ReadFile(marker)
	if err != nil {
		return false
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

func stampOf(fi fs.FileInfo) fileStamp {
	st := fileStamp{mod: fi.ModTime(), size: fi.Size()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = uint64(sys.Ino)
	}
	return st
}
