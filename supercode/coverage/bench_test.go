package coverage

import (
	"encoding/json"
	"testing"

	"github.com/laserkit/laserkit/operator"
)

// budget is what the coverage check may add to one hook process: 0.3 ms.
const budget = 300_000.0 // ns

// benchRecord is a session 40 steps in: 6 checks, the last 5 steps ago.
func benchRecord() *Record {
	r := &Record{Agent: "claude", Goal: "add a CSV importer to the shop", Steps: 40}
	for i := 1; i <= 6; i++ {
		r.Checks = append(r.Checks, Check{Step: i*6 - 1, Goal: r.Goal, Progress: "advancing", Distance: json.RawMessage("5"), Reason: "advancing"})
	}
	return r
}

func benchEvent(name string) HookEvent {
	return HookEvent{Name: name, Session: "acc92203-331c-4401-a2c5-2b9201d4879a", Tool: "Bash", Kind: Shell,
		Input:    json.RawMessage(`{"command":"go test ./...","description":"run the tests"}`),
		Response: json.RawMessage(`{"stdout":"ok  \tgithub.com/x/y\t0.2s\n","stderr":"","interrupted":false}`)}
}

// benchMode is one mode coverage runs in, by name.
type benchMode struct {
	name string
	cfg  Config
}

func benchModes() []benchMode {
	return []benchMode{{"default", Default()}, {"reference", ReferenceConfig(func(string) (string, bool) { return "", false })}}
}

// BenchmarkGate is one pre-tool-use decision on a session past its
// threshold (the refusal text is built), in each mode. of-budget is the
// share of the 0.3 ms a hook may spend on coverage.
func BenchmarkGate(b *testing.B) {
	for _, c := range benchModes() {
		b.Run(c.name, func(b *testing.B) {
			in := Input{Event: benchEvent(PreToolUse), Record: benchRecord()}
			var d Decision
			for b.Loop() {
				d = c.cfg.Gate(in)
			}
			if d.Answer != operator.Deny {
				b.Fatalf("%s: %+v", c.name, d)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/budget, "of-budget")
		})
	}
}

// BenchmarkObserve is one post-tool-use of a tool call, in each mode (the
// reference reads the response for failure words).
func BenchmarkObserve(b *testing.B) {
	for _, c := range benchModes() {
		b.Run(c.name, func(b *testing.B) {
			in := Input{Event: benchEvent(PostToolUse), Record: benchRecord()}
			for b.Loop() {
				if o := c.cfg.Observe(in); !o.Changed {
					b.Fatal("not counted")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/budget, "of-budget")
		})
	}
}
