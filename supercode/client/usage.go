package client

import (
	"bufio"
	"bytes"
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
	var u fleet.Usage
	br := bufio.NewReaderSize(r, 64<<10)
	last := "" // the message id of the response being read, "" after a user line
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
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
			if json.Unmarshal(line, &e) == nil {
				switch {
				case e.Type == "user":
					last = ""
				case e.Type == "assistant" && e.Message.Usage != nil && (e.Message.ID == "" || e.Message.ID != last):
					m := e.Message.Usage
					u.Add(fleet.Usage{Input: m.Input, Output: m.Output, CacheRead: m.CacheRead, CacheWrite: m.CacheWrite, Requests: 1})
					last = e.Message.ID
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return u, nil
		}
		if err != nil {
			return u, err
		}
	}
}

// ClaudeSessionsRecorded says whether a transcript of the sessions holds
// the model response that asked for tool call call (its tool_use id).
func ClaudeSessionsRecorded(getenv func(string) string, sessions []string, call string) bool {
	dir := claudeConfigDir(getenv)
	if dir == "" || call == "" || strings.ContainsAny(call, `"\`) {
		return false
	}
	needle := []byte(`"id":"` + call + `"`)
	for _, s := range sessions {
		if s == "" || strings.ContainsAny(s, `/\*?[`) {
			continue
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "projects", "*", s+".jsonl"))
		for _, p := range paths {
			if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, needle) {
				return true
			}
		}
	}
	return false
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
	dir := claudeConfigDir(getenv)
	if dir == "" {
		return u, false, nil
	}
	for _, s := range sessions {
		if s == "" || strings.ContainsAny(s, `/\*?[`) {
			continue
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "projects", "*", s+".jsonl"))
		for _, p := range paths {
			f, err := os.Open(p)
			if err != nil {
				return u, ok, err
			}
			one, err := ClaudeUsage(f)
			f.Close()
			if err != nil {
				return u, ok, err
			}
			u.Add(one)
			ok = true
		}
	}
	return u, ok, nil
}
