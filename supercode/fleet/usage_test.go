package fleet

import (
	"testing"
	"time"
)

func TestUSD(t *testing.T) {
	for v, want := range map[float64]string{0.00072: "$0.00072", 1.5: "$1.5", 2: "$2", 0: "$0", 0.0000004: "$0", 12.345678: "$12.345678"} {
		if got := USD(v); got != want {
			t.Errorf("USD(%g) = %q, want %q", v, got, want)
		}
	}
}

// A run's model events add up to its usage, cost included only where the
// client reported one; other events are not counted.
func TestModelUsage(t *testing.T) {
	c := 0.00024
	at := time.Unix(1, 0)
	events := []RunEvent{
		ModelEvent(at, ModelRequest{Client: "claude", Model: "m", Usage: Usage{Input: 10, Output: 5, CostUSD: &c}}),
		{Kind: KindTool, Name: "Bash"},
		ModelEvent(at, ModelRequest{Client: "claude", Model: "m", Usage: Usage{Input: 3, CacheRead: 7, CostUSD: &c}}),
	}
	u, ok := ModelUsage(events)
	if !ok || u.Input != 13 || u.Output != 5 || u.CacheRead != 7 || u.Requests != 2 || u.CostUSD == nil || *u.CostUSD != 2*c {
		t.Errorf("ModelUsage = %+v, %v", u, ok)
	}
	if _, ok := ModelUsage(events[1:2]); ok {
		t.Error("a run without model events has a usage")
	}
	if got, want := u.Text(), "25 tokens (input 13, output 5, cache read 7, cache write 0) over 2 model requests at $0.00048 (the client's own figure)"; got != want {
		t.Errorf("Text = %q\nwant  %q", got, want)
	}
}
