package agentrun

import (
	"encoding/json"
	"testing"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// GateResult is the one seam from the gate's decision to what a run
// stores: each answer is stored as exactly its word, and read back as
// the same answer.
func TestGateResultStoresTheAnswersWord(t *testing.T) {
	for i, a := range []operator.Answer{operator.Allow, operator.Ask, operator.Deny} {
		word := []string{"allow", "ask", "deny"}[i]
		b := GateResult(operator.Decision{Action: a, Rule: operator.RuleExecuted, Presence: operator.Attended, Target: "git push --force"})
		var raw map[string]any
		if err := json.Unmarshal(b, &raw); err != nil || raw["decision"] != word || raw["presence"] != "attended" {
			t.Errorf("%v is stored as %s (%v), want decision %q", a, b, err, word)
		}
		if res, ok := fleet.ReadGateResult(b); !ok || res.Decision != a {
			t.Errorf("%s reads back as %+v, %v; want %v", b, res, ok, a)
		}
	}
}
