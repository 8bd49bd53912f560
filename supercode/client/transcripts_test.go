package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeTranscriptsReadOn: a run's process asks, call after call,
// whether a session's transcript holds the response that asked for a call
// and what the session spent, while Claude Code appends to it. Each answer
// is what reading the whole transcript as it stands gives (ClaudeUsage;
// the id in the file): an id written before an earlier question about
// another call, a line still being written (not yet), the rest of it, a
// session whose transcript appears later, a transcript replaced by a
// shorter one.
func TestClaudeTranscriptsReadOn(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"CLAUDE_CONFIG_DIR": home}
	c := NewClaudeTranscripts(func(k string) string { return env[k] })
	dir := filepath.Join(home, "projects", "-work-repo")
	path := filepath.Join(dir, "s1.jsonl")
	call := func(msg, id string, in int) string {
		return `{"type":"assistant","message":{"id":"` + msg + `","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":` + strings.Repeat("1", in) + `,"output_tokens":2}}}` + "\n"
	}
	result := func(id string) string {
		return `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"ok"}]}}` + "\n"
	}
	appendTo := func(s string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	// wantUsage: the usage asked of c is ClaudeUsage of the transcript's
	// whole lines as they stand.
	wantUsage := func() {
		t.Helper()
		data, _ := os.ReadFile(path)
		whole := string(data[:strings.LastIndexByte(string(data), '\n')+1])
		want, err := ClaudeUsage(strings.NewReader(whole))
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := c.Usage([]string{"s1"})
		if err != nil || !ok || got != want {
			t.Fatalf("usage %+v, %v, %v; the whole transcript reads %+v", got, ok, err, want)
		}
	}
	if c.Recorded([]string{"s1"}, "toolu_1") {
		t.Fatal("recorded before the session's transcript exists")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(`{"type":"user","message":{"role":"user","content":"go"}}` + "\n" + call("msg_a", "toolu_1", 2) + call("msg_b", "toolu_2", 3))
	if !c.Recorded([]string{"s1"}, "toolu_1") {
		t.Fatal("toolu_1 not recorded once its transcript appeared")
	}
	wantUsage()
	if !c.Recorded([]string{"s1"}, "toolu_2") {
		t.Fatal("toolu_2, written before the question about toolu_1, not recorded")
	}
	line := call("msg_c", "toolu_3", 4)
	half := strings.Index(line, "toolu_3") + 4
	appendTo(result("toolu_1") + line[:half])
	if c.Recorded([]string{"s1"}, "toolu_3") {
		t.Fatal("toolu_3 recorded while its line was half written")
	}
	wantUsage()
	appendTo(line[half:])
	if !c.Recorded([]string{"s1"}, "toolu_3") || c.Recorded([]string{"s1"}, "toolu_4") {
		t.Fatal("toolu_3 not recorded once its line ended, or toolu_4 recorded before it was written")
	}
	wantUsage()
	if c.Recorded([]string{"s1"}, `toolu_3"`) || c.Recorded([]string{"s1"}, "") || c.Recorded([]string{"../s1"}, "toolu_9") {
		t.Fatal("a call id with a quote, an empty one or a session that is a path answered recorded")
	}
	// Replaced by a shorter transcript (another file renamed over it).
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(call("msg_z", "toolu_9", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	wantUsage()
	if !c.Recorded([]string{"s1"}, "toolu_9") {
		t.Fatal("toolu_9 of the replaced transcript not recorded")
	}
}
