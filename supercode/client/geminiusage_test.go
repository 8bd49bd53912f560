package client

import (
	"strings"
	"testing"
)

// A message Gemini CLI wrote twice (again with its tool calls) counts
// once, as last written; its input holds the cached tokens, which are
// counted apart; thoughts are output, tool prompts input. g1's lines are
// as a real Gemini CLI 0.61.0 chat held them for a scripted model whose
// answers each reported 10 prompt tokens, 3 of them cached, and 5 out;
// g2's thoughts and tool prompts are set here to show where they count.
func TestGeminiUsage(t *testing.T) {
	chat := strings.Join([]string{
		`{"sessionId":"b1065968-b6c3-4928-a883-4c8ec7da028a","kind":"main"}`,
		`{"id":"u1","type":"user","content":[{"text":"run it"}]}`,
		`{"id":"g1","type":"gemini","content":"","tokens":{"input":10,"output":5,"cached":3,"thoughts":0,"tool":0,"total":15}}`,
		`{"$set":{"lastUpdated":"2026-12-07T20:37:04.276Z"}}`,
		`{"id":"g1","type":"gemini","content":"","tokens":{"input":10,"output":5,"cached":3,"thoughts":0,"tool":0,"total":15},"toolCalls":[{"id":"x"}]}`,
		`{"id":"g2","type":"gemini","content":"done","tokens":{"input":10,"output":5,"cached":3,"thoughts":2,"tool":1,"total":18}}`,
	}, "\n")
	u, err := GeminiUsage(strings.NewReader(chat))
	if err != nil {
		t.Fatal(err)
	}
	if u.Input != 15 || u.Output != 12 || u.CacheRead != 6 || u.Requests != 2 {
		t.Errorf("usage %+v", u)
	}
}
