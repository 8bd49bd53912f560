//go:build !linux

package localstore

import "github.com/gofrs/flock"

// logLock is the run log's lock (runs/log.lock).
type logLock struct{ *flock.Flock }

func newLogLock(path string) *logLock { return &logLock{flock.New(path)} }

func (l *logLock) close() {}
