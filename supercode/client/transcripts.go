package client

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// ClaudeTranscripts reads the transcripts of a run's Claude Code sessions
// for laserbrain run's process, which asks about them at every tool call
// while a budget is held — whether the response that asked for the call
// is recorded yet (every few milliseconds, until it is), and the tokens
// spent — reading each transcript only as far as it grew since: what was
// read is kept as the tool_use ids seen and the usage counted. Only whole
// lines are read; a line still being written is read once it ends.
type ClaudeTranscripts struct {
	getenv func(string) string

	mu sync.Mutex
	// paths are each session's transcripts, once found.
	paths map[string][]string
	files map[string]*transcriptRead
	// ids are the ids every transcript read so far holds ("id":"…").
	ids map[string]struct{}
}

// transcriptRead is how far one transcript was read, and what it held.
type transcriptRead struct {
	ino   uint64
	off   int64
	count usageCount
}

// NewClaudeTranscripts reads transcripts under CLAUDE_CONFIG_DIR (default
// ~/.claude) in getenv's environment.
func NewClaudeTranscripts(getenv func(string) string) *ClaudeTranscripts {
	return &ClaudeTranscripts{getenv: getenv, paths: map[string][]string{}, files: map[string]*transcriptRead{}, ids: map[string]struct{}{}}
}

// Recorded says whether a transcript of the sessions holds the model
// response that asked for tool call call (its tool_use id).
func (c *ClaudeTranscripts) Recorded(sessions []string, call string) bool {
	if call == "" || strings.ContainsAny(call, `"\`) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ids[call]; ok {
		return true
	}
	for _, p := range c.transcripts(sessions) {
		if c.readOn(p) != nil {
			continue
		}
		if _, ok := c.ids[call]; ok {
			return true
		}
	}
	return false
}

// Usage adds up the usage the sessions' transcripts record (ClaudeUsage
// of each); ok is false when none was found.
func (c *ClaudeTranscripts) Usage(sessions []string) (u fleet.Usage, ok bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.transcripts(sessions) {
		if err := c.readOn(p); err != nil {
			return u, ok, err
		}
		u.Add(c.files[p].count.usage)
		ok = true
	}
	return u, ok, nil
}

// transcripts are the sessions' transcripts (c.mu held): each session's
// found once, looked for again while it has none.
func (c *ClaudeTranscripts) transcripts(sessions []string) []string {
	dir := claudeConfigDir(c.getenv)
	var out []string
	for _, s := range sessions {
		if len(c.paths[s]) == 0 {
			c.paths[s] = claudeTranscript(dir, s)
		}
		out = append(out, c.paths[s]...)
	}
	return out
}

// readOn reads the transcript at path from where it was last read to its
// last whole line (c.mu held). A transcript replaced or cut shorter is
// read again from its start.
func (c *ClaudeTranscripts) readOn(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	var ino uint64
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = uint64(sys.Ino)
	}
	r := c.files[path]
	if r == nil || r.ino != ino || fi.Size() < r.off {
		r = &transcriptRead{ino: ino}
		c.files[path] = r
	}
	if fi.Size() == r.off {
		return nil
	}
	data, err := io.ReadAll(io.NewSectionReader(f, r.off, fi.Size()-r.off))
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil
	}
	for _, line := range bytes.SplitAfter(data[:end+1], []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		r.count.line(line)
		c.noteIDs(line)
	}
	r.off += int64(end + 1)
	return nil
}

// noteIDs keeps every "id":"…" of a line.
func (c *ClaudeTranscripts) noteIDs(line []byte) {
	const key = `"id":"`
	for {
		i := bytes.Index(line, []byte(key))
		if i < 0 {
			return
		}
		line = line[i+len(key):]
		j := bytes.IndexAny(line, `"\`)
		if j < 0 {
			return
		}
		if line[j] == '"' {
			c.ids[string(line[:j])] = struct{}{}
		}
		line = line[j:]
	}
}
