package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Claude Code transcript as the CLI writes it (one JSON object a line).
const transcript = `{"type":"summary","summary":"design"}
{"type":"user","message":{"role":"user","content":"Grill me about the parser, then stop before implementation."}}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Which input format?\n\nI ask because the plan is silent."},{"type":"tool_use","name":"Read","input":{"file_path":"PLAN.md"}}]}}
{"type":"user","isMeta":true,"message":{"role":"user","content":"<command-name>/clear</command-name>"}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"plan text"},{"type":"text","text":"JSON only; no YAML, ever."}]}}
`

func TestTranscriptText(t *testing.T) {
	full, compact := transcriptText([]byte(transcript))
	want := "**Operator:** Grill me about the parser, then stop before implementation.\n\n" +
		"**Agent:** Which input format?\n\nI ask because the plan is silent.\n\n" +
		"[tool Read {\"file_path\":\"PLAN.md\"}]\n\n" +
		"**Operator:** JSON only; no YAML, ever.\n\n"
	if full != want {
		t.Errorf("full:\n%s\nwant:\n%s", full, want)
	}
	if strings.Contains(compact, "[tool") || strings.Contains(compact, "I ask because") || !strings.Contains(compact, "JSON only; no YAML, ever.") {
		t.Errorf("compact:\n%s", compact)
	}
}

// Launched from inside a Claude Code session, the seed is that session's
// transcript; none gives none; a long thread is compacted by default.
func TestLaunchSeed(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, ".claude", "projects", "-work-repo", "3f0c6a8e-1b2c-4d5e-8f90-a1b2c3d4e5f6.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "CLAUDE_CODE_SESSION_ID": "3f0c6a8e-1b2c-4d5e-8f90-a1b2c3d4e5f6"}
	getenv := func(k string) string { return env[k] }
	seed, source, err := launchSeed("", "", getenv)
	if err != nil || source != p || !strings.Contains(seed, "JSON only; no YAML, ever.") {
		t.Fatalf("seed %q from %q: %v", seed, source, err)
	}
	if seed, _, _ := launchSeed("none", "", getenv); seed != "" {
		t.Fatal("--seed none gave a seed")
	}
	if seed, _, _ := launchSeed("", "", func(string) string { return "" }); seed != "" {
		t.Fatal("a seed from nowhere")
	}
	long := filepath.Join(t.TempDir(), "thread.md")
	if err := os.WriteFile(long, []byte(strings.Repeat("decision. ", seedCap)), 0o644); err != nil {
		t.Fatal(err)
	}
	seed, _, err = launchSeed("", long, getenv)
	if err != nil || len(seed) > seedCap+100 || !strings.Contains(seed, "the middle of the thread is left out") {
		t.Fatalf("a long thread: %d bytes, %v", len(seed), err)
	}
	if _, _, err := launchSeed("", filepath.Join(t.TempDir(), "nope.md"), getenv); err == nil {
		t.Fatal("a missing --thread was accepted")
	}
}
