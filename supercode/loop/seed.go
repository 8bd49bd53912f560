package loop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The judge's seed is the thread the loop was launched from: what the
// operator and the launching agent decided before implementation. It is
// read once, when the run starts (a --resume keeps it; a new run reads the
// thread as it stands then), and given to every fresh judge session.
//
// Where the thread comes from: --thread FILE (a Claude Code transcript,
// .jsonl, or any text), else — when the loop was started from inside a
// Claude Code session (CLAUDE_CODE_SESSION_ID) — that session's transcript
// under ~/.claude/projects, else nothing.
//
// --seed full gives the dialogue verbatim (user and assistant text, tool
// calls as one-line notes) up to seedHardCap; compact keeps the user's
// turns, the first paragraph of each assistant turn and no tool traffic,
// within seedCap (head and tail); none gives no seed. The default is full
// when it fits in seedCap, else compact. Compaction is deterministic, not a
// model's summary.
const (
	seedCap     = 64 << 10
	seedHardCap = 256 << 10
)

func launchSeed(mode, thread string, getenv func(string) string) (seed, source string, err error) {
	if mode == "none" {
		return "", "", nil
	}
	path := thread
	if path == "" {
		id := strings.TrimSpace(getenv("CLAUDE_CODE_SESSION_ID"))
		if id == "" || strings.ContainsAny(id, "/\\") {
			return "", "", nil
		}
		home := getenv("HOME")
		if home == "" {
			return "", "", nil
		}
		matches, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", id+".jsonl"))
		if len(matches) == 0 {
			return "", "", nil
		}
		path = matches[0]
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("--thread: %w", err)
	}
	var full, compact string
	if strings.HasSuffix(path, ".jsonl") {
		full, compact = transcriptText(data)
	} else {
		full, compact = string(data), string(data)
	}
	switch {
	case mode == "full":
		seed = capText(full, seedHardCap)
	case mode == "compact" || len(full) > seedCap:
		seed = capText(compact, seedCap)
	default:
		seed = full
	}
	return seed, path, nil
}

// transcriptText reads a Claude Code transcript: the dialogue in full, and
// compacted.
func transcriptText(data []byte) (full, compact string) {
	var fb, cb strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			IsMeta  bool   `json:"isMeta"`
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.IsMeta || (ev.Type != "user" && ev.Type != "assistant") {
			continue
		}
		who := "Operator"
		if ev.Type == "assistant" {
			who = "Agent"
		}
		var text string
		var notes []string
		if json.Unmarshal(ev.Message.Content, &text) != nil {
			var blocks []streamBlock
			if json.Unmarshal(ev.Message.Content, &blocks) != nil {
				continue
			}
			var parts []string
			for _, b := range blocks {
				switch b.Type {
				case "text":
					if !strings.HasPrefix(strings.TrimSpace(b.Text), "<system-reminder>") {
						parts = append(parts, b.Text)
					}
				case "tool_use":
					notes = append(notes, fmt.Sprintf("[tool %s %s]", b.Name, firstLine(string(b.Input), 160)))
				}
			}
			text = strings.Join(parts, "\n")
		}
		text = strings.TrimSpace(text)
		if text != "" {
			fmt.Fprintf(&fb, "**%s:** %s\n\n", who, text)
			short := text
			if ev.Type == "assistant" {
				short, _, _ = strings.Cut(text, "\n\n")
			}
			fmt.Fprintf(&cb, "**%s:** %s\n\n", who, short)
		}
		for _, n := range notes {
			fmt.Fprintf(&fb, "%s\n\n", n)
		}
	}
	return fb.String(), cb.String()
}

// capText keeps the first three quarters and the last quarter of n bytes.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n*3/4, n/4
	return string(headCut([]byte(s[:head]))) + "\n\n[… the middle of the thread is left out …]\n\n" + string(tailCut([]byte(s[len(s)-tail:])))
}
