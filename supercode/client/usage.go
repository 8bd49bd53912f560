package client

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// ClaudeUsage adds up the model tokens a Claude Code transcript records:
// the usage of each assistant message, once per model response (Claude
// Code writes a response with several content blocks as several lines
// carrying the same message and usage, one after another).
func ClaudeUsage(r io.Reader) (fleet.Usage, error) {
	var c usageCount
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			c.line(line)
		}
		if errors.Is(err, io.EOF) {
			return c.usage, nil
		}
		if err != nil {
			return c.usage, err
		}
	}
}

// usageCount is ClaudeUsage's count, a line at a time.
type usageCount struct {
	usage fleet.Usage
	last  string // the message id of the response being read, "" after a user line
}

func (c *usageCount) line(line []byte) {
	var e struct {
		Type    string `json:"type"`
		Message struct {
			ID    string `json:"id"`
			Usage *struct {
				Input      int64 `json:"input_tokens"`
				Output     int64 `json:"output_tokens"`
				CacheRead  int64 `json:"cache_read_input_tokens"`
				CacheWrite int64 `json:"cache_creation_input_tokens"`
			} `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &e) != nil {
		return
	}
	switch {
	case e.Type == "user":
		c.last = ""
	case e.Type == "assistant" && e.Message.Usage != nil && (e.Message.ID == "" || e.Message.ID != c.last):
		m := e.Message.Usage
		c.usage.Add(fleet.Usage{Input: m.Input, Output: m.Output, CacheRead: m.CacheRead, CacheWrite: m.CacheWrite, Requests: 1})
		c.last = e.Message.ID
	}
}

// claudeConfigDir is where Claude Code keeps its state in getenv's
// environment ("" when it cannot be said).
func claudeConfigDir(getenv func(string) string) string {
	if dir := getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return dir
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".claude")
	}
	return ""
}

// ClaudeSessionsUsage adds up the usage of Claude Code sessions by their
// ids, from their transcripts under CLAUDE_CONFIG_DIR (default
// ~/.claude) in getenv's environment; ok is false when no transcript of
// any of them was found.
func ClaudeSessionsUsage(getenv func(string) string, sessions []string) (u fleet.Usage, ok bool, err error) {
	err = readEach(claudeTranscripts(getenv, sessions), func(r io.Reader) error {
		one, err := ClaudeUsage(r)
		if err == nil {
			u.Add(one)
			ok = true
		}
		return err
	})
	return u, ok, err
}

// claudeTranscripts are the transcripts of Claude Code sessions by their
// ids, under CLAUDE_CONFIG_DIR (default ~/.claude) in getenv's
// environment.
func claudeTranscripts(getenv func(string) string, sessions []string) []string {
	dir := claudeConfigDir(getenv)
	var out []string
	for _, s := range sessions {
		out = append(out, claudeTranscript(dir, s)...)
	}
	return out
}

// claudeTranscript is session s's transcript under the configuration
// directory dir (none for an id that is no plain name).
func claudeTranscript(dir, s string) []string {
	if dir == "" || s == "" || strings.ContainsAny(s, `/\*?[`) {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "projects", "*", s+".jsonl"))
	return paths
}

// readEach hands each file to read, in order, stopping at the first
// error.
func readEach(paths []string, read func(io.Reader) error) error {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = read(f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
