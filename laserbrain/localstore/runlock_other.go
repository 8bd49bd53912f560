//go:build !linux

package localstore

import (
	"path/filepath"
	"time"

	"github.com/laserkit/laserkit/internal/fsx"
)

// runLock holds one run against every other holder: elsewhere than Linux,
// an advisory lock on runs/<id>.lock (a file per run).
type runLock struct{ l *fsx.Lock }

func lockRun(dir, id string, timeout time.Duration) (*runLock, error) {
	l, err := fsx.LockFile(filepath.Join(dir, id+".lock"), timeout)
	if err != nil {
		return nil, err
	}
	return &runLock{l: l}, nil
}

// Unlock releases the run.
func (l *runLock) Unlock() error { return l.l.Unlock() }
