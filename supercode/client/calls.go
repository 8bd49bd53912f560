package client

import (
	"encoding/json"
	"io"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// Asked is what one tool call cost, as the client's own records hold it:
// the usage of the model response that asked for it, made at At.
type Asked struct {
	At time.Time
	fleet.CallUsage
}

// askedBy is the calls one response asked for, each with the response's
// usage, shared among them all.
func askedBy(calls []string, u fleet.Usage, at time.Time) []Asked {
	out := make([]Asked, 0, len(calls))
	for _, id := range calls {
		out = append(out, Asked{At: at, CallUsage: fleet.CallUsage{Call: id, Shared: len(calls), Usage: u}})
	}
	return out
}

// ClaudeCalls reads what each tool call of a Claude Code transcript cost:
// the usage of the assistant message whose tool_use blocks asked for it
// (Claude Code writes a message of several blocks as several lines, each
// with the message's id and usage).
func ClaudeCalls(r io.Reader) ([]Asked, error) {
	var out []Asked
	var cur struct {
		id    string
		at    time.Time
		u     fleet.Usage
		calls []string
	}
	flush := func() {
		out = append(out, askedBy(cur.calls, cur.u, cur.at)...)
		cur.id, cur.calls = "", nil
	}
	err := eachLine(r, func(line []byte) {
		var e struct {
			Type      string    `json:"type"`
			Timestamp time.Time `json:"timestamp"`
			Message   struct {
				ID      string `json:"id"`
				Content []struct {
					Type string `json:"type"`
					ID   string `json:"id"`
				} `json:"content"`
				Usage *MessagesUsage `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) == nil {
			switch {
			case e.Type == "user":
				flush()
			case e.Type == "assistant" && e.Message.Usage != nil:
				if e.Message.ID == "" || e.Message.ID != cur.id {
					flush()
					cur.id, cur.at, cur.u = e.Message.ID, e.Timestamp, e.Message.Usage.Usage()
				}
				for _, b := range e.Message.Content {
					if b.Type == "tool_use" && b.ID != "" {
						cur.calls = append(cur.calls, b.ID)
					}
				}
			}
		}
	})
	if err != nil {
		return out, err
	}
	flush()
	return out, nil
}

// ClaudeSessionsCalls reads what each tool call of Claude Code sessions
// cost, from their transcripts (as ClaudeSessionsUsage finds them).
func ClaudeSessionsCalls(getenv func(string) string, sessions []string) ([]Asked, error) {
	var out []Asked
	err := readEach(claudeTranscripts(getenv, sessions), func(r io.Reader) error {
		one, err := ClaudeCalls(r)
		if err == nil {
			out = append(out, one...)
		}
		return err
	})
	return out, err
}

// CodexSessionsCalls reads what each tool call of Codex sessions cost,
// from their rollouts.
func CodexSessionsCalls(getenv func(string) string, sessions []string) ([]Asked, error) {
	var out []Asked
	err := readEach(codexRollouts(getenv, sessions), func(r io.Reader) error {
		_, one, err := CodexUsage(r)
		if err == nil {
			out = append(out, one...)
		}
		return err
	})
	return out, err
}
