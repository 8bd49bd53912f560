package client

import (
	"os"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/supercode/fleet"
)

// testdata/codex-rollout.jsonl is a real Codex 0.171.0 rollout, cut to the
// lines read (its calls, outputs and usage records), of a session against
// a scripted model whose three responses each reported 10 input tokens, 3
// of them cached, and 5 output: the first asked for call_a and call_b, the
// second for call_c, the third answered.
func TestCodexUsage(t *testing.T) {
	f, err := os.Open("testdata/codex-rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u, calls, err := CodexUsage(f)
	if err != nil {
		t.Fatal(err)
	}
	if u.Input != 21 || u.Output != 15 || u.CacheRead != 9 || u.CacheWrite != 0 || u.Requests != 3 {
		t.Errorf("usage %+v; the model reported 3 x (7 input, 3 cached, 5 output)", u)
	}
	one := fleet.Usage{Input: 7, Output: 5, CacheRead: 3, Requests: 1}
	want := map[string]int{"call_a": 2, "call_b": 2, "call_c": 1}
	if len(calls) != len(want) {
		t.Fatalf("calls %+v", calls)
	}
	for _, c := range calls {
		if c.Shared != want[c.Call] || c.Usage != one || c.At.IsZero() {
			t.Errorf("%+v; want %s shared by %d with %+v", c, c.Call, want[c.Call], one)
		}
	}
}

// A message written as several lines (one per content block) is one
// response: its calls share its usage once; a user line ends it.
func TestClaudeCalls(t *testing.T) {
	transcript := strings.Join([]string{
		`{"type":"assistant","timestamp":"2026-12-07T10:00:00Z","message":{"id":"msg_a","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":4,"output_tokens":6,"cache_read_input_tokens":2}}}`,
		`{"type":"assistant","timestamp":"2026-12-07T10:00:00Z","message":{"id":"msg_a","content":[{"type":"tool_use","id":"toolu_1"}],"usage":{"input_tokens":4,"output_tokens":6,"cache_read_input_tokens":2}}}`,
		`{"type":"assistant","timestamp":"2026-12-07T10:00:00Z","message":{"id":"msg_a","content":[{"type":"tool_use","id":"toolu_2"}],"usage":{"input_tokens":4,"output_tokens":6,"cache_read_input_tokens":2}}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}}`,
		`{"type":"assistant","timestamp":"2026-12-07T10:00:01Z","message":{"id":"msg_b","content":[{"type":"tool_use","id":"toolu_3"}],"usage":{"input_tokens":9,"output_tokens":3}}}`,
		`{"type":"assistant","timestamp":"2026-12-07T10:00:02Z","message":{"id":"msg_c","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":1,"output_tokens":1}}}`,
	}, "\n")
	calls, err := ClaudeCalls(strings.NewReader(transcript))
	if err != nil {
		t.Fatal(err)
	}
	a, b := fleet.Usage{Input: 4, Output: 6, CacheRead: 2, Requests: 1}, fleet.Usage{Input: 9, Output: 3, Requests: 1}
	want := []fleet.CallUsage{{Call: "toolu_1", Shared: 2, Usage: a}, {Call: "toolu_2", Shared: 2, Usage: a}, {Call: "toolu_3", Shared: 1, Usage: b}}
	if len(calls) != len(want) {
		t.Fatalf("calls %+v", calls)
	}
	for i, c := range calls {
		if c.CallUsage != want[i] {
			t.Errorf("call %d: %+v, want %+v", i, c.CallUsage, want[i])
		}
	}
}
