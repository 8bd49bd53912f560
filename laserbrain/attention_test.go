package laserbrain

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/laserkit/laserkit/internal/testenv"
)

// The calibration reads, and its bands answer as the file says: 900 s is
// in "5-30 minutes" (123 of 425, 0.2894); at tolerance 0.25 the first band
// past it starts at 300 s; past 8 steps the agent's clock is censored.
func TestAttentionTable(t *testing.T) {
	r := AttentionRisk(900)
	if r.Band == nil || *r.Band != "5-30 minutes" || r.Rate == nil || *r.Rate != 0.2894 || r.N != 425 || r.Drift != 123 || !r.Known {
		t.Errorf("risk(900) = %+v", r)
	}
	if n := NextCheckIn(0, 0.25); n == nil || *n != 300 {
		t.Errorf("next_check_in(0, 0.25) = %v", n)
	}
	if n := NextCheckIn(900, 0.25); n == nil || *n != 0 {
		t.Errorf("next_check_in(900, 0.25) = %v: already past tolerance", n)
	}
	if n := NextCheckIn(0, 0.9); n != nil {
		t.Errorf("next_check_in(0, 0.9) = %v: no band crosses 90%%", *n)
	}
	if a := AgentRisk(9); a.Censored == nil || !*a.Censored || a.Known || a.Rate != nil || a.N != 181 {
		t.Errorf("agent_risk(9) = %+v", a)
	}
}

// Against the reference's own functions (attention.risk, next_check_in,
// agent_risk) over a grid of clocks and tolerances.
func TestAttentionMatchesTheReference(t *testing.T) {
	python := testenv.LookPath(t, "python3")
	ref := testenv.Shared(t, "reference/laserbrain-sdk-0.53.0")
	secs := []float64{0, 1, 59.9, 60, 299, 300, 301, 900, 1799.5, 1800, 5000, -5}
	tols := []float64{0, 0.1, 0.16, 0.25, 0.29, 0.5, 0.7, 1}
	steps := []int{0, 1, 2, 3, 4, 7, 8, 15, 16, 60, 61, -1}
	script := fmt.Sprintf(`
import json
from laserbrain import attention as a
secs, tols, steps = %s, %s, %s
print(json.dumps({"risk": [a.risk(s) for s in secs],
                  "next": [[a.next_check_in(s, t) for t in tols] for s in secs],
                  "agent": [a.agent_risk(n) for n in steps]}))`, jsonOf(secs), jsonOf(tols), jsonOf(steps))
	cmd := exec.Command(python, "-c", script)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+ref)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the reference: %v", err)
	}
	var want struct {
		Risk  []json.RawMessage
		Next  [][]*float64
		Agent []json.RawMessage
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	same := func(what string, w json.RawMessage, g any) {
		var a, b map[string]any
		_ = json.Unmarshal(w, &a)
		gb, _ := json.Marshal(g)
		_ = json.Unmarshal(gb, &b)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: reference %s, ours %s", what, w, gb)
		}
	}
	for i, s := range secs {
		same(fmt.Sprintf("risk(%v)", s), want.Risk[i], AttentionRisk(s))
		for j, tol := range tols {
			g, w := NextCheckIn(s, tol), want.Next[i][j]
			if (g == nil) != (w == nil) || (g != nil && *g != *w) {
				t.Errorf("next_check_in(%v, %v): reference %v, ours %v", s, tol, deref(w), deref(g))
			}
		}
	}
	for i, n := range steps {
		same(fmt.Sprintf("agent_risk(%d)", n), want.Agent[i], AgentRisk(n))
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(string(b), "null", "None")
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}
