package report

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	ht "github.com/laserkit/laserkit/internal/htmlreport/htmltest"
	"github.com/laserkit/laserkit/operator"
)

// bigFleet is 100 agents × 1,000 checks, 20 collisions and 500 gate
// decisions: the fleet a report must render within its budget.
func bigFleet() *Fleet {
	start := time.Date(2026, 8, 24, 15, 0, 0, 0, time.UTC)
	th, _ := GrammarThresholds()
	f := &Fleet{Scope: "fleet", ID: "bench", Generated: start, Thresholds: th, Journal: Journal{State: JournalVerified, Records: 4000}}
	for i := range 100 {
		f.Agents = append(f.Agents, longAgent(fmt.Sprintf("agent-%03d", i), 1000, start))
	}
	for i := range 20 {
		f.Collisions = append(f.Collisions, Collision{Agents: [2]string{f.Agents[i].Name, f.Agents[i+50].Name}, Overlap: 0.7, FirstSeen: start,
			SharedFiles: []string{"src/a.go", "src/b.go"}, Outcome: Outcome{Kind: "routed", Keep: f.Agents[i].Name, Yield: f.Agents[i+50].Name, Why: "more steps"}})
	}
	for i := range 500 {
		f.Gate = append(f.Gate, GateDecision{At: start, Agent: f.Agents[i%100].Name, Tool: "Bash", Decision: []operator.Answer{operator.Deny, operator.Ask, operator.Allow}[i%3],
			Reason: "irreversible", Labels: []string{fmt.Sprintf("label-%d", i%12)}})
	}
	return f
}

// The page for the big fleet stays under 5 MB and well-formed. (Its time is
// the benchmark's business.)
func TestBigFleetPageSize(t *testing.T) {
	page := Render(bigFleet())
	if len(page) >= 5<<20 {
		t.Errorf("100 agents × 1,000 checks: %d bytes, over 5 MB", len(page))
	}
	root, err := ht.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(root.ByID("drift").All(ht.Attr("data-downsampled", "true"))); n != 100 {
		t.Errorf("%d downsampling notes, want one per agent", n)
	}
	t.Logf("100 agents × 1,000 checks: %d bytes (%.2f MB)", len(page), float64(len(page))/(1<<20))
}

// BenchmarkFleetReport100x1000 renders the big fleet; the baseline in the
// same run is encoding the same view model as JSON, so the figure reads as
// a ratio: how many JSON encodings one HTML report costs.
func BenchmarkFleetReport100x1000(b *testing.B) {
	f := bigFleet()
	b.Run("html", func(b *testing.B) {
		var n int
		for b.Loop() {
			n = len(Render(f))
		}
		b.ReportMetric(float64(n)/(1<<20), "MB")
	})
	b.Run("baseline-json", func(b *testing.B) {
		var n int
		for b.Loop() {
			data, err := json.Marshal(f)
			if err != nil {
				b.Fatal(err)
			}
			n = len(data)
		}
		b.ReportMetric(float64(n)/(1<<20), "MB")
	})
}
