package fleet

import (
	"os"
	"sync"

	"github.com/laserkit/laserkit/internal/jsonl"
)

// seenIDs is what this process read of a run's events file: the ids of
// its events up to pos, in the file it read them from. The file only grows
// (every write appends under its lock), so the next append scans only
// what was added since; a file removed and made again (another inode), or
// shorter than what was read, is read again from its start.
type seenIDs struct {
	file os.FileInfo
	pos  jsonl.Pos
	ids  map[string]struct{}
}

// seenCache holds a seenIDs per events file, for a store a process keeps
// open (laserbrain run's broker answers every hook of its agent with one):
// a tool call's event costs its own line, not a read of the run's whole
// history.
type seenCache struct {
	mu    sync.Mutex
	files map[string]*seenIDs
}

// seenEvents marks in ids those an event of the file at path has (the
// caller holds the file's lock).
func (l *Local) seenEvents(path string, ids map[string]bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			l.seen.forget(path)
			return nil
		}
		return err
	}
	l.seen.mu.Lock()
	defer l.seen.mu.Unlock()
	c := l.seen.files[path]
	if c == nil || !os.SameFile(c.file, fi) || fi.Size() < c.pos.Off {
		c = &seenIDs{pos: jsonl.Start, ids: map[string]struct{}{}}
	}
	pos, err := jsonl.Scan(path, c.pos, func(line []byte, _ int) error {
		if id, ok := eventID(line); ok {
			c.ids[id] = struct{}{}
		}
		return nil
	})
	if err != nil {
		delete(l.seen.files, path)
		return err
	}
	c.file, c.pos = fi, pos
	if l.seen.files == nil {
		l.seen.files = map[string]*seenIDs{}
	}
	l.seen.files[path] = c
	for id := range ids {
		if _, ok := c.ids[id]; ok {
			ids[id] = true
		}
	}
	return nil
}

func (s *seenCache) forget(path string) {
	s.mu.Lock()
	delete(s.files, path)
	s.mu.Unlock()
}
