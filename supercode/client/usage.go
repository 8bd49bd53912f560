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
	err := eachLine(r, c.line)
	return c.usage, err
}

// eachLine calls fn with each line r holds (the last one may lack its line
// feed), up to the end of r or the first error reading it.
func eachLine(r io.Reader, fn func(line []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			fn(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// MessagesUsage is the usage object of an Anthropic Messages API
// response: what one model response used, as the API answers it and
// Claude Code records it (in its transcripts and its stream-json result).
type MessagesUsage struct {
	Input      int64 `json:"input_tokens"`
	Output     int64 `json:"output_tokens"`
	CacheRead  int64 `json:"cache_read_input_tokens"`
	CacheWrite int64 `json:"cache_creation_input_tokens"`
}

// Usage is m as laserkit counts tokens, one request.
func (m *MessagesUsage) Usage() fleet.Usage {
	return fleet.Usage{Input: m.Input, Output: m.Output, CacheRead: m.CacheRead, CacheWrite: m.CacheWrite, Requests: 1}
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
			ID    string         `json:"id"`
			Usage *MessagesUsage `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &e) != nil {
		return
	}
	switch {
	case e.Type == "user":
		c.last = ""
	case e.Type == "assistant" && e.Message.Usage != nil && (e.Message.ID == "" || e.Message.ID != c.last):
		c.usage.Add(e.Message.Usage.Usage())
		c.last = e.Message.ID
	}
}

// claudeConfigDir is where Claude Code keeps its state in getenv's
// environment ("" when it cannot be said).
func claudeConfigDir(getenv func(string) string) string {
	return clientDir(getenv, "CLAUDE_CONFIG_DIR", ".claude")
}

// clientDir is where a client keeps its state in getenv's environment:
// env's value, else dot in HOME ("" when neither is set).
func clientDir(getenv func(string) string, env, dot string) string {
	if dir := getenv(env); dir != "" {
		return dir
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, dot)
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
