package client

import (
	"strings"
	"testing"
)

// A response written as several lines (one per content block) counts
// once; the same message id after a user line is a new response; lines
// without usage, and other kinds, count nothing.
func TestClaudeUsage(t *testing.T) {
	transcript := strings.Join([]string{
		`{"type":"user","message":{"role":"user","content":"go"}}`,
		`{"type":"assistant","message":{"id":"msg_a","usage":{"input_tokens":10,"output_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":5}}}`,
		`{"type":"assistant","message":{"id":"msg_a","usage":{"input_tokens":10,"output_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":5}}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result"}]}}`,
		`{"type":"assistant","message":{"id":"msg_a","usage":{"input_tokens":3,"output_tokens":2}}}`,
		`{"type":"summary","summary":"x"}`,
		`not json`,
		`{"type":"assistant","message":{"id":"msg_b"}}`,
	}, "\n")
	u, err := ClaudeUsage(strings.NewReader(transcript))
	if err != nil {
		t.Fatal(err)
	}
	if u.Input != 13 || u.Output != 9 || u.CacheRead != 100 || u.CacheWrite != 5 || u.Requests != 2 || u.Total() != 127 {
		t.Fatalf("usage %+v", u)
	}
}
