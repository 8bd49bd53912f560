package client

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// GeminiUsage adds up the model tokens a Gemini CLI chat (its session's
// JSON lines under ~/.gemini/tmp/PROJECT/chats) records: each of the
// model's messages once, as last written (Gemini CLI writes a message
// again as its tool calls complete). Its input counts the cached tokens,
// as the service's does; the thoughts are output, the tool prompts input.
func GeminiUsage(r io.Reader) (fleet.Usage, error) {
	type tokens struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
		Tool     int64 `json:"tool"`
	}
	seen := map[string]tokens{}
	var order []string
	err := eachLine(r, func(line []byte) {
		var e struct {
			ID     string  `json:"id"`
			Type   string  `json:"type"`
			Tokens *tokens `json:"tokens"`
		}
		if json.Unmarshal(line, &e) == nil && e.Type == "gemini" && e.ID != "" && e.Tokens != nil {
			if _, ok := seen[e.ID]; !ok {
				order = append(order, e.ID)
			}
			seen[e.ID] = *e.Tokens
		}
	})
	if err != nil {
		return fleet.Usage{}, err
	}
	var u fleet.Usage
	for _, id := range order {
		t := seen[id]
		u.Add(fleet.Usage{Input: max(0, t.Input-t.Cached) + t.Tool, Output: t.Output + t.Thoughts, CacheRead: t.Cached, Requests: 1})
	}
	return u, nil
}

// GeminiSessionsUsage adds up the usage of Gemini CLI sessions by their
// ids, from their chats under GEMINI_CLI_HOME or HOME (a chat's file
// name holds its session id's first eight characters, and its first line
// the whole id); ok is false when no chat of any of them was found.
func GeminiSessionsUsage(getenv func(string) string, sessions []string) (u fleet.Usage, ok bool, err error) {
	home := getenv("GEMINI_CLI_HOME")
	if home == "" {
		home = getenv("HOME")
	}
	if home == "" {
		return u, false, nil
	}
	for _, s := range sessions {
		if len(s) < 8 || strings.ContainsAny(s, `/\*?[`) {
			continue
		}
		paths, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*-"+s[:8]+".jsonl"))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				return u, ok, err
			}
			first, _, _ := strings.Cut(string(data), "\n")
			var head struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal([]byte(first), &head) != nil || head.SessionID != s {
				continue
			}
			one, err := GeminiUsage(strings.NewReader(string(data)))
			if err != nil {
				return u, ok, err
			}
			u.Add(one)
			ok = true
		}
	}
	return u, ok, nil
}
