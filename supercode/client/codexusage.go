package client

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// CodexUsage adds up the model tokens a Codex rollout (its session's
// JSON lines under CODEX_HOME/sessions) records: each completed model
// response's token_usage_record once. Codex writes a response's tool
// calls (function_call items, with their call ids) before its usage
// record, so calls are what each tool call cost: the usage of the
// response that asked for it.
func CodexUsage(r io.Reader) (u fleet.Usage, calls []Asked, err error) {
	var asked []string // the call ids since the last usage record
	err = eachLine(r, func(line []byte) {
		var e struct {
			Type      string    `json:"type"`
			Timestamp time.Time `json:"timestamp"`
			Payload   struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
				Usage  *struct {
					Input      int64 `json:"input_tokens"`
					Cached     int64 `json:"cached_input_tokens"`
					CacheWrite int64 `json:"cache_write_input_tokens"`
					Output     int64 `json:"output_tokens"`
				} `json:"usage"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &e) == nil {
			switch p := e.Payload; {
			case e.Type == "response_item" && strings.HasSuffix(p.Type, "call") && p.CallID != "":
				asked = append(asked, p.CallID)
			case e.Type == "token_usage_record" && p.Usage != nil:
				// Its input counts the cached tokens, as the service's does.
				one := fleet.Usage{Input: max(0, p.Usage.Input-p.Usage.Cached-p.Usage.CacheWrite), Output: p.Usage.Output,
					CacheRead: p.Usage.Cached, CacheWrite: p.Usage.CacheWrite, Requests: 1}
				u.Add(one)
				calls = append(calls, askedBy(asked, one, e.Timestamp)...)
				asked = asked[:0]
			}
		}
	})
	return u, calls, err
}

// codexHome is Codex's home in getenv's environment ("" when it cannot
// be said).
func codexHome(getenv func(string) string) string { return clientDir(getenv, "CODEX_HOME", ".codex") }

// codexRollouts are the rollout files of Codex sessions by their ids.
func codexRollouts(getenv func(string) string, sessions []string) []string {
	dir := codexHome(getenv)
	if dir == "" {
		return nil
	}
	var out []string
	for _, s := range sessions {
		if s == "" || strings.ContainsAny(s, `/\*?[`) {
			continue
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*", "*", "rollout-*-"+s+".jsonl"))
		out = append(out, paths...)
	}
	return out
}

// CodexSessionsUsage adds up the usage of Codex sessions by their ids,
// from their rollouts; ok is false when no rollout of any of them was
// found.
func CodexSessionsUsage(getenv func(string) string, sessions []string) (u fleet.Usage, ok bool, err error) {
	err = readEach(codexRollouts(getenv, sessions), func(r io.Reader) error {
		one, _, err := CodexUsage(r)
		if err == nil {
			u.Add(one)
			ok = true
		}
		return err
	})
	return u, ok, err
}

// CodexSessionsRecorded says whether a rollout of the sessions holds the
// usage of the response that asked for tool call call.
func CodexSessionsRecorded(getenv func(string) string, sessions []string, call string) bool {
	if call == "" || strings.ContainsAny(call, `"\`) {
		return false
	}
	needle := []byte(`"call_id":"` + call + `"`)
	for _, p := range codexRollouts(getenv, sessions) {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if i := bytes.Index(data, needle); i >= 0 && bytes.Contains(data[i:], []byte(`"type":"token_usage_record"`)) {
			return true
		}
	}
	return false
}
